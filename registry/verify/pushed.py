"""`hubskills verify NS/NAME --run RUN_ID`: replay a run as a registry's results dataset holds it.

A pushed run is one JSONL file of rows (`data/evals/YYYY-MM/<run_id>.jsonl`) and nothing else:
every row carries the run's identity (skill repo, revision, content hash), its suite (hash,
size), its plan (cases, repeats, samples) and the settings a replay needs (sampling temperature
and max tokens, judge, agent budget, hubskills version; `RunManifest.replay_fields`), and each
model's first row the summary the run closed with (`run_summary`). From those rows the run's
manifest is rebuilt and the run replayed exactly as a local one (`evaluation.verify.replay_run`):
the skill is read at the revision the rows name and its content hash checked, its suite must be
the one graded, every planned sample must be there once, every output is regraded and the
summary recomputed.

Rows are the producer's word, so they are checked against each other first: every row of the
file must name the same run, skill, suite and settings (a hand-edited row rarely does), the
file must belong to the skill asked about, and a field a replay needs that the rows lack (runs
pushed before this version) makes the run `not replayable`, naming the field.

Here in `publishing` (above `stores`) because it reads a `SkillStore`; what it runs, the replay
of a manifest and its rows, is `evaluation.verify`'s.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any, cast

from registry.results.runs import (
    DependencyRecord,
    ResultRow,
    RunManifest,
    Via,
    latest_rows,
    samples_planned,
)
from registry.verify.reading import read_pushed
from registry.verify.replay import (
    ReplayLimits,
    Verification,
    first_of_one_run,
    parse_rows,
    replay_run,
    sample_label,
)
from registry.verify.trigger import is_trigger_file, verify_pushed_trigger

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.stores.base import SkillStore

_SAME = ("run_id", "skill_name", "skill_version", "skill_repo", "skill_revision",
         "content_hash", "mode", "suite_hash", "suite_cases", "run_cases", "planned_runs",
         "placement", "produced_by", "produced_via", "temperature", "max_tokens", "judge",
         "samples_planned", "code_checks", "harness", "agent_budget", "hubskills_version",
         "design", "dependencies")
"""Run-level fields: every row of a run's file holds the same value."""
_NEEDED = ("skill_revision", "suite_hash", "suite_cases", "run_cases", "planned_runs",
           "placement", "temperature", "max_tokens", "samples_planned", "hubskills_version")
"""What a replay cannot do without (agent mode: `agent_budget` too)."""


def verify_published(store: SkillStore, repo: str, run_id: str, settings: Settings, *,
                     revision: str | None = None, data: bytes | None = None,
                     limits: ReplayLimits | None = None) -> Verification:
    """Replay run ``run_id`` of skill ``repo`` as ``store``'s results dataset holds it.

    The run's file is read from the dataset's main branch, or at ``revision`` of the dataset
    (a Hub store: a pull request's `refs/pr/N`, or a commit), or given as ``data`` (the file's
    exact bytes, e.g. those a verification record hashes; then nothing is read from the
    dataset). No model is called. The skill is read from ``store`` at the revision the rows
    name. ``limits`` bounds the replay (each code check's time, the samples regraded;
    `ReplayLimits()` when None).

    Raises:
        RunNotFound: the dataset holds no run ``run_id`` (at ``revision``).
        HubskillsError: the dataset could not be read (or has no such ``revision``).
    """
    if data is None:
        data = read_pushed(store, run_id, revision)
    report = Verification(run_id)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        report.problems.append(f"{run_id}.jsonl is not UTF-8 (byte {err.start}), so the "
                               "leaderboard would not read it as a replay does")
        return report
    rows = parse_rows(io.StringIO(text), f"{run_id}.jsonl", report)
    if (why := _read_otherwise(data, rows)) is not None:
        report.problems.append(f"{run_id}.jsonl: {why}")
    if is_trigger_file(data):  # which SKILL.md was read, not checks: replayed as such
        return report if report.problems else verify_pushed_trigger(store, repo, run_id, data)
    manifest = manifest_from_rows(rows, repo, report)
    if manifest is None:
        return report
    return replay_run(manifest, rows, report, settings, open_store=lambda: store,
                      limits=limits)


_BOARD = ("run_id", "skill_name", "skill_version", "skill_repo", "model", "mode", "arm",
          "case_id", "repeat", "passed", "error", "error_kind", "input_tokens", "output_tokens",
          "cost_usd", "suite_hash", "suite_cases", "run_cases", "planned_runs", "produced_by",
          "produced_via", "design", "expect_skill")
"""What the leaderboard reads of a row that the replay reads too (`stores.frame`; the trigger
board too: `expect_skill`)."""


def _read_otherwise(data: bytes, rows: list[ResultRow]) -> str | None:
    """Where the leaderboard's reading of the file (`frame.parse_jsonl`, typed and strict)
    differs from the replay's (lenient: "0" is a repeat of 0 to it): what was verified must be
    what is ranked, so such a file is a mismatch. None when they agree."""
    from registry.stores.frame import parse_jsonl

    table = parse_jsonl(data)
    if table.num_rows != len(rows):
        return (f"the leaderboard reads {table.num_rows} of its {len(rows)} rows (the others "
                "hold a value of a type or range it does not take)")
    for number, (seen, row) in enumerate(zip(table.select(list(_BOARD)).to_pylist(), rows,
                                             strict=True), 1):
        differs = [name for name in _BOARD if seen[name] != getattr(row, name)]
        if differs:
            name = differs[0]
            return (f"row {number}'s {name} reads {seen[name]!r} on the leaderboard but "
                    f"{getattr(row, name)!r} in the replay")
    return None


