"""The result schema shared by local runs and the Hub dataset: a run manifest and its rows.

A run folder `HUBSKILLS_HOME/runs/<run_id>/` holds `manifest.json` and `rows.jsonl` (one row
per case x arm x repeat x model), and in agent mode `transcripts.jsonl` (each sample's
trajectory and workspace diff, scrubbed the same way). The same rows, with the manifest's
identifying fields copied onto each, are the `evals` split of the results dataset, so any row
stands on its own.

Every manifest and row leaves this module through `to_json`, which scrubs the process's secrets
(`registry.secrets`): a model that echoes a key, an error quoting one, a check's reason showing
the output, none of them reaches disk or a pushed file.

Over 400 lines because the schema and the one reader and writer of a run folder change
together.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, overload

from pydantic import BaseModel, ConfigDict, Field

from registry._io import atomic_write_text
from registry.errors import HubskillsError, RunNotFound
from registry.results.replay_record import WorkspaceFile, replay_fields
from registry.secrets import scrub

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

Arm = Literal["baseline", "skill"]
RunStatus = Literal["running", "complete", "stopped", "interrupted"]
ErrorKind = Literal["arm", "transport", "check"]
Via = Literal["cli", "space", "job", "spot-check"]  # spot-check: a spot check's fresh re-ask
TRANSCRIPTS = "transcripts.jsonl"  # agent mode: one trajectory per sample, next to rows.jsonl


def utc_now() -> str:
    """ISO 8601 UTC timestamp with seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_run_id() -> str:
    """Sortable, unique: `20261122-103000-a1b2c3`."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


class CheckVerdict(BaseModel):
    """One graded check: `passed` None means skipped (if `skipped`) or an error."""

    type: str
    label: str
    passed: bool | None
    reason: str = ""
    weight: float = 1.0
    skipped: bool = False
    answer: str | None = None  # judge checks: the judge's reply, re-parsed by `verify`


class ToolCount(BaseModel):
    """Agent mode: how many times one tool was called in a sample (a list of these, not a
    dict, so the results dataset has one fixed schema)."""

    tool: str
    calls: int


class DependencyRecord(BaseModel):
    """A skill the evaluated skill requires (`metadata.requires`), loaded in the skill arm with
    it and never in the baseline: which one, at which version and revision, how it was asked
    for (`acme/b@^1.2`; blank for one that only a dependency requires, then `via` names the
    chain), and its content hash (a resumed run or a spot check loads exactly this)."""

    skill: str  # its registry id, `ns/name`
    name: str  # the skill's name, as the model sees it
    version: str | None = None
    revision: str
    content_hash: str | None = None
    required_as: str = ""
    via: str = ""  # the chain that required it, `acme/a → acme/b`


class RunManifest(BaseModel):
    """What was run, on what, with which parameters and versions."""

    model_config = ConfigDict(extra="allow")

    run_id: str
    skill_name: str
    skill_version: str | None = None
    skill_repo: str | None = None
    skill_revision: str | None = None
    content_hash: str
    suite_hash: str
    models: list[str]
    mode: str = "inline"
    placement: str = "user"
    runs: int = 1
    temperature: float = 0.7
    max_tokens: int = 512
    judge: str | None = None
    case_ids: list[str] = Field(default_factory=list)
    skill_tokens: int = 0
    versions: dict[str, str] = Field(default_factory=dict)
    started_at: str = Field(default_factory=utc_now)
    finished_at: str | None = None
    status: RunStatus = "running"
    note: str | None = None
    sandbox: str | None = None  # the backend that ran code checks (None: none ran)
    code_checks: str | None = None  # "bwrap", "none", "skipped: <why>", "none in the suite"
    suite_cases: int | None = None
    """Cases in the whole suite; fewer `case_ids` make this a subset run (never ranked)."""
    samples_planned: int = 0
    samples_done: int = 0
    partial: bool | None = None
    """True until the run has answered every planned sample (set when it closes); None in
    manifests older than the field, where it follows `status`."""
    produced_by: str = "local"
    produced_via: Via = "cli"
    agent_budget: dict[str, float] | None = None  # agent mode: the `Budget` each sample had
    harness: str | None = None  # agent mode: the external agent CLI that ran, if any
    skill_path: str | None = None  # the folder evaluated (`hubskills verify` reads it back)
    summaries: list[dict[str, Any]] | None = None  # per model, as the run closed (verify)
    # Trigger mode: the skills listed beside this one (names, a hash of names and descriptions,
    # and the folder they came from, or "bundled"); None in other modes.
    distractors: list[str] | None = None
    distractors_hash: str | None = None
    distractors_from: str | None = None
    # The design that planned the run (`results.sequential.Design.to_dict()`; None: fixed, as
    # every run before designs), and per model where an adaptive plan stopped (round, reason,
    # verdict, settled), so `verify` recomputes each decision.
    design: dict[str, Any] | None = None
    design_stops: dict[str, dict[str, Any]] | None = None
    # The skills the evaluated skill requires, loaded in its skill arm (never the baseline's)
    # at these revisions (`evaluation.dependencies`); empty when it requires none.
    dependencies: list[DependencyRecord] = Field(default_factory=list)

    @property
    def is_partial(self) -> bool:
        """The run did not answer every planned sample (stopped, interrupted or killed)."""
        return self.status != "complete" if self.partial is None else self.partial

    @property
    def adaptive(self) -> bool:
        """Planned by an adaptive design: its runs are a cap, its rows end where it stopped."""
        return self.design is not None and self.design.get("kind") == "adaptive"

    @property
    def runs_text(self) -> str:
        """`3 runs`, or `up to 3 runs` for an adaptive run (a walk read "11 cases × 3 runs"
        in the CLI and "11×2" on the board for a run its design stopped after two)."""
        runs = f"{self.runs} run{'s' if self.runs != 1 else ''}"
        return f"up to {runs}" if self.adaptive else runs

    @property
    def subset(self) -> bool:
        """A run of some of the suite's cases (`--cases`)."""
        return self.suite_cases is not None and len(self.case_ids) < self.suite_cases

    @property
    def start_failure(self) -> str | None:
        """Why an ended run never got an answer (no row written, or every sample an error)."""
        if self.status == "running":
            return None
        if self.summaries and all(s.get("failed") for s in self.summaries):
            first = next((why for s in self.summaries for e in [s.get("errors") or {}]
                          if (why := e.get("first_transport") or e.get("first_check"))), None)
            return "no model answered" + (f" ({first})" if first else "")
        if self.samples_planned and not self.samples_done:  # `note_start_failure` says why
            return (self.note or "no answer was written").split(": finish it with")[0]
        return None

    @property
    def label(self) -> str:
        """`complete`, `failed to start: <why>`, or what keeps the run off the ranked
        leaderboard (partial, subset)."""
        if (failure := self.start_failure) is not None:
            return f"failed to start: {failure}"
        done = f"{self.samples_done} of {self.samples_planned} samples" \
            if self.samples_planned else self.status
        why = f", {self.status}" if self.samples_planned and self.status in (
            "interrupted", "stopped") else ""
        marks = ["a spot check's re-ask" if self.produced_via == "spot-check" else "",
                 f"partial: {done}{why}" if self.is_partial else "",
                 f"subset: {len(self.case_ids)} of "
                 f"{self.suite_cases} cases" if self.subset else ""]
        early = self.adaptive and self.status == "complete" and self.samples_planned \
            and self.samples_done < self.samples_planned
        return "; ".join(m for m in marks if m) or (
            "complete: its design stopped early" if early else self.status)

    def row_fields(self) -> dict[str, Any]:
        """The run-level fields every row of this run carries (see `ResultRow`)."""
        return {"suite_hash": self.suite_hash,
                "suite_cases": self.suite_cases or len(self.case_ids) or None,
                "run_cases": len(self.case_ids) or None, "planned_runs": self.runs,
                "placement": self.placement, "produced_by": self.produced_by,
                "produced_via": self.produced_via, **replay_fields(self)}


