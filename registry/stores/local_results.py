"""`LocalResults`: the results dataset of a `LocalStore`, a folder in the dataset's layout.

`<store>/datasets/<results repo>/` holds the dataset card, one JSONL file per run under
`data/evals/YYYY-MM/` and the verification records under `verifications/` (`records.py`),
so `datasets.load_dataset(folder, split="evals")` reads it as it reads the Hub's. Writes hold
the store's lock. A folder has no pull requests: nothing is ever pending, and reading, commenting
on or admitting one is refused with a hint. Its records are all "local" (its `producer`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from registry._io import atomic_write_bytes, why_unwritable
from registry.errors import HubskillsError, RegistryError
from registry.results.runs import ResultRow, RunManifest, iter_rows
from registry.scan import check_relpath
from registry.stores.base import Appended
from registry.stores.dataset import RESULTS_DIR, card_update, matches_skill, run_file
from registry.stores.files import listing_digest
from registry.stores.records import (
    RECORDS_DIR,
    Record,
    RunFile,
    parse_records,
    record_file,
    rows_hash,
)

if TYPE_CHECKING:
    import pandas as pd

    from registry.hub import PullRequest, RemoteFile
    from registry.hub.discussions import Comment
    from registry.stores.submissions import Submission

log = logging.getLogger(__name__)
_NO_REVIEWS_HINT = "hubskills review pending  # the Hub registry's pull requests"


class LocalResults:
    """The results dataset folder of a `LocalStore` (see the module docstring)."""

    def __init__(self, root: Path, repo: str, *, lock: AbstractContextManager[object],
                 ready: Callable[[], None]) -> None:
        """The dataset `repo` of the store at `root`; `ready` seeds the store on first use."""
        self.root, self.repo, self._lock, self._ready = Path(root), repo, lock, ready

    @property
    def dataset_dir(self) -> Path:
        """The dataset folder (loadable with `datasets.load_dataset(path)`)."""
        return self.root.joinpath("datasets", *[check_relpath(p) for p in self.repo.split("/")])

    def source(self) -> str:
        """The dataset folder, as `datasets.load_dataset` takes it."""
        self._ready()
        return str(self.dataset_dir)

    def check_writable(self) -> None:
        """Raise `RegistryError` when the registry folder cannot be created or written."""
        if why := why_unwritable(self.root, create=False):
            raise RegistryError(f"cannot write to the local registry {self.root}: {why}",
                                hint="set HUBSKILLS_HOME to a folder you can write to")

    def producer(self) -> str:
        """Always "local"."""
        return "local"

    # -- runs -------------------------------------------------------------------------------

    def append(self, manifest: RunManifest, rows: list[ResultRow]) -> Appended:
        """Write the run's rows as one new file; re-appending a run id is a no-op."""
        self._ready()
        path, data = run_file(manifest, rows)
        target = self.dataset_dir / path
        with self._lock:
            card = self.dataset_dir / "README.md"
            current = card.read_text(encoding="utf-8") if card.exists() else None
            if fresh := card_update(self.repo, current):
                atomic_write_bytes(card, fresh)
            if target.exists():
                log.info("run %s is already in the results dataset", manifest.run_id)
                return Appended(path)
            atomic_write_bytes(target, data)
        from registry.stores.frame import add_source

        add_source(self.root / "cache" / "frame", f"{path}:{len(data)}", data)
        return Appended(path)

    def files(self) -> list[Path]:
        """The run files, oldest month first."""
        return sorted((self.dataset_dir / RESULTS_DIR).glob("*/*.jsonl"))

    def read(self, *, skill: str | None = None) -> list[ResultRow]:
        """Every row (of one skill, by repo id or name, when `skill` is given)."""
        self._ready()
        return [row for path in self.files() for row in iter_rows(path)
                if matches_skill(row, skill)]

    def frame(self) -> pd.DataFrame:
        """Every row as a DataFrame (see `stores.frame`)."""
        from registry.stores.frame import load_frame  # pyarrow loads only when results are read

        self._ready()
        base = self.dataset_dir
        sources = {f"{p.relative_to(base).as_posix()}:{p.stat().st_size}": (lambda p=p: p)
                   for p in self.files()}
        return load_frame(sources, self.root / "cache" / "frame")

    def change_token(self) -> str:
        """A digest of the run files' and verification records' listing (sizes and times; no
        file is read): a new badge changes it as a new run does."""
        self._ready()
        return listing_digest([str(p) for p in [*self.files(), *self._record_files()]])

    def read_run(self, run_id: str, revision: str | None = None) -> bytes | None:
        """The bytes of run `run_id`'s file (None: no such run).

        Raises:
            HubskillsError: a `revision` was asked for (a folder has none).
        """
        if revision:
            raise HubskillsError("a local registry's results have no revisions",
                                 hint=f"hubskills verify SKILL --run {run_id}")
        self._ready()
        found = sorted(self.dataset_dir.glob(f"{RESULTS_DIR}/*/{run_id}.jsonl"))
        return found[0].read_bytes() if found else None

    # -- verification records ---------------------------------------------------------------

    def run_files(self) -> list[RunFile]:
        """Every run's file, with the hash of its rows."""
        self._ready()
        base = self.dataset_dir
        return [RunFile.at(p.relative_to(base).as_posix(), rows_hash(p.read_bytes()))
                for p in self.files()]

    def _record_files(self) -> list[Path]:
        return sorted((self.dataset_dir / RECORDS_DIR).glob("*/*.json"))

    def records(self) -> list[Record]:
        """Every verification record (oldest file first)."""
        self._ready()
        return parse_records((str(p), p.read_bytes()) for p in self._record_files())

    def append_record(self, record: Record) -> str:
        """Write `record` as a new file; returns its path."""
        path, data = record_file(record)
        atomic_write_bytes(self.dataset_dir / path, data)
        return path

    def append_records(self, records: list[Record], message: str) -> list[str]:
        """Write each of `records` as a new file (a folder has no commits: `message` is not
        kept); their paths."""
        return [self.append_record(record) for record in records]

    def verifiers(self) -> frozenset[str]:
        """Who writes records that count here: "local" (this machine) alone."""
        return frozenset({"local"})

    # -- pull requests: a folder has none ---------------------------------------------------

    def pending(self) -> list[tuple[PullRequest, list[RemoteFile]]]:
        """Nothing: a local dataset takes no pull requests."""
        return []

    def pending_run_files(self, listed: list[tuple[PullRequest, list[RemoteFile]]] | None = None
                          ) -> list[tuple[PullRequest, RunFile]]:
        """Nothing: a local dataset takes no pull requests."""
        return []

    def open_pull_requests(self) -> list[PullRequest]:
        """Nothing: a local dataset takes no pull requests."""
        return []

    def pending_frame(self, pr: PullRequest, added: list[RemoteFile]) -> pd.DataFrame:
        """Refused: a local dataset has no pull requests."""
        self._no_pull_requests()

    def pull_head(self, pr: PullRequest) -> str:
        """Refused: a local dataset has no pull requests."""
        self._no_pull_requests()

    def submission(self, pr: PullRequest, head: str) -> Submission:
        """Refused: a local dataset has no pull requests."""
        self._no_pull_requests()

    def read_at(self, path: str, revision: str) -> bytes:
        """Refused: a local dataset has no revisions."""
        self._no_pull_requests()

    def comments(self, num: int) -> list[Comment]:
        """Refused: a local dataset has no pull requests."""
        self._no_pull_requests()

    def comment(self, num: int, text: str) -> None:
        """Refused: a local dataset has no pull requests."""
        self._no_pull_requests()

    def admit(self, num: int, files: Mapping[str, bytes]) -> str:
        """Refused: a local dataset has no pull requests."""
        self._no_pull_requests()

    def close(self, num: int, comment: str) -> None:
        """Refused: a local dataset has no pull requests."""
        self._no_pull_requests()

    def _no_pull_requests(self) -> NoReturn:
        raise HubskillsError("a local registry has no pull requests", hint=_NO_REVIEWS_HINT)
