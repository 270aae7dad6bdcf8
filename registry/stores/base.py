"""The `SkillStore` protocol and the values it returns.

A skill store holds versioned skills and an append-only results dataset. Implementations pass
one contract suite: `LocalStore` (a folder, the embedded default), `HubStore` (the Hugging Face
Hub), and `FallbackStore` (one store, another when the first is unavailable). Versions and ref
resolution are in `refs.py`, the repository layout rule in `files.py`, path safety and size
limits in `registry.scan`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from registry.errors import RegistryError
from registry.scan import STORE_LIMITS, SizeLimits

if TYPE_CHECKING:
    import pandas as pd

    from registry.results.runs import ResultRow, RunManifest

SORTS = ("downloads", "likes", "lift")

LiftKey = Callable[["pd.DataFrame"], Mapping[str, float]]


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


@runtime_checkable
class SkillStore(Protocol):
    """Versioned skills plus an append-only results dataset (see the module docstring)."""

    kind: str

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

    def append_results(self, manifest: RunManifest, rows: list[ResultRow]) -> str:
        """Add one immutable results file for the run; returns its path in the dataset."""
        ...

    def check_writable(self) -> None:
        """Raise now, without a network call, what a write would fail on for want of a
        credential or a writable place (`eval --push` asks before any model is called)."""
        ...

    def read_results(self, *, skill: str | None = None) -> list[ResultRow]:
        """Every result row (optionally of one skill, by repo or name), as validated models."""
        ...

    def results_frame(self) -> pd.DataFrame:
        """Every result row as a DataFrame (no `output`/`checks` columns): the fast path."""
        ...

    def dataset_source(self) -> str:
        """What `datasets.load_dataset(source, split="evals")` reads: the results dataset's
        Hub id, or the local dataset folder."""
        ...


def check_sort(sort: str) -> None:
    """Refuse a search order other than downloads, likes or lift.

    Raises:
        RegistryError: an unknown sort.
    """
    if sort not in SORTS:
        raise RegistryError(f"unknown sort '{sort}'", hint="--sort downloads|likes|lift")


def sort_infos(infos: list[SkillInfo], sort: str, limit: int,
               lifts: Callable[[], Mapping[str, float]]) -> list[SkillInfo]:
    """Sort search results by `sort` (ties by repo id) and cut to `limit`.

    `lifts` is called only for the lift sort; skills without results sort last.
    """
    if sort == "lift":
        lift = lifts()
        infos = sorted(infos, key=lambda i: (-lift.get(i.repo, float("-inf")), i.repo))
    else:
        infos = sorted(infos, key=lambda i: (-getattr(i, sort), i.repo))
    return infos[:limit]