class ResultRow(BaseModel):
    """One model answer to one case in one arm and repeat, with its verdicts and costs."""

    model_config = ConfigDict(extra="ignore")

    run_id: str
    skill_name: str
    skill_version: str | None = None
    skill_repo: str | None = None
    skill_revision: str | None = None
    content_hash: str = ""
    model: str
    mode: str = "inline"
    arm: Arm
    case_id: str
    repeat: int = 0
    passed: bool | None = None
    score: float | None = None
    checks: list[CheckVerdict] = Field(default_factory=list)
    output: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    latency_s: float = 0.0
    error: str | None = None
    error_kind: ErrorKind | None = None
    """`arm`: caused by the arm itself (context overflow, refusal, tool loop over budget), a
    graded failure; `transport` (or unset, for older rows): the call failed after retries;
    `check`: a check could not run to a verdict for a reason no answer could cause (the
    sandbox did not start it, its interpreter never started, the judge's call failed), out of
    both arms' denominators like a transport error."""
    skill_loaded: bool | None = None
    cached: bool = False
    created_at: str = Field(default_factory=utc_now)
    suite_hash: str | None = None
    suite_cases: int | None = None
    run_cases: int | None = None
    planned_runs: int | None = None
    placement: str | None = None
    produced_by: str | None = None
    produced_via: str | None = None
    # Agent mode (`mode == "agent"`); None in other modes and in older rows.
    protocol: str | None = None  # "tools", "single-turn" or "harness:<name>"
    turns: int | None = None
    tool_calls: list[ToolCount] | None = None  # calls per tool, by tool name
    skill_files: list[str] | None = None  # skill files opened or run, relative to the skill
    stop_reason: str | None = None
    activated: bool | None = None  # the agent read SKILL.md (skill arm with tools only)
    expect_skill: bool | None = None  # the case says the skill applies to it
    wall_s: float | None = None  # the agent's wall time (model calls and tools)
    opened_skill: str | None = None  # trigger mode: the listed skill whose SKILL.md was read
    workspace: list[WorkspaceFile] | None = None  # agent mode: the files the agent changed
    # The run's settings on each row (`replay_record`); None in older rows.
    temperature: float | None = None
    max_tokens: int | None = None
    judge: str | None = None
    samples_planned: int | None = None
    code_checks: str | None = None
    harness: str | None = None
    agent_budget: str | None = None  # JSON of the agent's `Budget`
    hubskills_version: str | None = None
    run_summary: str | None = None  # JSON: its model's closing summary (its first row only)
    round: int | None = None  # an adaptive run's round that asked this sample (None: fixed)
    design: str | None = None  # JSON: an adaptive run's design (`replay_record.design_json`)
    # JSON: the skills its skill arm loaded with the skill (`replay_record.dependencies_json`)
    dependencies: str | None = None

    def tool_counts(self) -> dict[str, int]:
        """Agent mode: calls per tool name (empty in other modes)."""
        return {t.tool: t.calls for t in self.tool_calls or []}

    @property
    def is_error(self) -> bool:
        """A transport or check error row: kept out of pass-rate denominators, counted apart.

        An error caused by the arm (`error_kind == "arm"`) is a graded failure, not this.
        """
        if self.error_kind == "arm":
            return False
        return self.error is not None or self.passed is None


