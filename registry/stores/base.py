"""The store protocols and the values they return.

A skill store (`SkillStore`) holds versioned skills (`SkillRepos`) and an append-only results
dataset (`ResultsDataset`, its `results`), so no caller asks which kind of store it has.
Implementations pass one contract suite: `LocalStore` (a folder, the embedded default),
`HubStore` (the Hugging Face Hub), and `FallbackStore` (one store, another when the first is
unavailable). Versions and ref resolution are in `refs.py`, the repository layout rule in
`files.py`, path safety and size limits in `registry.scan`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from registry.errors import RegistryError
from registry.scan import STORE_LIMITS, SizeLimits

if TYPE_CHECKING:
    import pandas as pd

    from registry.hub import PullRequest, RemoteFile
    from registry.hub.discussions import Comment
    from registry.results.leaderboard_badges import Badge
    from registry.results.runs import ResultRow, RunManifest
    from registry.stores.records import Record, RunFile
    from registry.stores.submissions import Submission

SORTS = ("downloads", "likes", "lift")

LiftKey = Callable[["pd.DataFrame", Mapping[str, "Badge"]],
                  Mapping[tuple[str, "str | None"], float]]
"""From the results and the runs' verification badges: per (skill repo, version), the lower
bound of that version's best ranked lift (`summary.lift_key`)."""


@dataclass(frozen=True)
class Published:
    """What one publish produced: the tagged revision of a skill repo."""

    repo: str
    version: str
    tag: str
    sha: str
    url: str


@dataclass(frozen=True)
class VersionInfo:
    """One published version: its tag, the revision it points at, and when it was made."""

    version: str
    tag: str
    sha: str
    date: str | None


@dataclass(frozen=True)
class Resolved:
    """A ref resolved to an immutable revision; `version` is set when a version tag names it.

    `notes` say how it was answered when that is worth telling (offline, from a fallback);
    `registry` names the registry that answered when a composed store asked another one.
    """

    repo: str
    sha: str
    version: str | None
    ref: str
    notes: tuple[str, ...] = ()
    registry: str | None = None


@dataclass(frozen=True)
class Fetched:
    """What a fetch wrote: the folder, its files, and the content hash the registry reports.

    `reported_hash` is None when the registry reports none (or was not asked: see `fetch`).
    """

    folder: Path
    files: list[str]
    reported_hash: str | None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class SkillInfo:
    """A skill as listed by search (`card` and `versions` are filled by `info` only)."""

    repo: str
    name: str
    description: str
    version: str | None
    tags: list[str]
    downloads: int
    likes: int
    updated: str | None
    license: str | None
    card: str = ""
    versions: list[VersionInfo] = field(default_factory=list)


@dataclass(frozen=True)
class Appended:
    """Where an appended run went: its file's path in the results dataset, and the pull request
    that proposes it when the token could not write the dataset (None: it is in the dataset)."""

    path: str
    pr_url: str | None = None


@runtime_checkable
class SkillRepos(Protocol):
    """Versioned skills: publish, list versions, resolve a ref, fetch a revision, browse."""

    def default_namespace(self) -> str:
        """The namespace used when `publish` is given no `--repo`."""
        ...

    def publish(self, skill_dir: Path, *, repo: str, version: str, private: bool = False,
                message: str | None = None) -> Published:
        """Commit the skill's files and the card, tag the commit `v<version>`."""
        ...

    def versions(self, repo: str) -> list[VersionInfo]:
        """Published versions, newest first (semver order)."""
        ...

    def resolve(self, repo: str, ref: str | None = None) -> Resolved:
        """Resolve latest / a version / `main` / a sha or unique sha prefix to a revision."""
        ...

    def fetch(self, repo: str, sha: str, dest: Path, *, limits: SizeLimits = STORE_LIMITS,
              pinned_hash: str | None = None, count: bool = True) -> Fetched:
        """Write exactly the skill's files at `sha` into the empty folder `dest`.

        Files over `limits` are refused before anything is written. With `pinned_hash` (the
        caller checks the files against it) the store may skip asking for the reported hash.
        `count=False` is a look, not a download (`scan ns/name`): a store that keeps the
        count itself leaves it alone (the Hub counts by its own rules).
        """
        ...

    def search(self, query: str = "", *, sort: str = "downloads", limit: int = 50,
               lift_key: LiftKey | None = None) -> list[SkillInfo]:
        """Skills matching `query`, sorted by downloads, likes or lift."""
        ...

    def info(self, repo: str) -> SkillInfo:
        """One skill with its card and versions."""
        ...

    def refresh_card(self, repo: str) -> None:
        """Rewrite the evaluation section of the skill's card from the results dataset."""
        ...


