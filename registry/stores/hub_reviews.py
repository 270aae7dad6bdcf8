"""The results dataset's pull requests on the Hub, as its reviewer reads and answers them.

A mixin of `HubResults` (kept apart so `hub_results.py` keeps to runs and records): list the
open pull requests and the commit each stands at, what one changes (`submissions.py`: three
file listings and two bounded histories, each kept by commit, `listings.py`: a commit listed
once is not asked again), the bytes of a file at that commit, the thread with
its authors, and the two answers: a comment, or the admission of exactly the files the
reviewer replayed (committed to `main` by the reviewer, then the pull request closed: the Hub's
own merge takes no commit to merge, so it could apply a commit pushed after the replay).
Records written by the reviewer go in one commit per call (`append_records`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from registry.errors import HubskillsError
from registry.hub import EntryNotFound, RepoNotFound, user_errors, with_retry
from registry.stores.records import Record, record_file
from registry.stores.submissions import Submission, changes_of, merge_base

if TYPE_CHECKING:
    from registry.hub import HubClient, PullRequest, RemoteFile
    from registry.hub.discussions import Comment
    from registry.stores.listings import CommitListings

HISTORY = 1000  # commits read back, each side, to find where a pull request branched


class HubReviews:
    """Pull requests on the results dataset (see the module docstring)."""

    client: HubClient
    listings: CommitListings
    repo: Callable[[], str]
    producer: Callable[[], str]
    _download: Callable[[str, str | None], Path]
    _verifiers: tuple[str, ...]
    _me: str | None

    def open_pull_requests(self) -> list[PullRequest]:
        """The dataset's open pull requests, oldest first ([] when it does not exist)."""
        with user_errors():
            try:
                return self.client.open_pull_requests(self.repo(), repo_type="dataset")
            except RepoNotFound:
                return []

    def pull_head(self, pr: PullRequest) -> str:
        """The commit pull request ``pr`` stands at now."""
        with user_errors():
            return self.client.repo_info(self.repo(), pr.revision, repo_type="dataset").sha

    def submission(self, pr: PullRequest, head: str) -> Submission:
        """What ``pr`` changes at commit ``head``, relative to where it branched and `main`."""
        repo = self.repo()
        with user_errors():
            main = self.client.repo_info(repo, repo_type="dataset").sha
            base = merge_base(self.listings.history(repo, head, limit=HISTORY),
                              self.listings.history(repo, main, limit=HISTORY))
            on_main = self._listing(repo, main)
            if base is None:
                return Submission(pr, head, on_main=frozenset(f.path for f in on_main),
                                  branched=False)
            changes = changes_of(self._listing(repo, head), self._listing(repo, base), on_main)
            return Submission(pr, head, changes, frozenset(f.path for f in on_main))

    def _listing(self, repo: str, revision: str) -> list[RemoteFile]:
        try:
            return self.listings.tree(repo, None, revision)
        except EntryNotFound:
            return []

    def read_at(self, path: str, revision: str) -> bytes:
        """The bytes of ``path`` at commit ``revision`` (through the HF cache)."""
        with user_errors():
            return self._download(path, revision).read_bytes()

    def comments(self, num: int) -> list[Comment]:
        """The comments on pull request ``num``, each with its author as the Hub says."""
        with user_errors():
            return self.client.comments(self.repo(), num, repo_type="dataset")

    def comment(self, num: int, text: str) -> None:
        """Comment ``text`` on pull request ``num``."""
        with user_errors():
            self.client.comment(self.repo(), num, text, repo_type="dataset")

    def admit(self, num: int, files: Mapping[str, bytes]) -> str:
        """Commit exactly ``files`` to `main`: the run files replayed from pull request
        ``num``, as they were replayed; returns the commit."""
        repo = self.repo()
        with user_errors():
            return with_retry(lambda: self.client.commit(
                repo, dict(files), repo_type="dataset",
                message=f"Admit pull request #{num}: {len(files)} replayed run file(s)"))

    def close(self, num: int, comment: str) -> None:
        """Close pull request ``num`` without merging it, saying ``comment``."""
        with user_errors():
            self.client.close_pull_request(self.repo(), num, comment=comment,
                                           repo_type="dataset")

    def append_records(self, records: list[Record], message: str) -> list[str]:
        """Commit ``records`` as new files, all in one commit saying ``message``; their
        paths."""
        if not records:
            return []
        files = dict(record_file(record) for record in records)
        repo = self.repo()
        with user_errors():
            with_retry(lambda: self.client.commit(repo, files, repo_type="dataset",
                                                  message=message))
        return list(files)

    def verifiers(self) -> frozenset[str]:
        """Who writes records that count: the dataset's owner (its namespace), the configured
        verifiers and this token's user (when there is one)."""
        if self._me is None:
            try:
                self._me = self.producer()
            except HubskillsError:  # no token, or offline: records are read as anyone's
                pass
        return frozenset({self.repo().split("/")[0], *self._verifiers, self._me or ""} - {""})