def to_json(record: BaseModel, *, indent: int | None = None) -> str:
    """A manifest or row as JSON, scrubbed: the one way either is serialized for writing."""
    return scrub(record.model_dump_json(indent=indent))


def latest_rows(rows: list[ResultRow]) -> list[ResultRow]:
    """One row per (model, arm, case, repeat): a resumed run's retry replaces its error row."""
    keyed: dict[tuple[str, str, str, int], ResultRow] = {}
    for row in rows:
        key = (row.model, row.arm, row.case_id, row.repeat)
        if key not in keyed or keyed[key].is_error or not row.is_error:
            keyed[key] = row
    return list(keyed.values())


def run_dir(runs_root: Path, run_id: str) -> Path:
    """The folder of one run, with the id checked so it cannot name another path."""
    if not run_id or "/" in run_id or "\\" in run_id or run_id.startswith("."):
        raise RunNotFound(f"'{run_id}' is not a run id", hint="hubskills runs")
    return runs_root / run_id


class RunWriter:
    """Appends rows to a new run folder as they complete; the manifest is rewritten atomically.

    A run folder is never overwritten: creating one that exists is an error, and resuming
    opens the existing one for appending only.
    """

    def __init__(self, runs_root: Path, manifest: RunManifest, *, resume: bool = False) -> None:
        self.folder = run_dir(runs_root, manifest.run_id)
        if not resume and self.folder.exists():
            raise HubskillsError(f"run {manifest.run_id} already exists")
        self._created = not self.folder.exists()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.manifest = manifest
        _drop_torn_line(self.folder / "rows.jsonl")
        self._rows = open(self.folder / "rows.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        _drop_torn_line(self.folder / TRANSCRIPTS)
        self._transcripts: IO[str] | None = None
        self.save_manifest()

    def add(self, row: ResultRow) -> None:
        """Append one row and flush, so an interrupted run keeps everything finished."""
        self._rows.write(to_json(row) + "\n")
        self._rows.flush()

    def add_transcript(self, record: dict[str, Any]) -> None:
        """Append one agent-mode trajectory to `transcripts.jsonl` (scrubbed), flushed."""
        if self._transcripts is None:
            self._transcripts = open(self.folder / TRANSCRIPTS, "a",  # noqa: SIM115
                                     encoding="utf-8")
        self._transcripts.write(scrub(json.dumps(record, ensure_ascii=False)) + "\n")
        self._transcripts.flush()

    def save_manifest(self) -> None:
        """Write manifest.json atomically."""
        atomic_write_text(self.folder / "manifest.json", to_json(self.manifest, indent=2))

    def discard(self) -> None:
        """Undo a run refused before its first answer was kept: a folder this writer created
        is removed, a resumed one closed `interrupted` (as it was)."""
        self.close("interrupted")
        if self._created:
            shutil.rmtree(self.folder, ignore_errors=True)

    def close(self, status: RunStatus, note: str | None = None) -> None:
        """Finish the run with its final status."""
        self.manifest.status = status
        self.manifest.finished_at = utc_now()
        if note:
            self.manifest.note = note
        self.save_manifest()
        self._rows.close()
        if self._transcripts:
            self._transcripts.close()


def _drop_torn_line(path: Path) -> None:
    """Cut a partial last line left by a killed writer, so appended rows start clean."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        with open(path, "r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)


def read_manifest(runs_root: Path, run_id: str) -> RunManifest:
    """Load a run's manifest.

    Raises:
        RunNotFound: no such run.
    """
    path = run_dir(runs_root, run_id) / "manifest.json"
    if not path.is_file():
        raise RunNotFound(f"no run '{run_id}' in {runs_root}", hint="hubskills runs")
    return RunManifest.model_validate_json(path.read_text(encoding="utf-8"))


def iter_rows(path: Path) -> Iterator[ResultRow]:
    """Rows of a JSONL file. Rows that do not validate are skipped and never silently.

    A torn last line (no newline: a run killed mid-write) is expected and logged at info level;
    any other bad row is counted and logged as a warning naming `file:line`.
    """
    if not path.is_file():
        return
    bad: list[tuple[int, str]] = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield ResultRow.model_validate_json(line)
            except ValueError as err:
                if line.endswith("\n"):
                    bad.append((number, str(err).splitlines()[0]))
                else:
                    log.info("%s:%d: skipped a torn last row (a killed run)", path, number)
    if bad:
        lines = ", ".join(str(n) for n, _ in bad[:5]) + (", ..." if len(bad) > 5 else "")
        log.warning("%s:%d: skipped %d result row(s) that do not validate (lines %s): %s",
                    path, bad[0][0], len(bad), lines, bad[0][1])


def read_transcripts(runs_root: Path, run_id: str) -> list[dict[str, Any]]:
    """A run's agent-mode trajectories, the latest per (model, arm, case, repeat)."""
    path = run_dir(runs_root, run_id) / TRANSCRIPTS
    if not path.is_file():
        return []
    latest: dict[tuple[Any, ...], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn last line
        key = tuple(record.get(k) for k in ("model", "arm", "case_id", "repeat"))
        latest[key] = record
    return list(latest.values())


def read_rows(runs_root: Path, run_id: str) -> list[ResultRow]:
    """All rows of a run."""
    return list(iter_rows(run_dir(runs_root, run_id) / "rows.jsonl"))


def list_runs(runs_root: Path) -> list[RunManifest]:
    """Every run's manifest, newest first (runs that started in one second: the one whose
    manifest was written last first); a run still `running` (or killed) counts the rows on
    disk as its samples done (a manifest is counted as its run closes)."""
    if not runs_root.is_dir():
        return []
    found = []
    for entry in os.scandir(runs_root):
        path = Path(entry.path) / "manifest.json"
        if entry.is_dir() and path.is_file():
            manifest = read_manifest(runs_root, entry.name)
            if manifest.status == "running":
                manifest.samples_done = len(latest_rows(read_rows(runs_root, entry.name)))
            # runs that started in one second: the one whose manifest was written last first
            found.append((manifest.started_at, path.stat().st_mtime_ns, manifest))
    return [m for *_, m in sorted(found, key=lambda f: f[:2], reverse=True)]


def note_start_failure(runs_root: Path, run_id: str, reason: str) -> bool:
    """Keep why a run that ended with no row failed: it lists as `failed to start: <reason>`.
    False (nothing changed) when the run has a row or is still running."""
    manifest = read_manifest(runs_root, run_id)
    if manifest.status == "running" or read_rows(runs_root, run_id):
        return False
    manifest.note, manifest.samples_done = reason, 0
    atomic_write_text(run_dir(runs_root, run_id) / "manifest.json", to_json(manifest, indent=2))
    return True


def rows_to_jsonl(rows: Iterable[ResultRow]) -> str:
    """Serialize rows as JSONL text (the Hub dataset's file format), scrubbed."""
    return "".join(to_json(row) + "\n" for row in rows)


@overload
def samples_planned(models: int, cases: int, runs: int, *, arms: int = 2) -> int: ...
@overload
def samples_planned(models: int, cases: np.ndarray, runs: np.ndarray, *,
                    arms: int = 2) -> np.ndarray: ...
def samples_planned(models: Any, cases: Any, runs: Any, *, arms: int = 2) -> Any:
    """Samples a run plans: each of `cases` in each of `arms` (baseline and skill; a trigger
    run's query has one) on each of `models`, `runs` times. Counts may be numpy arrays."""
    return models * cases * runs * arms