@runtime_checkable
class ResultsDataset(Protocol):
    """An append-only results dataset: one immutable file per run, verification records beside
    them, and (on the Hub) runs proposed in pull requests that wait for the owner's review.

    A dataset that cannot do something says so: a local one has no pull requests (`pending`
    and `open_pull_requests` are empty; reading, commenting on or admitting one raises
    `HubskillsError` with a hint).
    """

    def source(self) -> str:
        """What `datasets.load_dataset(source, split="evals")` reads: the dataset's Hub id, or
        the local dataset folder."""
        ...

    def check_writable(self) -> None:
        """Raise now, without a network call, what a write would fail on for want of a
        credential or a writable place (`eval --push` asks before any model is called)."""
        ...

    def producer(self) -> str:
        """Who writes here: "local", or the Hub user the token belongs to (never the
        configured namespace: that names where things go, not who made them)."""
        ...

    def append(self, manifest: RunManifest, rows: list[ResultRow]) -> Appended:
        """Add one immutable results file for the run (an existing run is a no-op)."""
        ...

    def read(self, *, skill: str | None = None) -> list[ResultRow]:
        """Every result row (optionally of one skill, by repo or name), as validated models."""
        ...

    def frame(self) -> pd.DataFrame:
        """Every result row as a DataFrame (no `output`/`checks` columns): the fast path."""
        ...

    def change_token(self) -> str:
        """A token that changes when a run is appended, read without reading any run."""
        ...

    def read_run(self, run_id: str, revision: str | None = None) -> bytes | None:
        """The bytes of run `run_id`'s file (at `revision` of the dataset); None: no such run.

        Raises:
            HubskillsError: no such revision (a local dataset has none), or unreadable.
        """
        ...

    def run_files(self) -> list[RunFile]:
        """Every merged run's file, with the hash of its rows."""
        ...

    def records(self) -> list[Record]:
        """Every verification record (oldest file first)."""
        ...

    def append_record(self, record: Record) -> str:
        """Add `record` as a new file; returns its path."""
        ...

    def append_records(self, records: list[Record], message: str) -> list[str]:
        """Add `records` as new files in one commit saying `message`; their paths."""
        ...

    def verifiers(self) -> frozenset[str]:
        """Who writes verification records that count: the dataset's owner, the configured
        verifiers and this token's user on the Hub; "local" in a folder."""
        ...

    def pending(self) -> list[tuple[PullRequest, list[RemoteFile]]]:
        """Open pull requests and the run files each adds that the dataset does not hold."""
        ...

    def pending_run_files(self, listed: list[tuple[PullRequest, list[RemoteFile]]] | None = None
                          ) -> list[tuple[PullRequest, RunFile]]:
        """Each run file waiting in an open pull request, with the hash of its rows (of
        ``listed``, `pending`'s answer, when given)."""
        ...

    def pending_frame(self, pr: PullRequest, added: list[RemoteFile]) -> pd.DataFrame:
        """The rows one open pull request adds (`added`, from `pending`), as a frame, each
        file's rows under the run id its path names (whatever run its rows name)."""
        ...

    def open_pull_requests(self) -> list[PullRequest]:
        """Every open pull request, oldest first, whatever it changes."""
        ...

    def pull_head(self, pr: PullRequest) -> str:
        """The commit pull request `pr` stands at now."""
        ...

    def submission(self, pr: PullRequest, head: str) -> Submission:
        """What `pr` changes at commit `head` (`stores.submissions`)."""
        ...

    def read_at(self, path: str, revision: str) -> bytes:
        """The bytes of `path` at commit `revision`."""
        ...

    def comments(self, num: int) -> list[Comment]:
        """The comments on pull request `num`, each with its author as the Hub says."""
        ...

    def comment(self, num: int, text: str) -> None:
        """Comment `text` on pull request `num`."""
        ...

    def admit(self, num: int, files: Mapping[str, bytes]) -> str:
        """Commit exactly `files` (run files replayed from pull request `num`) to `main`;
        returns the commit."""
        ...

    def close(self, num: int, comment: str) -> None:
        """Close pull request `num` without merging it, saying `comment`."""
        ...


