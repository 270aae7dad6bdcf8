"""`hubskills verify`: replay a saved run without calling any model.

A replay proves three things about a run, from its folder alone (plus the skill it names):

1. *Integrity*: the skill's content hash is the one the run names (the published revision when
   the run names one, else the folder the run recorded); the suite the rows name (hash, size)
   is that skill's own suite; every planned sample (model x case x repeat x arm) is present
   once; the run's settings are recorded.
2. *Regrade*: every sample's checks run again on its stored output (`verify_regrade.py`), and
   each sample's verdict equals the stored one.
3. *Recompute*: the summary the one statistics engine computes from the regraded rows equals
   the one the run stored when it closed (`verify_summary.py`).

It proves the grading and the arithmetic, not the outputs: a fabricated output that passes its
checks regrades cleanly (only re-asking the model speaks to that). Bad input (a truncated or
hand-edited file, duplicate or missing samples, an unknown suite) is a `mismatch` or `not
replayable` naming the problem, never an exception.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal

from registry._gc import collector
from registry.config import Settings
from registry.errors import HubskillsError, RunNotFound
from registry.evaluation.agent_mode import agent_suite_path
from registry.format.skill import content_hash
from registry.format.suite import Suite, suite_path
from registry.results.runs import ResultRow, RunManifest, latest_rows, run_dir, samples_planned
from registry.verify.costs import cost_differences
from registry.verify.design import design_problems, is_adaptive
from registry.verify.regrade import CHECK_TIMEOUT_S, Difference, regrade_rows
from registry.verify.revision import Unusable, fetch_revision
from registry.verify.suites import load_suite_once
from registry.verify.summary import compare_summaries

Status = Literal["verified", "mismatch", "not replayable"]
ARMS = ("baseline", "skill")
SETTINGS = ("models", "mode", "placement", "runs", "temperature", "max_tokens", "case_ids",
            "versions")
"""Manifest fields a replayable run must have recorded (agent mode: `agent_budget` too)."""
Key = tuple[str, str, str, int]

ANOTHER_VERSION = "it was made with another version of the skill"  # the folder changed since


@dataclass(frozen=True)
class ReplayLimits:
    """What one replay allows, set by the verifier, never by the run's suite.

    `check_timeout_s`: the longest a code check (`python`, `exec`, `command`) runs; each gets
    min(its suite's limit, this), and a check that times out only under this cap is not
    replayable rather than a mismatch. `max_samples`: a run with more samples is not replayed
    (not replayable, saying so) before anything is regraded.
    """

    check_timeout_s: float = CHECK_TIMEOUT_S
    max_samples: int = 5000


@dataclass
class Verification:
    """What replaying one run found: `status` says whether it holds."""

    run_id: str
    problems: list[str] = field(default_factory=list)  # integrity failures, in order found
    differences: list[Difference] = field(default_factory=list)  # stored vs regraded
    unreplayable: dict[str, int] = field(default_factory=dict)  # why, and how many times
    skill_source: str = ""
    samples: int = 0
    checks_regraded: int = 0
    planned: int | None = None  # a partial run's planned samples (None: the run finished)

    @property
    def status(self) -> Status:
        """`mismatch` on any problem or difference, else `not replayable` when something could
        not be replayed, else `verified`."""
        if self.problems or self.differences:
            return "mismatch"
        return "not replayable" if self.unreplayable else "verified"

    def cannot(self, why: str, times: int = 1) -> None:
        """Record that part of the run could not be replayed, and why."""
        self.unreplayable[why] = self.unreplayable.get(why, 0) + times

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for `--json`."""
        return {"run_id": self.run_id, "status": self.status, "problems": self.problems,
                "differences": [d.to_dict() for d in self.differences],
                "not_replayable": [{"why": why, "count": n}
                                   for why, n in self.unreplayable.items()],
                "skill_source": self.skill_source, "samples": self.samples,
                "planned": self.planned, "checks_regraded": self.checks_regraded}


@collector(paused=True)
def verify_run(run_id: str, settings: Settings, *, skill_dir: Path | None = None,
               open_store: Callable[[], Any] | None = None,
               limits: ReplayLimits | None = None) -> Verification:
    """Replay the local run `run_id` (module docstring); no model is called.

    `skill_dir` names the skill folder to check the run against (for runs that do not record
    it); `open_store` returns the registry holding the revision a run names; `limits` bounds
    the replay (`ReplayLimits()` when None).

    Raises:
        RunNotFound: no such run.
    """
    folder = run_dir(settings.runs_dir, run_id)
    if not (folder / "manifest.json").is_file():
        raise RunNotFound(f"no run '{run_id}' in {settings.runs_dir}", hint="hubskills runs")
    report = Verification(run_id)
    manifest = _read_manifest(folder / "manifest.json", report)
    if manifest is None:
        return report
    rows = read_rows_strictly(folder / "rows.jsonl", report)
    return replay_run(manifest, rows, report, settings, skill_dir=skill_dir,
                      open_store=open_store, limits=limits)


@collector(paused=True)
def replay_run(manifest: RunManifest, rows: list[ResultRow], report: Verification,
               settings: Settings, *, skill_dir: Path | None = None,
               open_store: Callable[[], Any] | None = None,
               limits: ReplayLimits | None = None) -> Verification:
    """Steps 1-3 of the module docstring for a run given as its manifest and rows (a local
    run's folder, or a pushed run's manifest rebuilt from its rows), within `limits`
    (`ReplayLimits()` when None); findings go in `report`. A run without a sample (one that
    never started) is never verified: not replayable, saying so."""
    if manifest.mode == "trigger":
        report.cannot("a trigger run is replayed by registry.verify.trigger (its verdict is "
                      "which SKILL.md the model opened, not checks)")
        return report
    limits = limits or ReplayLimits()
    with ExitStack() as stack:
        skill = skill_folder(stack, manifest, report, skill_dir, open_store)
        suite = _skill_suite(skill, manifest, report) if skill is not None else None
        latest = _check_plan(manifest, rows, report)
        report.samples = len(latest)
        report.planned = manifest.samples_planned if manifest.is_partial else None
        if not latest:
            planned = samples_planned(len(manifest.models), len(manifest.case_ids),
                                      manifest.runs)
            report.cannot(f"no samples: the run answered none of its {planned} planned "
                          "samples")
        elif len(latest) > limits.max_samples:
            report.cannot(f"the run has {len(latest)} samples, more than the "
                          f"{limits.max_samples} this replay regrades (its sample cap)")
        elif suite is not None:
            _replay(manifest, latest, suite, settings, report, limits)
    return report


def _read_manifest(path: Path, report: Verification) -> RunManifest | None:
    """The manifest, with a problem for one that does not parse or lacks a recorded setting."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        manifest = RunManifest.model_validate(raw)
    except RecursionError:  # nested past what Python reads: raised no ValueError
        report.problems.append("manifest.json is not a valid run manifest: nested too deeply")
        return None
    except (ValueError, TypeError) as err:
        report.problems.append(f"manifest.json is not a valid run manifest: "
                               f"{str(err).splitlines()[0]}")
        return None
    if manifest.run_id != report.run_id:
        report.problems.append(f"manifest.json names run {manifest.run_id}, not "
                               f"{report.run_id}")
    wanted = [*SETTINGS, *(("agent_budget",) if manifest.mode == "agent" else ())]
    missing = [name for name in wanted if raw.get(name) in (None, [], {})]
    if "hubskills" not in (raw.get("versions") or {}):
        missing.append("versions.hubskills")
    if missing:
        report.cannot(f"the manifest does not record the run's {', '.join(missing)}")
    return manifest


def read_rows_strictly(path: Path, report: Verification) -> list[ResultRow]:
    """Every row of `rows.jsonl`; a line that is not a valid row is a problem (not skipped)."""
    if not path.is_file():
        report.problems.append("rows.jsonl is missing")
        return []
    with open(path, encoding="utf-8", errors="replace") as handle:
        return parse_rows(handle, "rows.jsonl", report)


def parse_rows(lines: Iterable[str], name: str, report: Verification) -> list[ResultRow]:
    """The rows of JSONL `lines` (of file `name`); the first line that is not a valid row is a
    problem, and so is every one after it (reported once, with how many)."""
    rows, bad = [], 0
    for number, line in enumerate(lines, 1):
        if not line or line.isspace():  # `not line.strip()`, without copying the line
            continue
        try:
            rows.append(ResultRow.model_validate_json(line))
        except ValueError as err:
            bad += 1
            if bad == 1:
                torn = "" if line.endswith("\n") else " (cut short: a truncated file)"
                report.problems.append(f"{name} line {number} is not a valid row{torn}: "
                                       f"{str(err).splitlines()[0]}")
    if bad > 1:
        report.problems.append(f"{name}: {bad} lines in all are not valid rows")
    return rows


def skill_folder(stack: ExitStack, manifest: RunManifest, report: Verification,
                 skill_dir: Path | None, open_store: Callable[[], Any] | None) -> Path | None:
    """The skill the run must match: `skill_dir`, the published revision the run names (read
    into a temp folder), or the folder it recorded; its content hash is checked."""
    folder: Path | None = None
    if skill_dir is not None:
        folder, report.skill_source = Path(skill_dir), str(skill_dir)
    elif manifest.skill_repo and manifest.skill_revision:
        try:
            folder, report.skill_source = fetch_revision(stack, manifest, open_store)
        except Unusable as err:
            if err.mismatch:
                report.problems.append(err.why)
            else:
                report.cannot(err.why)
            return None
    elif manifest.skill_path and Path(manifest.skill_path).is_dir():
        folder, report.skill_source = Path(manifest.skill_path), manifest.skill_path
    else:
        where = f"its skill folder {manifest.skill_path} is gone" if manifest.skill_path \
            else "it does not record its skill folder (a run made before verify)"
        report.cannot(f"{where}: name it with --skill FOLDER")
    if folder is None:
        return None
    if not (folder / "SKILL.md").is_file():
        report.cannot(f"{report.skill_source} holds no SKILL.md")
        return None
    found = content_hash(folder)
    if found != manifest.content_hash:
        report.problems.append(
            f"the skill's content hash is {found} at {report.skill_source}, but the run names "
            f"{manifest.content_hash}: {ANOTHER_VERSION}")
    return folder


def _skill_suite(folder: Path, manifest: RunManifest, report: Verification) -> Suite | None:
    """The skill's own suite, which must be the one the run graded (hash and size)."""
    path = agent_suite_path(folder) if manifest.mode == "agent" else suite_path(folder)
    if not path.is_file():
        report.cannot(f"the skill at {report.skill_source} has no suite "
                      f"({path.relative_to(folder)})")
        return None
    try:
        suite, found = load_suite_once(path, folder)
    except HubskillsError as err:
        report.cannot(f"the skill's suite does not load: {err.message}")
        return None
    suite_problems(manifest, report, found, [case.id for case in suite.cases])
    return suite


def suite_problems(manifest: RunManifest, report: Verification, found: str, ids: list[str], *,
                   suite: str = "suite", items: str = "cases") -> None:
    """The suite the run names (its hash, its size, its case ids) held against the skill's
    (hash ``found``, ids ``ids``), each mismatch a problem in ``report``; ``suite`` and
    ``items`` name them ("trigger suite", "queries" for a trigger run)."""
    size = len(ids)
    if found != manifest.suite_hash or manifest.suite_cases not in (None, size):
        report.problems.append(
            f"the run names {suite} {manifest.suite_hash} ({manifest.suite_cases} {items}), "
            f"but the {suite} of the skill at {report.skill_source} is {found} ({size} {items})")
    unknown = sorted(set(manifest.case_ids) - set(ids))
    if unknown:
        report.problems.append(f"the run names {items} the skill's {suite} lacks: "
                               f"{', '.join(unknown[:5])}")


def first_of_one_run(rows: list[ResultRow], fields: tuple[str, ...], repo: str,
                     report: Verification) -> ResultRow | None:
    """The first of a pushed run's `rows` when every row agrees with it on `fields` and it is
    run `report.run_id` of `repo`; None, with the problem in `report`, otherwise."""
    if not rows:
        if not report.problems:
            report.problems.append("the run's results file holds no rows")
        return None
    first = rows[0]
    for number, row in enumerate(rows[1:], 2):
        wrong = [name for name in fields if getattr(row, name) != getattr(first, name)]
        if wrong:
            report.problems.append(
                f"row {number} ({sample_label(_key(row))}): its {', '.join(wrong)} differ "
                f"from row 1's ({getattr(row, wrong[0])!r}, not {getattr(first, wrong[0])!r}):"
                " rows of one run agree on these, an edited row does not")
            return None
    if first.run_id != report.run_id or first.skill_repo != repo:
        report.problems.append(f"the file holds run {first.run_id} of {first.skill_repo}, not "
                               f"run {report.run_id} of {repo}")
        return None
    return first


def sample_label(key: Key) -> str:
    """`case #repeat arm (model)`: how a sample is named in messages."""
    model, arm, case_id, repeat = key
    return f"{case_id} #{repeat} {arm} ({model})"


_key: Callable[[ResultRow], Key] = attrgetter("model", "arm", "case_id", "repeat")
_SAME = ("run_id", "content_hash", "mode", "skill_name")  # as on the manifest, on every row
_AGREED = attrgetter(*_SAME, "suite_hash")  # a row's, as the manifest's (its suite: or None)


def _check_plan(manifest: RunManifest, rows: list[ResultRow],
                report: Verification) -> list[ResultRow]:
    """Every row belongs to the run and its plan, every planned sample is there once; returns
    the latest row of each sample (`latest_rows`: `rows` itself when no sample repeats)."""
    planned = {(m, arm, c, r) for m in manifest.models for c in manifest.case_ids
               for r in range(manifest.runs) for arm in ARMS}
    if manifest.samples_planned not in (0, len(planned)):
        report.problems.append(f"the manifest plans {manifest.samples_planned} samples, but "
                               f"its models x cases x repeats x arms make {len(planned)}")
    keys = list(map(_key, rows))
    same, fields = attrgetter(*_SAME)(manifest), attrgetter(*_SAME)
    # Most runs: every row agrees with the manifest and is in the plan, as two sets built
    # without a Python loop say; else the loop below names the first row that does not.
    if planned.issuperset(keys) and set(map(_AGREED, rows)) <= {
            (*same, None), (*same, manifest.suite_hash)}:
        rows_to_name: list[tuple[ResultRow, Key]] = []
    else:
        rows_to_name = list(zip(rows, keys, strict=True))
    for number, (row, key) in enumerate(rows_to_name, 1):
        if fields(row) == same and row.suite_hash in (None, manifest.suite_hash) \
                and key in planned:
            continue
        wrong = [name for name in _SAME if getattr(row, name) != getattr(manifest, name)]
        if row.suite_hash not in (None, manifest.suite_hash):
            wrong.append("suite_hash")
        if wrong or key not in planned:
            what = f"its {', '.join(wrong)} differ from the manifest's" if wrong \
                else "it is not in the run's plan (models x cases x repeats x arms)"
            report.problems.append(f"row {number} ({sample_label(key)}): {what}")
            return latest_rows(rows)
    present = set(keys)
    latest = rows if len(present) == len(rows) else latest_rows(rows)
    graded = Counter(k for k, row in zip(keys, rows, strict=True) if not row.is_error) \
        if latest is not rows else {}  # a sample once: not graded twice
    for key, count in graded.items():
        if count > 1:
            report.problems.append(f"sample {sample_label(key)} appears {count} times")
            return latest
    missing = sorted(planned - present)
    if adaptive := design_problems(manifest, latest):  # what an adaptive run's design allows
        report.problems.extend(adaptive)
    elif missing and not manifest.is_partial and not is_adaptive(manifest):
        report.problems.append(f"{len(missing)} planned sample(s) missing, first "
                               f"{sample_label(missing[0])}; the manifest says the run is "
                               "complete")
    elif len(latest) != manifest.samples_done:
        report.problems.append(f"the manifest counts {manifest.samples_done} samples done, "
                               f"the rows hold {len(latest)}")
    return latest


def _replay(manifest: RunManifest, latest: list[ResultRow], suite: Suite, settings: Settings,
            report: Verification, limits: ReplayLimits) -> None:
    """Regrade the latest row of every sample (`latest`), then recompute the summary from
    them."""
    replay = regrade_rows(latest, suite, manifest, settings,
                          check_timeout_s=limits.check_timeout_s)
    report.problems.extend(replay.problems)
    report.differences.extend(replay.differences)
    report.differences.extend(cost_differences(latest, lambda row: sample_label(_key(row))))
    report.checks_regraded = replay.checks
    for why, times in replay.unreplayable.items():
        report.cannot(why, times)
    if manifest.summaries is None:
        report.cannot("the run stores no summary to recompute (a run made before verify)")
        return
    report.differences.extend(compare_summaries(manifest.summaries, replay.rows, manifest))

