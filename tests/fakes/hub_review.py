"""Who may write what on the fake Hub, and pull requests: the review flow of a shared dataset.

`FakeHub` accepts any bearer token as its own user (who may write everything), unless the
token was registered with `hub.add_user(name, token)`: such a user may write only repos in
their own namespace (and those granted with `writes=`). Anyone signed in may still open a pull
request (`create_commit(..., create_pr=True)`): the commit goes to `refs/pr/N`, `main` does not
move (its author, or a writer, may push more commits to `refs/pr/N`), and the PR is listed by
`GET /api/{t}/{id}/discussions` (what `get_repo_discussions` reads) until `hub.merge_pr(...)`
(or the client's `merge_pull_request`) merges it into `main`, or `hub.close_pr(...)` (or the
client's `change_discussion_status`) closes it. Comments (`comment_discussion`) are kept on the
pull request (`pr.comments`, each `{author, text}`) and read back by `get_discussion_details`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
    comments: list[dict[str, str]] = field(default_factory=list)

    def discussion(self, repo_id: str, repo_type: str) -> dict[str, Any]:
        """The item `get_repo_discussions` reads."""
        return {"num": self.num, "title": self.title, "status": self.status,
                "isPullRequest": True, "author": {"name": self.author},
                "createdAt": self.created_at, "pinned": False,
                "numComments": 1 + len(self.comments), "topReactions": [],
                "repo": {"name": repo_id, "type": repo_type}}


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


def comment_event(pr: PullRequest, index: int) -> dict[str, Any]:
    """Comment ``index`` of ``pr`` as the Hub's event (what `deserialize_event` reads)."""
    comment = pr.comments[index]
    return {"id": f"{pr.num}-{index}", "type": "comment", "createdAt": comment["at"],
            "author": {"name": comment["author"]},
            "data": {"edited": False, "hidden": False, "latest": {"raw": comment["text"]}}}


def add_comment(pr: PullRequest, author: str, body: dict[str, Any], now: str) -> dict[str, Any]:
    """`POST .../discussions/{num}/comment` with `{"comment": text}`: the new message."""
    text = str(body.get("comment") or "").strip()
    pr.comments.append({"author": author, "text": text, "at": now})
    return {"newMessage": comment_event(pr, len(pr.comments) - 1)}


def discussion_details(pr: PullRequest, repo_id: str, repo_type: str) -> dict[str, Any]:
    """`GET .../discussions/{num}`: the pull request and its comments as events."""
    return {**pr.discussion(repo_id, repo_type),
            "events": [comment_event(pr, i) for i in range(len(pr.comments))],
            "changes": {"base": "refs/heads/main"}, "filesWithConflicts": [], "diff": ""}


def pull_request_ref(repo: Any, revision: str) -> PullRequest | None:
    """The open pull request whose `refs/pr/N` is `revision` (None: not one)."""
    if not revision.startswith("refs/pr/") or not revision[8:].isdigit():
        return None
    pr = repo.pulls.get(int(revision[8:]))
    return pr if pr is not None and pr.status == "open" else None


def change_status(handler: Any, repo: Any, pr: PullRequest, author: str,
                  body: dict[str, Any], now: str) -> dict[str, Any]:
    """`POST .../discussions/{num}/status` `{status, comment?}`: by its author or a writer."""
    from .hub_server import HubError

    if author != pr.author:
        handler._require_write(repo.id)
    status = str(body.get("status") or "")
    if status not in ("open", "closed") or pr.status == "merged":
        raise HubError(400, f"Cannot change pull request #{pr.num} to {status!r}")
    pr.status = status
    if body.get("comment"):
        add_comment(pr, author, body, now)
    return {"newStatus": {"id": f"{pr.num}-status-{len(pr.comments)}", "type": "status-change",
                          "createdAt": now, "author": {"name": author},
                          "data": {"status": status}}}


def discussion_route(handler: Any, repo: Any, method: str, num: int,
                     rest: list[str]) -> dict[str, Any] | None:
    """`/api/{t}/{id}/discussions/{num}[/comment|/merge|/status]` for a pull request (None: no
    such route). Commenting needs a token; merging needs write access to the repo; closing is
    for its author or a writer."""
    from .hub_server import HubError, now_iso

    pr = repo.pulls.get(num)
    if pr is None:
        raise HubError(404, f"Discussion #{num} not found")
    if method == "GET" and not rest:
        return discussion_details(pr, repo.id, repo.repo_type)
    if method != "POST" or rest not in (["comment"], ["merge"], ["status"]):
        return None
    handler._require_auth()
    author, body = handler.hub.user_of(handler._bearer())[0], handler._json()
    if rest == ["comment"]:
        return add_comment(pr, author, body, now_iso())
    if rest == ["status"]:
        return change_status(handler, repo, pr, author, body, now_iso())
    handler._require_write(repo.id)
    if pr.status != "open":
        raise HubError(400, f"Pull request #{num} is {pr.status}")
    handler.hub.merge_pr(repo.id, num, repo.repo_type)
    if body.get("comment"):
        add_comment(pr, author, body, now_iso())
    return {}