@runtime_checkable
class SkillStore(SkillRepos, Protocol):
    """Versioned skills (`SkillRepos`) and their results dataset (`results`); see the module
    docstring. The `*_results` methods are shorthands for the same calls on `results`."""

    kind: str

    @property
    def results(self) -> ResultsDataset:
        """The store's results dataset."""
        ...

    def change_token(self) -> tuple[str, str]:
        """(results, skills): tokens that change when a run is appended / when a skill is
        published or its card rewritten (downloads do not count), read without reading them;
        for readers that keep what they built from `results_frame` and `search`."""
        ...

    def check_writable(self) -> None:
        """`results.check_writable()`."""
        ...

    def append_results(self, manifest: RunManifest, rows: list[ResultRow]) -> Appended:
        """`results.append(manifest, rows)`."""
        ...

    def read_results(self, *, skill: str | None = None) -> list[ResultRow]:
        """`results.read(skill=skill)`."""
        ...

    def results_frame(self) -> pd.DataFrame:
        """`results.frame()`."""
        ...

    def dataset_source(self) -> str:
        """`results.source()`."""
        ...


class ResultsShorthands:
    """The `*_results` shorthands of `SkillStore`, written once for every store."""

    results: ResultsDataset

    def check_writable(self) -> None:
        """Raise now what a write to the results would fail on (see `ResultsDataset`)."""
        self.results.check_writable()

    def append_results(self, manifest: RunManifest, rows: list[ResultRow]) -> Appended:
        """Add one immutable results file for the run (an existing run is a no-op)."""
        return self.results.append(manifest, rows)

    def read_results(self, *, skill: str | None = None) -> list[ResultRow]:
        """Every result row (optionally of one skill, by repo or name)."""
        return self.results.read(skill=skill)

    def results_frame(self) -> pd.DataFrame:
        """Every result row as a DataFrame (no `output`/`checks` columns)."""
        return self.results.frame()

    def dataset_source(self) -> str:
        """What `datasets.load_dataset(source, split="evals")` reads."""
        return self.results.source()



def check_sort(sort: str) -> None:
    """Refuse a search order other than downloads, likes or lift.

    Raises:
        RegistryError: an unknown sort.
    """
    if sort not in SORTS:
        raise RegistryError(f"unknown sort '{sort}'", hint="--sort downloads|likes|lift")


def lift_order(lift_lo: float | None, repo: str) -> tuple[float, str]:
    """Where a skill sorts by lift: by ``lift_lo``, the lower bound of the best ranked lift of
    the version its result lists, highest first; a listed version without one after every one
    with one; ties by repo id. `search --sort lift` and the MCP tool `search_skills` both sort
    by it. The version listed is the one the result shows and `pull` installs: ranked by an
    older version's lift, a newest version not measured yet (or measured worse) would sit among
    the best on figures it never earned."""
    return (-lift_lo if lift_lo is not None else math.inf, repo)


def sort_infos(infos: list[SkillInfo], sort: str, limit: int,
               lifts: Callable[[], Mapping[tuple[str, str | None], float]]) -> list[SkillInfo]:
    """Sort search results by `sort` (ties by repo id) and cut to `limit`.

    `lifts` (per repo and version, `LiftKey`) is called only for the lift sort, which orders
    each skill by its listed version's lift (`lift_order`).
    """
    if sort == "lift":
        lift = lifts()
        infos = sorted(infos, key=lambda i: lift_order(lift.get((i.repo, i.version)), i.repo))
    else:
        infos = sorted(infos, key=lambda i: (-getattr(i, sort), i.repo))
    return infos[:limit]
