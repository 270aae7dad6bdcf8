"""Who may write what on the fake Hub, and pull requests: the review flow of a shared dataset.

`FakeHub` accepts any bearer token as its own user (who may write everything), unless the
token was registered with `hub.add_user(name, token)`: such a user may write only repos in
their own namespace (and those granted with `writes=`). Anyone signed in may still open a pull
request (`create_commit(..., create_pr=True)`): the commit goes to `refs/pr/N`, `main` does not
move, and the PR is listed by `GET /api/{t}/{id}/discussions` (what `get_repo_discussions`
reads) until `hub.merge_pr(...)` merges it into `main` or `hub.close_pr(...)` closes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class PullRequest:
    """One pull request: its number, who opened it, its commit and its base commit."""

    num: int
    title: str
    author: str
    oid: str
    base: str
    created_at: str
    status: str = "open"  # open, merged, closed

    def discussion(self, repo_id: str, repo_type: str) -> dict[str, Any]:
        """The item `get_repo_discussions` reads."""
        return {"num": self.num, "title": self.title, "status": self.status,
                "isPullRequest": True, "author": {"name": self.author},
                "createdAt": self.created_at, "pinned": False, "numComments": 1,
                "topReactions": [], "repo": {"name": repo_id, "type": repo_type}}


def may_write(user: str, grants: set[str], repo_id: str) -> bool:
    """A registered user writes their own namespace and what they were granted."""
    return repo_id.split("/")[0] == user or repo_id in grants


def merged_files(main: dict[str, bytes], base: dict[str, bytes],
                 pr: dict[str, bytes]) -> dict[str, bytes]:
    """`main` with what the PR changed relative to its base (added or modified files)."""
    files = dict(main)
    files.update({path: data for path, data in pr.items() if base.get(path) != data})
    return files


def discussions_page(pulls: list[PullRequest], repo_id: str, repo_type: str,
                     status: str | None) -> dict[str, Any]:
    """`GET .../discussions?type=pull_request&status=...` as one page."""
    chosen = [p for p in pulls if status in (None, "all") or p.status == status]
    return {"discussions": [p.discussion(repo_id, repo_type) for p in chosen],
            "count": len(chosen), "start": 0,
            "numClosedDiscussions": sum(p.status != "open" for p in pulls)}
