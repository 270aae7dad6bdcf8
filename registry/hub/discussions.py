"""A pull request's thread on the Hub: read its comments, post one, merge it.

A mixin of `HubClient` (kept apart so `client.py` stays one screenful per concern); every call
goes through the client's one error translator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from huggingface_hub import HfApi

T = TypeVar("T")


class Discussions:
    """Comments and merges on a repo's pull requests (see the module docstring)."""

    api: HfApi
    _call: Callable[..., Any]

    def comment(self, repo_id: str, num: int, text: str, *, repo_type: str = "model") -> None:
        """Post ``text`` (markdown) as a comment on discussion or pull request ``num``."""
        self._call(repo_id, lambda: self.api.comment_discussion(
            repo_id, num, text, repo_type=repo_type), repo_type=repo_type)

    def comments(self, repo_id: str, num: int, *, repo_type: str = "model") -> list[str]:
        """The raw markdown of every comment on discussion or pull request ``num``, oldest
        first."""
        from huggingface_hub.community import DiscussionComment

        details = self._call(repo_id, lambda: self.api.get_discussion_details(
            repo_id, num, repo_type=repo_type), repo_type=repo_type)
        return [e.content for e in details.events if isinstance(e, DiscussionComment)]

    def merge_pull_request(self, repo_id: str, num: int, *, repo_type: str = "model",
                           comment: str | None = None) -> None:
        """Merge pull request ``num`` into `main` (the token must be allowed to write the repo)."""
        self._call(repo_id, lambda: self.api.merge_pull_request(
            repo_id, num, comment=comment, repo_type=repo_type), repo_type=repo_type)
