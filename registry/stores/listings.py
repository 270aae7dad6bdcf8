"""Listings of the results dataset at a commit, kept: what a commit holds never changes.

The pending view, the Space's reviewer and the records' reader list the same commits of the
results dataset again and again (`main` at its head, a pull request's head and the commit it
branched from), each listing a round trip that the Hub answers from scratch and that the
Space's process pays for while it serves visitors. A commit's files and history are fixed by
its sha, so a listing asked for by a commit's sha is kept (the last `KEPT` of them, per store)
and given again without asking; a listing of a name that moves (`main`, `refs/pr/N`) is always
asked. A folder's listing is taken from the whole commit's listing when that is kept (the same
files, as the Hub lists a folder recursively), and a folder the commit lacks is kept as lacking
(`EntryNotFound` again, e.g. `verifications/` before the first record). So whatever is decided
from a kept listing is decided on exactly the commit it names, as it would be from a new one.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from registry.hub import EntryNotFound

if TYPE_CHECKING:
    from registry.hub import HubClient, RemoteFile

COMMIT = re.compile(r"[0-9a-f]{40}")  # a commit's sha, as the Hub names one
KEPT = 32  # listings kept per store (a whole listing of 10,000 runs is about 3 MB)


class CommitListings:
    """Tree listings and histories of one client's repos, kept by commit (module docstring);
    thread-safe."""

    def __init__(self, client: HubClient, repo_type: str = "dataset") -> None:
        self.client, self.repo_type = client, repo_type
        self._kept: OrderedDict[tuple[Any, ...], tuple[Any, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def tree(self, repo: str, path: str | None, revision: str) -> list[RemoteFile]:
        """The files under ``path`` (None: all) at ``revision``, as `HubClient.tree` lists
        them (and raises)."""
        key = ("tree", repo, revision, path)
        if not COMMIT.fullmatch(revision):
            return self.client.tree(repo, path, revision, repo_type=self.repo_type)
        found = self._get(key)
        if found is None and path is not None:
            found = self._inside(self._get(("tree", repo, revision, None)), path)
        if found is None:
            try:
                found = self._put(key, self.client.tree(repo, path, revision,
                                                        repo_type=self.repo_type))
            except EntryNotFound as err:  # the commit has no such folder, and never will
                self._put(key, [err])
                raise
        if found and isinstance(found[0], EntryNotFound):
            was = found[0]
            raise EntryNotFound(was.message, endpoint=was.endpoint, repo_id=was.repo_id,
                                repo_type=was.repo_type, revision=was.revision,
                                status=was.status)
        return list(found)

    def history(self, repo: str, revision: str, *, limit: int) -> list[str]:
        """``revision``'s commits, newest first, at most ``limit`` (`HubClient.history`)."""
        key = ("history", repo, revision, limit)
        if not COMMIT.fullmatch(revision):
            return self.client.history(repo, revision, limit=limit, repo_type=self.repo_type)
        found = self._get(key)
        if found is None:
            found = self._put(key, self.client.history(repo, revision, limit=limit,
                                                       repo_type=self.repo_type))
        return list(found)

    @staticmethod
    def _inside(whole: tuple[Any, ...] | None, path: str) -> tuple[Any, ...] | None:
        """The files of a whole listing under folder ``path`` (None: no whole listing, or
        nothing under ``path``, which the Hub answers with an error: asked then)."""
        prefix = path.strip("/") + "/"
        found = tuple(f for f in whole or () if f.path.startswith(prefix))
        return found or None

    def _get(self, key: tuple[Any, ...]) -> tuple[Any, ...] | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def _put(self, key: tuple[Any, ...], listed: list[Any]) -> tuple[Any, ...]:
        kept = tuple(listed)
        with self._lock:
            self._kept[key] = kept
            self._kept.move_to_end(key)
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        return kept
