"""Replay of trigger runs (`eval --mode trigger`): what can be recomputed from their rows.

A trigger session's outcome is the listed skill whose `SKILL.md` the model read
(`opened_skill`, stored on its row; the tool call that read it is not stored), as an A/B
sample's is its answer: a replay takes it as stored and recomputes, without calling a model,
everything derived from it:

1. *Integrity*: the skill's content hash is the one the run names (`replay.skill_folder`: the
   published revision, the recorded folder or `--skill`); its trigger suite
   (`evals/triggers.json`) is the one the run measured (hash, size) and holds every query the
   run names; every planned session (model x query x repeat, one arm) is there once; a skill
   read is one the run listed (a local run records its distractors' names).
2. *Regrade*: per session, its query's class from that suite (`expect_skill`), triggered or not
   (`activated`: this skill was the one read), the decision right or wrong (`passed`, `score`);
   a failed session holds no outcome.
3. *Recompute*: the figures the run closed with, per model (`summarize_triggers`: recall, false
   triggers, accuracy and their intervals, errors, what was opened instead, tokens, cost), equal
   those of the regraded rows.

Like an A/B replay it proves the grading and the arithmetic, not the decisions: a row edited to
read the skill, with every derived field and figure edited to match, replays cleanly.
`local_trigger` replays a saved run, `pushed_trigger` one as a registry's results dataset holds
it (its manifest rebuilt from the rows) and records the result (`records.verify_and_record`),
which the trigger board's badge reads; `record_trigger_replay` is that record at push time.
"""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from registry.errors import HubskillsError
from registry.evaluation.trigger_report import summarize_triggers
from registry.evaluation.trigger_rounds import reporting_alphas
from registry.format.skill import load_skill
from registry.format.triggers import (
    TRIGGERS_PATH,
    TriggerSuite,
    load_skill_triggers,
    skill_triggers_path,
)
from registry.results.leaderboard import TRIGGER_MODE
from registry.results.runs import (
    ResultRow,
    RunManifest,
    Via,
    latest_rows,
    run_dir,
    samples_planned,
)
from registry.verify.regrade import TOLERANCE, Difference
from registry.verify.replay import (
    Verification,
    first_of_one_run,
    parse_rows,
    read_rows_strictly,
    sample_label,
    skill_folder,
    suite_problems,
)
from registry.verify.trigger_design import carried_design, is_adaptive, trigger_design_problems

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.stores.base import SkillStore

ARM = "skill"  # a trigger session's only arm
Key = tuple[str, str, str, int]
_key: Callable[[ResultRow], Key] = attrgetter("model", "arm", "case_id", "repeat")
_SAME = ("run_id", "skill_name", "skill_version", "skill_repo", "skill_revision",
         "content_hash", "mode", "suite_hash", "suite_cases", "run_cases", "planned_runs",
         "produced_by", "produced_via", "temperature", "max_tokens", "samples_planned",
         "harness", "hubskills_version", "design")
"""Run-level fields every row of a pushed trigger run holds alike."""
_NEEDED = ("skill_revision", "suite_hash", "suite_cases", "run_cases", "planned_runs",
           "samples_planned", "hubskills_version")


def local_trigger(run_id: str, settings: Settings, *, skill_dir: Path | None = None,
                  open_store: Callable[[], Any] | None = None) -> Verification | None:
    """The replay of the saved run ``run_id`` when it is a trigger run, else None (the run is
    replayed as an A/B run, `replay.verify_run`, which also says when there is no such run)."""
    folder = run_dir(settings.runs_dir, run_id)
    try:
        text = (folder / "manifest.json").read_text(encoding="utf-8")
        if json.loads(text).get("mode") != TRIGGER_MODE:
            return None
    except (OSError, ValueError, AttributeError):
        return None
    report = Verification(run_id)
    try:
        manifest = RunManifest.model_validate_json(text)
    except ValueError as err:
        report.problems.append(f"manifest.json is not a valid run manifest: "
                               f"{str(err).splitlines()[0]}")
        return report
    if manifest.run_id != run_id:
        report.problems.append(f"manifest.json names run {manifest.run_id}, not {run_id}")
    rows = read_rows_strictly(folder / "rows.jsonl", report)
    return replay_trigger(manifest, rows, report, skill_dir=skill_dir, open_store=open_store)


