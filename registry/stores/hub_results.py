"""`HubResults`: the eval results dataset of a `HubStore`, on the Hub.

One dataset repo (`HUBSKILLS_RESULTS_REPO`, else `<namespace or your user>/hubskills-evals`)
holds one immutable JSONL file per run under `data/evals/YYYY-MM/`, added by a commit without a
parent (appends never conflict) with bounded retries; its card declares the `evals` split, so
`datasets.load_dataset(repo, split="evals")` returns every row. Reads download each file once
into the HF cache; the frame parses only files it has not seen (see `frame.py`). Errors are the
client's typed ones: `HubStore` turns them into user errors at its edge.

Whose numbers: a token that may read the dataset but not write it (someone else's leaderboard)
proposes its run as a pull request instead (`create_pr=True`, with that same token: never
another); the dataset's owner merges it. Merged files are the dataset; files only in open pull
requests are *pending* submissions (`pending_frame`), shown apart and marked unreviewed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry.hub import (
    AuthFailed,
    EntryNotFound,
    HubClient,
    PullRequest,
    RemoteFile,
    RepoNotFound,
    with_retry,
)
from registry.results.runs import ResultRow, RunManifest, iter_rows, rows_to_jsonl
from registry.scan import check_relpath
from registry.stores.dataset import (
    DEFAULT_RESULTS_NAME,
    RESULTS_DIR,
    card_is_current,
    dataset_card,
    matches_skill,
    results_path,
    stamp_rows,
)
from registry.stores.files import CARD_FILE
from registry.stores.summary import card_summary

if TYPE_CHECKING:
    import pandas as pd

    from registry.results.leaderboard_badges import Badge

log = logging.getLogger(__name__)
DOWNLOADS = 8  # results files downloaded at once (huggingface_hub's default for snapshots)


class Appended(str):
    """The path a run's file got in the dataset (a `str`, as `append_results` returns), and the
    pull request that proposes it when the token could not write the dataset directly."""

    pr_url: str | None

    def __new__(cls, path: str, pr_url: str | None = None) -> Appended:
        made = super().__new__(cls, path)
        made.pr_url = pr_url
        return made


class HubResults:
    """The results dataset (see the module docstring); `namespace` names its default owner."""

    def __init__(self, client: HubClient, *, configured: str | None,
                 namespace: Callable[[], str], cache_dir: Path) -> None:
        self.client, self.cache_dir = client, cache_dir
        self._repo, self._namespace = configured, namespace
        self._ready = False
        self._card_proposal: dict[str, bytes] = {}  # a card we may not write goes in the PR

    def repo(self) -> str:
        """The dataset id: configured, else `<namespace>/hubskills-evals` (asked once)."""
        if not self._repo:
            self._repo = f"{self._namespace()}/{DEFAULT_RESULTS_NAME}"
        return self._repo

    def append(self, manifest: RunManifest, rows: list[ResultRow]) -> Appended:
        """Add the run's file in one commit, or propose it as a pull request when this token
        may not write the dataset; returns its path (an existing run is a no-op)."""
        path = results_path(manifest)
        data = rows_to_jsonl(stamp_rows(manifest, rows)).encode("utf-8")
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
        card = self.client.read_text(repo, CARD_FILE, repo_type="dataset") or ""
        if not card_is_current(card):  # missing, or declares other row features
            fresh = {CARD_FILE: dataset_card(repo).encode("utf-8")}
            try:
                with_retry(lambda: self.client.commit(
                    repo, fresh, repo_type="dataset",
                    message="Create the hubskills results dataset"))
            except AuthFailed as err:
                if err.status != 403:
                    raise
                self._card_proposal = fresh  # someone else's dataset: proposed with the run
        self._ready = True

    def head(self) -> str | None:
        """The dataset's head commit (None while it does not exist): it moves with each run."""
        try:
            return self.client.repo_info(self.repo(), repo_type="dataset").sha
        except RepoNotFound:
            return None

    def files(self) -> tuple[list[RemoteFile], str | None]:
        """The dataset's result files and the head they were listed at ([] when none)."""
        repo = self.repo()
        try:
            head = self.client.repo_info(repo, repo_type="dataset").sha
            entries = self.client.tree(repo, RESULTS_DIR, head, repo_type="dataset")
        except (RepoNotFound, EntryNotFound):
            return [], None
        return sorted((e for e in entries if e.path.endswith(".jsonl")),
                      key=lambda e: e.path), head

    def _download(self, path: str, revision: str | None) -> Path:
        return self.client.download(self.repo(), check_relpath(path), revision=revision,
                                    repo_type="dataset")

    def read(self, skill: str | None = None) -> list[ResultRow]:
        """Every row (of one skill, by repo id or name, when `skill` is given)."""
        files, head = self.files()
        with ThreadPoolExecutor(DOWNLOADS) as pool:  # at once, not one round trip after another
            paths = list(pool.map(lambda e: self._download(e.path, head), files))
        return [row for path in paths for row in iter_rows(path) if matches_skill(row, skill)]

    def frame(self, listed: tuple[list[RemoteFile], str | None] | None = None) -> pd.DataFrame:
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

    def pull_request_frame(self, pr: PullRequest, added: list[RemoteFile]) -> pd.DataFrame:
        """The rows one open pull request adds (`added`, from `pending`), as a frame."""
        from registry.stores.frame import load_frame

        sources = {f"{e.path}:{e.blob_id}": partial(self._download, e.path, pr.revision)
                   for e in added}
        return load_frame(sources, self.cache_dir / (self.repo().replace("/", "--")
                                                     + f"--pending-{pr.num}"))

    def card_summary(self, repo: str, badges: Mapping[str, Badge] | None = None
                     ) -> list[dict[str, Any]]:
        """The card's evaluation summary of skill `repo`, each entry with its run's badge
        from `badges` (no frame when there are no runs)."""
        listed = self.files()
        return card_summary(self.frame(listed), repo, badges) if listed[0] else []
