"""Verification records as files: their names, their hash of the rows, how they are parsed.

A results dataset keeps one immutable JSON file per verification beside its runs,
`verifications/YYYY-MM/<run_id>--<when>--<kind>.json` (see `verifications.py` for what they
mean). Both datasets (`local_results.py`, `hub_results.py`) read and write them with these.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

log = logging.getLogger(__name__)
RECORDS_DIR = "verifications"
#: A run's results file in a dataset: a pull request may add any path; only these are runs.
RUN_PATH = re.compile(r"data/evals/\d{4}-(0[1-9]|1[0-2])/(?P<run>[A-Za-z0-9][A-Za-z0-9._-]{0,127})"
                      r"\.jsonl")
Record = dict[str, Any]


@dataclass(frozen=True)
class RunFile:
    """A run's results file in the dataset: its run id, path and rows hash."""

    run_id: str
    path: str
    rows_hash: str

    @classmethod
    def at(cls, path: str, rows_hash: str) -> RunFile:
        """The run file at `path` in the dataset (its run id is the file's name)."""
        return cls(PurePosixPath(path).stem, path, rows_hash)


def run_id_of(path: str) -> str | None:
    """The run id a results path names, or None when it is not one (`RUN_PATH`)."""
    found = RUN_PATH.fullmatch(path)
    return None if found is None or ".." in found["run"] else found["run"]


def rows_hash(data: bytes) -> str:
    """The git blob id of a results file's bytes (what the Hub reports as its `oid`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def record_path(record: Record) -> str:
    """Where a record goes: month of the verification, run id, time, kind, a random tail (two
    verifiers of one run in the same second never collide)."""
    when = str(record["verified_at"])
    stamp = when[:19].replace(":", "").replace("-", "")
    return (f"{RECORDS_DIR}/{when[:7]}/{record['run_id']}--{stamp}--{record['kind']}"
            f"--{secrets.token_hex(3)}.json")


def record_file(record: Record) -> tuple[str, bytes]:
    """Where a new record goes (`record_path`) and the bytes its file holds."""
    return record_path(record), (json.dumps(record, indent=2) + "\n").encode("utf-8")


def parse_records(files: Iterable[tuple[str, bytes]]) -> list[Record]:
    """The records that files, given as `(where, bytes)`, hold; one holding none is skipped
    and logged."""
    found = []
    for where, data in files:
        try:
            record = json.loads(data)
        except ValueError:
            record = None
        if isinstance(record, dict):
            found.append(record)
        else:
            log.warning("skipping %s: not a verification record", where)
    return found