def replay_trigger(manifest: RunManifest, rows: list[ResultRow], report: Verification, *,
                   skill_dir: Path | None = None,
                   open_store: Callable[[], Any] | None = None) -> Verification:
    """Steps 1-3 of the module docstring for a trigger run given as its manifest and rows
    (`replay.replay_run`'s counterpart); findings go in ``report``."""
    with ExitStack() as stack:
        skill = skill_folder(stack, manifest, report, skill_dir, open_store)
        suite = _trigger_suite(skill, manifest, report) if skill is not None else None
        latest = _check_plan(manifest, rows, report)
        if suite is not None:
            _recompute(manifest, _regrade(manifest, latest, suite, report), report)
    return report


def _skill_name(folder: Path) -> str | None:
    """The skill's name from its SKILL.md (what an NVIDIA suite's `expected_skill` names)."""
    try:
        return load_skill(folder).name
    except HubskillsError:
        return None


def _trigger_suite(folder: Path, manifest: RunManifest,
                   report: Verification) -> TriggerSuite | None:
    """The skill's own trigger suite, which must be the one the run measured."""
    if skill_triggers_path(folder) is None:
        report.cannot(f"the skill at {report.skill_source} has no trigger suite "
                      f"({TRIGGERS_PATH})")
        return None
    try:
        suite = load_skill_triggers(folder, _skill_name(folder))
    except HubskillsError as err:
        report.cannot(f"the skill's trigger suite does not load: {err.message}")
        return None
    if suite is None:  # removed since it was found
        report.cannot(f"the skill at {report.skill_source} has no trigger suite "
                      f"({TRIGGERS_PATH})")
        return None
    suite_problems(manifest, report, suite.suite_hash(), [q.id for q in suite.queries],
                   suite="trigger suite", items="queries")
    return suite


def _check_plan(manifest: RunManifest, rows: list[ResultRow],
                report: Verification) -> list[ResultRow]:
    """Every row is one of the run's planned sessions, each there once; the latest row of
    each session (a resumed run's retry replaces its error row)."""
    planned = {(m, ARM, q, r) for m in manifest.models for q in manifest.case_ids
               for r in range(manifest.runs)}
    if manifest.samples_planned not in (0, len(planned)):
        report.problems.append(f"the manifest plans {manifest.samples_planned} sessions, but "
                               f"its models x queries x repeats make {len(planned)}")
    latest = latest_rows(rows)
    for number, row in enumerate(rows, 1):
        wrong = [name for name in ("run_id", "content_hash", "mode", "skill_name")
                 if getattr(row, name) != getattr(manifest, name)]
        if row.suite_hash not in (None, manifest.suite_hash):
            wrong.append("suite_hash")
        if wrong or _key(row) not in planned:
            what = f"its {', '.join(wrong)} differ from the manifest's" if wrong \
                else "it is not in the run's plan (models x queries x repeats)"
            report.problems.append(f"row {number} ({sample_label(_key(row))}): {what}")
            return latest
    twice = [(k, n) for k, n in Counter(_key(r) for r in rows if not r.is_error).items() if n > 1]
    if twice:
        report.problems.append(f"sample {sample_label(twice[0][0])} appears {twice[0][1]} times")
        return latest
    missing = sorted(planned - set(map(_key, latest)))
    if is_adaptive(manifest):  # its rows end where its design stopped: replayed in _regrade
        missing = []
    if missing and not manifest.is_partial:
        report.problems.append(f"{len(missing)} planned sample(s) missing, first "
                               f"{sample_label(missing[0])}; the manifest says the run is "
                               "complete")
    elif len(latest) != manifest.samples_done:
        report.problems.append(f"the manifest counts {manifest.samples_done} sessions done, "
                               f"the rows hold {len(latest)}")
    return latest