def manifest_from_rows(rows: list[ResultRow], repo: str,
                       report: Verification) -> RunManifest | None:
    """The run's manifest as its rows state it; None (with the problem or the reason it is not
    replayable in ``report``) when the rows disagree, belong elsewhere or lack a setting."""
    first = first_of_one_run(rows, _SAME, repo, report)
    if first is None:
        return None
    needed = [*_NEEDED, *(("agent_budget",) if first.mode == "agent" else ())]
    lacking = [name for name in needed if getattr(first, name) in (None, "")]
    if lacking:
        report.cannot(f"the pushed rows do not record the run's {', '.join(lacking)} (pushed "
                      "by a hubskills that did not store them)")
        return None
    found = len(report.problems)
    budget = _budget(first, report)
    if len(report.problems) > found:
        return None
    manifest = _manifest(first, rows, _summaries(rows, report), budget)
    _check_counts(manifest, first, report)
    return manifest


def _budget(first: ResultRow, report: Verification) -> dict[str, float] | None:
    """The agent budget the rows state (None: they state none); one that is not JSON, nests
    past what Python reads, or is not a mapping of numbers is a problem in ``report`` (it
    raised out of the replay: a red-team note)."""
    if not first.agent_budget:
        return None
    try:
        budget = json.loads(first.agent_budget)
    except (ValueError, RecursionError):
        budget = None
    if isinstance(budget, dict) and all(isinstance(v, int | float) and not isinstance(v, bool)
                                        for v in budget.values()):
        return budget
    report.problems.append(f"the rows' agent_budget is not an agent budget (a JSON mapping "
                           f"of numbers): {first.agent_budget[:80]!r}")
    return None


def _key(row: ResultRow) -> tuple[str, str, str, int]:
    return (row.model, row.arm, row.case_id, row.repeat)


def _summaries(rows: list[ResultRow], report: Verification) -> list[dict[str, Any]] | None:
    """Each model's pushed summary (None when the rows carry none)."""
    found = []
    for row in rows:
        if row.run_summary is None:
            continue
        try:
            summary = json.loads(row.run_summary)
        except (ValueError, RecursionError):  # nested past what Python reads: not JSON here
            summary = None
        if not isinstance(summary, dict):
            report.problems.append(f"the summary on {sample_label(_key(row))} is not JSON")
            continue
        found.append(summary)
    return found or None


def _manifest(first: ResultRow, rows: list[ResultRow],
              summaries: list[dict[str, Any]] | None,
              budget: dict[str, float] | None) -> RunManifest:
    models = list(dict.fromkeys(row.model for row in rows))
    cases = list(dict.fromkeys(row.case_id for row in rows))
    design = _design(first)  # an adaptive run's: its plan, its stops, its cases
    stops, cases = design.pop("stops", None), design.pop("cases", cases)
    return RunManifest(design=design or None, design_stops=stops,
        run_id=first.run_id, skill_name=first.skill_name, skill_version=first.skill_version,
        skill_repo=first.skill_repo, skill_revision=first.skill_revision,
        content_hash=first.content_hash, suite_hash=str(first.suite_hash), models=models,
        mode=first.mode, placement=str(first.placement), runs=int(first.planned_runs or 1),
        temperature=float(first.temperature or 0.0), max_tokens=int(first.max_tokens or 0),
        judge=first.judge, case_ids=cases,
        versions={"hubskills": str(first.hubskills_version)}, status="complete",
        partial=False, code_checks=first.code_checks, suite_cases=first.suite_cases,
        samples_planned=int(first.samples_planned or 0), samples_done=len(latest_rows(rows)),
        produced_by=first.produced_by or "local", agent_budget=budget, harness=first.harness,
        # RunManifest (pydantic) refuses a value that is not a Via
        summaries=summaries, produced_via=cast(Via, first.produced_via or "cli"),
        dependencies=_dependencies(first))


def _dependencies(first: ResultRow) -> list[DependencyRecord]:
    """The skills the run's skill arm loaded, as its rows state them (none when they do not
    parse: then a spot check refuses the run, and the replay needs none)."""
    try:
        return [DependencyRecord.model_validate(d) for d in json.loads(first.dependencies)] \
            if first.dependencies else []
    except (ValueError, TypeError, RecursionError):
        return []


def _design(first: ResultRow) -> dict[str, Any]:
    try:
        found = json.loads(first.design) if first.design else {}
    except (ValueError, RecursionError):  # then checked as a fixed run's, and fall short
        found = {}
    return found if isinstance(found, dict) else {}


def _check_counts(manifest: RunManifest, first: ResultRow, report: Verification) -> None:
    """The rows' cases and models make the plan the rows state (a case or a model whose every
    sample was dropped leaves no row to name it)."""
    cases = len(manifest.case_ids)
    if first.run_cases is not None and cases != first.run_cases:
        report.problems.append(f"the rows hold samples of {cases} case(s), but the run planned "
                               f"{first.run_cases}: every sample of a case is missing")
        return
    made = samples_planned(len(manifest.models), cases, manifest.runs)
    if made != manifest.samples_planned:
        report.problems.append(f"the run planned {manifest.samples_planned} samples, but its "
                               f"rows' {len(manifest.models)} model(s) x {cases} cases x "
                               f"{manifest.runs} repeats x 2 arms make {made}: every sample "
                               "of a model is missing")
