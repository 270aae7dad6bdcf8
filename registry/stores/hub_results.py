"""`HubResults`: the eval results dataset of a `HubStore`, on the Hub.

One dataset repo (`HUBSKILLS_RESULTS_REPO`, else `<namespace or your user>/hubskills-evals`)
holds one immutable JSONL file per run under `data/evals/YYYY-MM/`, added by a commit without a
parent (appends never conflict) with bounded retries; its card declares the `evals` split, so
`datasets.load_dataset(repo, split="evals")` returns every row. Reads download each file once
into the HF cache; the frame parses only files it has not seen (see `frame.py`). Verification
records are files beside the runs (`records.py`). What `ResultsDataset` declares raises user
errors (`user_errors`); the helpers the store uses raise the client's typed ones.

Whose numbers: a token that may read the dataset but not write it (someone else's leaderboard)
proposes its run as a pull request instead (`create_pr=True`, with that same token: never
another); the dataset's owner merges it. Merged files are the dataset; files only in open pull
requests are *pending* submissions (`pending`, `pending_frame`), shown apart and marked
unreviewed, until the owner admits them (`hub_reviews.py`, after the one gate in
`registry.verify.admission`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from registry.errors import HubskillsError
from registry.hub import (
    AuthFailed,
    EntryNotFound,
    HubClient,
    PullRequest,
    RemoteFile,
    RepoNotFound,
    RevisionNotFound,
    user_errors,
    with_retry,
)
from registry.results.runs import ResultRow, RunManifest, iter_rows
from registry.scan import check_relpath
from registry.stores.base import Appended
from registry.stores.dataset import (
    DEFAULT_RESULTS_NAME,
    RESULTS_DIR,
    card_update,
    matches_skill,
    run_file,
)
from registry.stores.files import CARD_FILE
from registry.stores.hub_reviews import HubReviews
from registry.stores.listings import CommitListings
from registry.stores.records import (
    RECORDS_DIR,
    Record,
    RunFile,
    parse_records,
    record_file,
    rows_hash,
    run_id_of,
)
from registry.stores.summary import card_summary

if TYPE_CHECKING:
    import pandas as pd

    from registry.results.leaderboard_badges import Badge

log = logging.getLogger(__name__)
DOWNLOADS = 8  # results files downloaded at once (huggingface_hub's default for snapshots)


class HubResults(HubReviews):
    """The results dataset (see the module docstring); `namespace` names its default owner,
    `verifiers` the users whose verification records count beside the owner's.

    `online` and `writable` raise, without a call, what makes reading or writing impossible
    (offline; no token); the methods of `ResultsDataset` raise user errors, the others the
    client's typed ones.
    """

    def __init__(self, client: HubClient, *, configured: str | None,
                 namespace: Callable[[], str], cache_dir: Path,
                 online: Callable[[], None] = lambda: None,
                 writable: Callable[[], None] = lambda: None,
                 verifiers: tuple[str, ...] = ()) -> None:
        self.client, self.cache_dir = client, cache_dir
        self.listings = CommitListings(client)  # by commit: a commit's files never change
        self._verifiers, self._me = verifiers, None
        self._repo, self._namespace = configured, namespace
        self._online, self._writable = online, writable
        self._ready = False
        self._card_proposal: dict[str, bytes] = {}  # a card we may not write goes in the PR

    def repo(self) -> str:
        """The dataset id: configured, else `<namespace>/hubskills-evals` (asked once)."""
        if not self._repo:
            self._repo = f"{self._namespace()}/{DEFAULT_RESULTS_NAME}"
        return self._repo

    def source(self) -> str:
        """The dataset id, which `datasets.load_dataset` reads."""
        return self.repo()

    def check_writable(self) -> None:
        """Raise `MissingCredentials` without a token, `RegistryUnavailable` offline (no call)."""
        self._writable()

    def producer(self) -> str:
        """The Hub user the token belongs to (`whoami`).

        Raises:
            MissingCredentials: no valid token.
        """
        if self._me is None:  # the token's user, asked once: a client's token never changes
            with user_errors():
                self._me = self.client.whoami()
        return self._me

    def append(self, manifest: RunManifest, rows: list[ResultRow]) -> Appended:
        """Add the run's file in one commit, or propose it as a pull request when this token
        may not write the dataset (`Appended.pr_url`); an existing run is a no-op."""
        self._writable()
        with user_errors():
            return self._append(manifest, rows)

    def _append(self, manifest: RunManifest, rows: list[ResultRow]) -> Appended:
        path, data = run_file(manifest, rows)
        repo, message = self.repo(), f"Add eval run {manifest.run_id}"
        self._ensure_dataset(repo)
        if self.client.file_exists(repo, path, repo_type="dataset"):
            log.info("run %s is already in %s", manifest.run_id, repo)
            return Appended(path)
        try:
            with_retry(lambda: self.client.commit(repo, {path: data}, repo_type="dataset",
                                                  message=message))
        except AuthFailed as err:
            if err.status != 403:  # 401: no valid token at all; nothing to propose with
                raise
            files = {**self._card_proposal, path: data}
            url = with_retry(lambda: self.client.propose(
                repo, files, repo_type="dataset",
                message=f"{message} (by {manifest.produced_by}, for review)"))
            return Appended(path, pr_url=url)
        return Appended(path)

    def _ensure_dataset(self, repo: str) -> None:
        if self._ready:
            return
        self.client.create_repo(repo, repo_type="dataset")
        current = self.client.read_text(repo, CARD_FILE, repo_type="dataset")
        if card := card_update(repo, current):
            fresh = {CARD_FILE: card}
            try:
                with_retry(lambda: self.client.commit(
                    repo, fresh, repo_type="dataset",
                    message="Create the hubskills results dataset"))
            except AuthFailed as err:
                if err.status != 403:
                    raise
                self._card_proposal = fresh  # someone else's dataset: proposed with the run
        self._ready = True

    def change_token(self) -> str:
        """The dataset's head commit ("" while it does not exist): each append commits."""
        self._online()
        with user_errors():
            try:
                return self.client.repo_info(self.repo(), repo_type="dataset").sha or ""
            except RepoNotFound:
                return ""

    def files(self) -> tuple[list[RemoteFile], str | None]:
        """The dataset's result files and the head they were listed at ([] when none)."""
        repo = self.repo()
        try:
            head = self.client.repo_info(repo, repo_type="dataset").sha
            entries = self.listings.tree(repo, RESULTS_DIR, head)
        except (RepoNotFound, EntryNotFound):
            return [], None
        return sorted((e for e in entries if e.path.endswith(".jsonl")),
                      key=lambda e: e.path), head

    def _download(self, path: str, revision: str | None) -> Path:
        return self.client.download(self.repo(), check_relpath(path), revision=revision,
                                    repo_type="dataset")

    def read(self, *, skill: str | None = None) -> list[ResultRow]:
        """Every row (of one skill, by repo id or name, when `skill` is given), each file
        downloaded once into the cache."""
        self._online()
        with user_errors():
            files, head = self.files()
            with ThreadPoolExecutor(DOWNLOADS) as pool:  # at once, not one after another
                paths = list(pool.map(lambda e: self._download(e.path, head), files))
            return [row for path in paths for row in iter_rows(path)
                    if matches_skill(row, skill)]

    def frame(self) -> pd.DataFrame:
        """Every row as a DataFrame; only files not seen before are downloaded and parsed."""
        self._online()
        with user_errors():
            return self._frame()

    def _frame(self, listed: tuple[list[RemoteFile], str | None] | None = None
               ) -> pd.DataFrame:
        """Every row as a DataFrame (from `listed`, when the files were listed already)."""
        from registry.stores.frame import load_frame  # pyarrow loads only when results are read

        # Not `datasets.load_dataset(repo, split="evals")`, though the card declares that split
        # for anyone else's use: measured on 1,000 runs (200,000 rows) of the Space bench,
        # it took 24.4 s cold and 5.3 s cached (peak 330 MB) against the frame's 8.2 s and
        # 2.5 s (peak 380 MB and 200 MB); its cache is keyed by the whole file list, so one
        # more run re-parsed all 1,001 files (21.4 s) where the frame parsed the new one (2.1 s).
        files, head = listed or self.files()
        sources = {f"{e.path}:{e.blob_id}": partial(self._download, e.path, head) for e in files}
        return load_frame(sources, self.cache_dir / self.repo().replace("/", "--"))

    def pending(self) -> list[tuple[PullRequest, list[RemoteFile]]]:
        """Open pull requests and the result files each adds that `main` does not hold."""
        with user_errors():
            return self._pending()

    def _pending(self) -> list[tuple[PullRequest, list[RemoteFile]]]:
        repo = self.repo()
        try:
            merged = {e.path for e in self.files()[0]}
            pulls = self.client.open_pull_requests(repo, repo_type="dataset")
        except RepoNotFound:
            return []
        found = []
        for pr in pulls:
            try:
                entries = self.client.tree(repo, RESULTS_DIR, pr.revision, repo_type="dataset")
            except EntryNotFound:
                continue
            added = sorted((e for e in entries if e.path.endswith(".jsonl")
                            and e.path not in merged), key=lambda e: e.path)
            if added:
                found.append((pr, added))
        return found

    def pending_frame(self, pr: PullRequest, added: list[RemoteFile]) -> pd.DataFrame:
        """The rows one open pull request adds (`added`, from `pending`), as a frame, each
        file's rows under the run id its path names (whatever run its rows name)."""
        from registry.stores.frame import load_frame

        sources = {f"{e.path}:{e.blob_id}": partial(self._download, e.path, pr.revision)
                   for e in added}
        # Each file's rows go under the run its path names (`run_id_of`, or its stem), as its
        # badge does: a row may name any run. The cache's name says its rows are filed so.
        run_ids = {f"{e.path}:{e.blob_id}": run_id_of(e.path) or PurePosixPath(e.path).stem
                   for e in added}
        with user_errors():
            return load_frame(sources, self.cache_dir / (self.repo().replace("/", "--")
                                                         + f"--pending-filed-{pr.num}"),
                              run_ids)

    def read_run(self, run_id: str, revision: str | None = None) -> bytes | None:
        """The bytes of run `run_id`'s file at `revision` (default: `main`); None: no such run.

        Raises:
            HubskillsError: no such revision, or the Hub could not be asked.
        """
        with user_errors():
            try:
                if revision is None:
                    entries, at = self.files()
                else:
                    at = revision
                    entries = self.listings.tree(self.repo(), RESULTS_DIR, revision)
            except (RepoNotFound, EntryNotFound):
                return None
            except RevisionNotFound as err:
                raise HubskillsError(f"the results dataset {self.repo()} has no revision "
                                     f"{revision}", hint="hubskills leaderboard --registry hub "
                                     "--pending  # the open pull requests") from err
            path = next((e.path for e in entries if e.path.endswith(f"/{run_id}.jsonl")), None)
            return None if path is None else self._download(path, at).read_bytes()

    # -- verification records (see `records.py`) --------------------------------------------

    def run_files(self) -> list[RunFile]:
        """Every merged run's file, with the hash of its rows."""
        with user_errors():
            files, head = self.files()
            return [self._run_file(e.path, e.blob_id, head) for e in files]

    def pending_run_files(self, listed: list[tuple[PullRequest, list[RemoteFile]]] | None = None
                          ) -> list[tuple[PullRequest, RunFile]]:
        """Each run file waiting in an open pull request, with the hash of its rows (of
        ``listed``, `pending`'s answer, when given: not listed again)."""
        with user_errors():
            return [(pr, self._run_file(e.path, e.blob_id, pr.revision))
                    for pr, added in (self._pending() if listed is None else listed)
                    for e in added if run_id_of(e.path) is not None]  # as `pending_view`'s

    def _run_file(self, path: str, blob_id: str | None, revision: str | None) -> RunFile:
        if not blob_id:  # not reported: hash the bytes
            blob_id = rows_hash(self._download(path, revision).read_bytes())
        return RunFile.at(path, blob_id)

    def records(self) -> list[Record]:
        """Every verification record (oldest file first)."""
        repo = self.repo()
        with user_errors():
            try:
                head = self.client.repo_info(repo, repo_type="dataset").sha
                listed = self.listings.tree(repo, RECORDS_DIR, head)
            except (RepoNotFound, EntryNotFound):
                return []
            return parse_records((e.path, self._download(e.path, head).read_bytes())
                                 for e in sorted(listed, key=lambda e: e.path)
                                 if e.path.endswith(".json"))

    def append_record(self, record: Record) -> str:
        """Commit `record` as a new file; returns its path."""
        (path, data), repo = record_file(record), self.repo()
        with user_errors():
            with_retry(lambda: self.client.commit(
                repo, {path: data}, repo_type="dataset",
                message=f"Verify run {record['run_id']}: {record['status']}"))
        return path

    def card_summary(self, repo: str, badges: Mapping[str, Badge] | None = None
                     ) -> list[dict[str, Any]]:
        """The card's evaluation summary of skill `repo`, each entry with its run's badge
        from `badges` (no frame when there are no runs)."""
        listed = self.files()
        return card_summary(self._frame(listed), repo, badges) if listed[0] else []