def _regrade(manifest: RunManifest, latest: list[ResultRow], suite: TriggerSuite,
             report: Verification) -> list[ResultRow]:
    """Each session's outcome derived again from the skill it read (module docstring, 2)."""
    classes = {q.id: q.should_trigger for q in suite.queries}
    listed = getattr(manifest, "distractors", None)
    names = {manifest.skill_name, *listed} if isinstance(listed, list) else None
    regraded = []
    for row in latest:
        label = sample_label(_key(row))
        if row.is_error or row.case_id not in classes:
            if row.is_error and (row.opened_skill or row.activated is not None or row.turns):
                report.differences.append(Difference(label, "error", row.error,
                                                     "a session that ended with an outcome"))
            regraded.append(row)
            continue
        if names is not None and row.opened_skill not in (None, *names):
            report.differences.append(Difference(label, "opened_skill", row.opened_skill,
                                                 "a skill the run listed"))
        activated = row.opened_skill == manifest.skill_name
        passed = activated == classes[row.case_id]
        fresh = {"expect_skill": classes[row.case_id], "activated": activated,
                 "passed": passed, "score": 1.0 if passed else 0.0,
                 "skill_files": ["SKILL.md"] if activated else []}
        report.differences += [Difference(label, name, getattr(row, name), value)
                               for name, value in fresh.items() if getattr(row, name) != value]
        report.checks_regraded += 1
        regraded.append(row.model_copy(update=fresh))
    report.samples = len(latest)
    report.planned = manifest.samples_planned if manifest.is_partial else None
    report.problems += trigger_design_problems(manifest, regraded, classes)  # adaptive runs
    return regraded


def _recompute(manifest: RunManifest, rows: list[ResultRow], report: Verification) -> None:
    """The figures the run stored against those of the regraded ``rows`` (module docstring)."""
    if manifest.summaries is None:
        report.cannot("the run stores no figures to recompute (a trigger run made before "
                      "verify)")
        return
    stored = {s.get("model"): s for s in manifest.summaries if isinstance(s, dict)}
    for summary in summarize_triggers(rows, reporting_alphas(manifest, rows)):
        where = f"summary ({summary.model})"
        if summary.model not in stored:
            report.differences.append(Difference(where, "model", None, summary.model))
            continue
        fresh = json.loads(json.dumps(summary.to_dict()))  # as it reads back
        _walk(where, "", stored.pop(summary.model), fresh, report.differences)
    report.differences += [Difference(f"summary ({m})", "model", m, None) for m in stored]


def _walk(where: str, path: str, stored: Any, fresh: Any, out: list[Difference]) -> None:
    if isinstance(stored, dict) and isinstance(fresh, dict):
        for key in sorted(set(stored) | set(fresh), key=str):
            _walk(where, f"{path}.{key}" if path else str(key), stored.get(key),
                  fresh.get(key), out)
        return
    numbers = isinstance(stored, int | float) and isinstance(fresh, int | float) \
        and not isinstance(stored, bool) and not isinstance(fresh, bool)
    same = math.isclose(stored, fresh, rel_tol=TOLERANCE, abs_tol=1e-12) if numbers \
        else stored == fresh
    if not same:
        out.append(Difference(where, path, stored, fresh))


def trigger_manifest(rows: list[ResultRow], repo: str,
                     report: Verification) -> RunManifest | None:
    """A pushed trigger run's manifest as its rows state it (`pushed.manifest_from_rows`'s
    counterpart, one arm a query); None, with the reason in ``report``, when the rows disagree,
    belong elsewhere or lack a setting."""
    first = first_of_one_run(rows, _SAME, repo, report)
    if first is None:
        return None
    lacking = [name for name in _NEEDED if getattr(first, name) in (None, "")]
    if lacking:
        report.cannot(f"the pushed rows do not record the run's {', '.join(lacking)} (pushed "
                      "by a hubskills that did not store them)")
        return None
    models = list(dict.fromkeys(row.model for row in rows))
    cases = list(dict.fromkeys(row.case_id for row in rows))
    runs = int(first.planned_runs or 1)
    design = carried_design(first)  # an adaptive run's: its plan, its stops, its queries
    stops = design.pop("stops", None)
    design.pop("cases", None)  # the queries in the rows: each is asked in round 1
    if first.run_cases != len(cases) or first.samples_planned != samples_planned(
            len(models), len(cases), runs, arms=1):
        report.problems.append(f"the rows hold sessions of {len(models)} model(s) x "
                               f"{len(cases)} queries, but the run planned {first.run_cases} "
                               f"queries, {first.samples_planned} sessions: every session of a "
                               "query or a model is missing")
    return RunManifest(
        run_id=first.run_id, skill_name=first.skill_name, skill_version=first.skill_version,
        skill_repo=first.skill_repo, skill_revision=first.skill_revision,
        content_hash=first.content_hash, suite_hash=str(first.suite_hash), models=models,
        mode=TRIGGER_MODE, runs=runs, temperature=float(first.temperature or 0.0),
        max_tokens=int(first.max_tokens or 0), case_ids=cases,
        versions={"hubskills": str(first.hubskills_version)}, status="complete", partial=False,
        suite_cases=first.suite_cases, samples_planned=int(first.samples_planned or 0),
        samples_done=len(latest_rows(rows)), produced_by=first.produced_by or "local",
        # RunManifest (pydantic) refuses a value that is not a Via
        produced_via=cast(Via, first.produced_via or "cli"), harness=first.harness,
        summaries=_pushed_summaries(rows, report), design=design or None,
        design_stops=stops if isinstance(stops, dict) else None)


