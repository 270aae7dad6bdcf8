"""A pull request's thread on the Hub: read its comments (with their authors), post one, close
it; and a revision's commit history, read only as far as needed.

A mixin of `HubClient` (kept apart so `client.py` stays one screenful per concern); every call
goes through the client's one error translator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

if TYPE_CHECKING:
    from huggingface_hub import HfApi

T = TypeVar("T")


class Comment(NamedTuple):
    """One comment of a thread: who wrote it (as the Hub says) and its raw markdown."""

    author: str
    text: str


class Discussions:
    """Comments, closing and history for a repo's pull requests (see the module docstring)."""

    api: HfApi
    endpoint: str
    token: str | None
    _call: Callable[..., Any]

    def comment(self, repo_id: str, num: int, text: str, *, repo_type: str = "model") -> None:
        """Post ``text`` (markdown) as a comment on discussion or pull request ``num``."""
        self._call(repo_id, lambda: self.api.comment_discussion(
            repo_id, num, text, repo_type=repo_type), repo_type=repo_type)

    def comments(self, repo_id: str, num: int, *, repo_type: str = "model") -> list[Comment]:
        """Every comment on discussion or pull request ``num``, oldest first, with its author."""
        from huggingface_hub.community import DiscussionComment

        details = self._call(repo_id, lambda: self.api.get_discussion_details(
            repo_id, num, repo_type=repo_type), repo_type=repo_type)
        return [Comment(str(e.author), e.content) for e in details.events
                if isinstance(e, DiscussionComment)]

    def close_pull_request(self, repo_id: str, num: int, *, comment: str,
                           repo_type: str = "model") -> None:
        """Close pull request ``num`` without merging it, saying ``comment``."""
        self._call(repo_id, lambda: self.api.change_discussion_status(
            repo_id, num, "closed", comment=comment, repo_type=repo_type), repo_type=repo_type)

    def history(self, repo_id: str, revision: str, *, limit: int,
                repo_type: str = "model") -> list[str]:
        """The ids of ``revision``'s commits, newest first: at most ``limit`` of them (pages
        past it are never asked for)."""
        from urllib.parse import quote

        from huggingface_hub.utils import build_hf_headers, paginate

        def read() -> list[str]:
            found: list[str] = []
            pages = paginate(f"{self.endpoint}/api/{repo_type}s/{repo_id}/commits/"
                             f"{quote(revision, safe='')}", params={},
                             headers=build_hf_headers(token=self.token,
                                                      library_name="hubskills"))
            for item in pages:
                found.append(str(item["id"]))
                if len(found) >= limit:
                    break
            return found

        return self._call(repo_id, read, repo_type=repo_type, revision=revision)