def _pushed_summaries(rows: list[ResultRow], report: Verification) -> list[dict] | None:
    """Each model's figures as pushed on its first row (None when the rows carry none)."""
    found = []
    for row in rows:
        if row.run_summary is not None:
            try:
                found.append(json.loads(row.run_summary))
            except ValueError:
                report.problems.append(f"the summary on {sample_label(_key(row))} is not JSON")
    return found or None


def verify_pushed_trigger(store: SkillStore, repo: str, run_id: str,
                          data: bytes) -> Verification:
    """Replay trigger run ``run_id`` of ``repo`` from ``data``, its results file's bytes in
    ``store``'s dataset; the skill is read from ``store`` at the revision the rows name."""
    report = Verification(run_id)
    text = data.decode("utf-8", errors="replace")
    rows = parse_rows(io.StringIO(text), f"{run_id}.jsonl", report)
    manifest = trigger_manifest(rows, repo, report)
    if manifest is None:
        return report
    return replay_trigger(manifest, rows, report, open_store=lambda: store)


def is_trigger_file(data: bytes) -> bool:
    """Whether a pushed results file holds a trigger run (its first row says so)."""
    return _first_row(data).get("mode") == TRIGGER_MODE


def _first_row(data: bytes) -> dict[str, Any]:
    """The first row of a results file as JSON ({} when it is none)."""
    try:
        first: Any = json.loads(data.split(b"\n", 1)[0])
    except ValueError:
        return {}
    return first if isinstance(first, dict) else {}


def pushed_trigger(store: SkillStore, repo: str, run_id: str, *,
                   revision: str | None = None) -> tuple[Verification, str] | None:
    """When ``store``'s dataset holds run ``run_id`` (at ``revision``) as a trigger run: its
    replay, recorded beside the runs unless a conclusive record of these rows exists, and a
    line saying what was kept (a record that cannot be written is said, never raised); else
    None (an A/B run: `admission.verify_and_keep`).

    Raises:
        RunNotFound: no such run (at ``revision``).
        HubskillsError: the dataset could not be read.
    """
    from registry.verify.reading import read_pushed

    data = read_pushed(store, run_id, revision)
    if not is_trigger_file(data):
        return None
    report = verify_pushed_trigger(store, repo, run_id, data)
    try:
        record, kept = _record(store, run_id, data, repo, lambda: report)
    except HubskillsError as err:
        return report, f"not recorded: {err}"
    from registry.verify.records import recorded_line

    return report, recorded_line(record, kept)


def record_trigger_replay(store: SkillStore, manifest: RunManifest) -> str | None:
    """Replay the trigger run ``manifest`` just pushed, from the rows as ``store``'s dataset
    now holds them, and record it (`push.record_replay`'s counterpart); its status, or None
    when the dataset does not list the run.

    Raises:
        HubskillsError: the dataset could not be read, or the record not written.
    """
    from registry.stores.verifications import run_files
    from registry.verify.reading import read_pushed

    if run_files(store).get(manifest.run_id) is None or not manifest.skill_repo:
        return None
    repo, data = manifest.skill_repo, read_pushed(store, manifest.run_id)
    record, _ = _record(store, manifest.run_id, data, repo,
                        lambda: verify_pushed_trigger(store, repo, manifest.run_id, data))
    return str(record["status"])


def _record(store: SkillStore, run_id: str, data: bytes, repo: str,
            replay: Callable[[], Verification]) -> tuple[dict[str, Any], bool]:
    """`records.verify_and_record` for the rows ``data`` of ``repo``'s run ``run_id``."""
    from registry.stores.verifications import RunFile, rows_hash
    from registry.verify.records import verify_and_record

    revision = _first_row(data).get("skill_revision")
    return verify_and_record(store, RunFile(run_id, "", rows_hash(data)), replay,
                             skill_repo=repo,
                             skill_revision=revision if isinstance(revision, str) else None)
