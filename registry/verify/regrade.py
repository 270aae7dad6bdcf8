"""Regrading a run's stored outputs, for `verify.py` (`verify_summary.py` recomputes its summary).

Checks run through the check engine (`checks.run_checks`) exactly as the run graded them: text
checks in-process, code checks in an isolating sandbox (never on the host, whatever the run
used) for at most the verifier's cap a check (`CHECK_TIMEOUT_S` unless the caller sets one),
judge checks and assertions on the judge's reply stored with each verdict (re-parsed, no
judge is called), pairwise checks on the two replies stored on both rows of their pair
(`pairwise.stored_pair`: the rows must store the same), and workspace checks (file and
`command` checks) of agent samples on the final workspace rebuilt from the case's files and
the row's record (`replay_record`), inside the replay's own scratch folder: every path a row
names is checked before any file operation and no link is followed (`workspace_paths`), and a
refused path is a problem naming it. What cannot be replayed is said, and its stored verdict
is kept for the sample's score: a verdict stored without the judge's reply, an agent sample
without a complete workspace record (older rows, or files over the record's size caps), code
checks when no sandbox works here, and a code check that timed out only under the cap."""

from __future__ import annotations

import asyncio
import math
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple

from registry._gc import collector
from registry.agent import remove_tree
from registry.config import Settings
from registry.errors import HubskillsError

# The check engine's own scoring and driver: text checks are graded by their compiled graders
# without an event loop (`grade_text`), every other check goes through `run_checks`.
from registry.evaluation.checks import (
    _Skipped,
    case_score,
    has_code_checks,
    run_checks,
)
from registry.evaluation.judge import parse_verdict
from registry.evaluation.pairwise import pair_key, stored_pair
from registry.evaluation.text_checks import Grader, compile_text, unsafe_pattern
from registry.evaluation.workspace_paths import UnsafePath, rebuild_workspace, record_problem
from registry.format import checks_schema as cs
from registry.format.checks_schema import WORKSPACE_CHECK_TYPES
from registry.format.suite import Case, Suite
from registry.results.replay_record import is_complete
from registry.results.runs import CheckVerdict, ResultRow, RunManifest
from registry.sandbox import Sandbox, choose

NO_JUDGE = "judge checks and assertions: the judge's answers are not stored"
NO_WORKSPACE = "workspace checks of agent samples: the final workspace is not stored (or was " \
    "over the size a row keeps)"
_TEXT = frozenset((cs.Contains, cs.ContainsAny, cs.NotContains, cs.Regex, cs.NotRegex,
                   cs.Equals, cs.JsonCheck))  # checks of the output text alone: in-process
CHECK_TIMEOUT_S = 60.0
"""The longest a code check may run in a replay unless its caller sets another cap: the
verifier, not the submitter's suite, bounds it (each check gets min(its own limit, the cap))."""
_CODE_LIMITS = {cs.PythonCheck: "timeout", cs.ExecCheck: "timeout", cs.CommandCheck: "timeout_s"}
TOLERANCE = 1e-9  # relative: the engine is exact, JSON keeps every float; this is slack only


@dataclass
class Difference:
    """One way the stored run differs from its replay."""

    sample: str  # `case #repeat arm (model)`, or `summary (model)`
    field: str  # `passed`, `score`, `check 2 (contains 4417)`, `stats.lift`, ...
    stored: Any
    regraded: Any

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"sample": self.sample, "field": self.field, "stored": self.stored,
                "regraded": self.regraded}


@dataclass
class Replay:
    """The regraded rows, how they differ from the stored ones, and what was not replayed."""

    rows: list[ResultRow] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    unreplayable: Counter[str] = field(default_factory=Counter)
    checks: int = 0
    problems: list[str] = field(default_factory=list)  # a row the replay refused to act on
    cap: float = CHECK_TIMEOUT_S  # seconds a code check may run


_Held = tuple[tuple, bool | None, float]
"""Text only, every check rerun: what a sample that holds stores, given its fresh verdicts:
its verdicts (as `_SIGNATURE`), its verdict and its score."""
_Shape = tuple[tuple[str, str, float], ...]  # a case's checks: (type, label, weight) each


@dataclass
class _Plan:
    """How one case is replayed: the case run again (agent mode: without workspace checks)
    and, per stored verdict position, the index of its fresh verdict (None: not replayed);
    `full` is the case itself (agent mode: what a sample with a stored workspace reruns)."""

    case: Case
    positions: list[int | None]
    text_only: bool = False
    full: Case | None = None
    graders: list[Grader] = field(default_factory=list)  # text only: each check compiled once
    shape: _Shape = ()  # text only
    held: dict[str, _Held] = field(default_factory=dict)  # text only: per output graded
    scored: dict[tuple[bool, ...], _Held] = field(default_factory=dict)  # per fresh verdicts,
    # one for all a run's plans of the same shape (cases often share their checks' shape)
    capped: frozenset[int] = frozenset()  # checks whose time limit the replay's cap lowered


def regrade_rows(rows: list[ResultRow], suite: Suite, manifest: RunManifest,
                 settings: Settings, *, check_timeout_s: float = CHECK_TIMEOUT_S) -> Replay:
    """Regrade every row (the latest of each sample) against `suite`; see the docstring. Text
    checks are graded here and now; an event loop is started only for the other checks. A code
    check runs at most `check_timeout_s` seconds (or its own limit, when lower)."""
    scored: dict[_Shape, dict[tuple[bool, ...], _Held]] = {}
    plans = {case.id: _plan(case, agent=manifest.mode == "agent", scored=scored,
                            cap=check_timeout_s) for case in suite.cases}
    replay = Replay(rows=list(rows), cap=check_timeout_s)
    pending: list[tuple[int, ResultRow, _Plan]] = []
    for index, row in enumerate(rows):
        plan = plans.get(row.case_id)
        if row.error is not None or plan is None:  # not graded; an unknown case is a problem
            _check_ungraded(row, replay)
        elif plan.text_only:  # most runs: no event loop, no round trip per check
            replay.rows[index] = _regrade_text(row, plan, replay)
        else:
            pending.append((index, row, plan))
    if pending:  # their cycles (tasks, processes) are freed as they come
        with collector(paused=False):
            asyncio.run(_regrade_checks(pending, suite, manifest, settings, replay))
    replay.differences.sort(key=lambda d: (d.sample, d.field))
    replay.problems.sort()
    return replay


async def _regrade_checks(pending: list[tuple[int, ResultRow, _Plan]], suite: Suite,
                          manifest: RunManifest, settings: Settings, replay: Replay) -> None:
    """The `pending` rows (index, row, plan) regraded through `run_checks`, a few at a time,
    into `replay` (this returns nothing: asyncio.run's SIGINT handling formats the main
    task's repr, with its result's, on its way out). Workspaces are rebuilt, and code checks
    run, only inside this replay's own scratch folder, removed at the end."""
    sandbox, skip_reason = _sandbox(suite, manifest, settings)
    slots = asyncio.Semaphore(max(2, os.cpu_count() or 2))
    pairs = {pair_key(row): row for _, row, _ in pending}  # pairwise checks: the other arm's
    scratch = Path(tempfile.mkdtemp(prefix="hubskills-replay-"))

    async def one(index: int, row: ResultRow, plan: _Plan) -> None:
        async with slots:
            with _final_workspace(row, plan, scratch) as (plan, workspace, refused):
                if refused is not None:  # the stored row stands; the run is a mismatch
                    replay.problems.append(f"{_label(row)}: its workspace record names "
                                           f"{refused}; no file outside the replay's scratch "
                                           "folder was touched")
                    return
                fresh = await run_checks(plan.case, row.output, sandbox=sandbox,
                                         skip_reason=skip_reason, sandbox_root=scratch,
                                         workspace=workspace, judge=_stored_judge(row, plan),
                                         pair=stored_pair(row, plan.full or plan.case, pairs))
        replay.rows[index] = _compare_row(row, plan, fresh, replay)

    try:
        await asyncio.gather(*(one(*item) for item in pending))
    finally:  # it held the checks' folders: removed however deep their code nested folders
        await asyncio.to_thread(remove_tree, scratch)


class Graded(NamedTuple):
    """A fresh verdict of a text check, light (a `CheckVerdict` is made only where it differs
    from the stored one): the same fields."""

    type: str
    label: str
    passed: bool | None
    reason: str
    weight: float
    skipped: bool = False


def grade_text(case: Case, output: str, graders: list[Grader] | None = None) -> list[Graded]:
    """What `run_checks` gives a case graded by text checks alone (`_TEXT`), computed by the
    same graders (`graders`: the case's checks compiled, else compiled here), called
    directly: a thousand samples regrade in milliseconds."""
    graders = graders or [compile_text(check) for check in case.checks]
    graded = []
    for check, grade in zip(case.checks, graders, strict=True):
        passed, why = grade(output)
        graded.append(Graded(check.type, check.label(), passed, why(), check.weight))
    return graded


def _regrade_text(row: ResultRow, plan: _Plan, replay: Replay) -> ResultRow:
    """A sample of a text-only case regraded. Where every fresh verdict equals the stored one
    (type, label, verdict, weight) and so do the sample's verdict and score, the row is its
    own regrade, as `_compare_row` finds, found without writing a reason or building a
    verdict; anything else goes through `_compare_row`."""
    held = plan.held.get(row.output)
    if held is None:
        held = plan.held[row.output] = _holding(plan, row.output)
    if (row.passed, row.score) == held[1:] and tuple(map(_SIGNATURE, row.checks)) == held[0]:
        replay.checks += len(plan.graders)
        return row
    return _compare_row(row, plan, grade_text(plan.case, row.output, plan.graders), replay)


def _holding(plan: _Plan, output: str) -> _Held:
    """What a sample of `plan`'s case with `output` stores if it holds: graded by verdict
    alone (no reason written), each set of verdicts scored once a run."""
    passes = tuple([grade(output)[0] for grade in plan.graders])
    if passes not in plan.scored:
        verdicts = [Graded(kind, label, passed, "", weight)
                    for (kind, label, weight), passed in zip(plan.shape, passes, strict=True)]
        plan.scored[passes] = (tuple(map(_SIGNATURE, verdicts)), *case_score(verdicts))
    return plan.scored[passes]


_SIGNATURE = attrgetter("type", "label", "passed", "skipped", "weight")


def _sandbox(suite: Suite, manifest: RunManifest,
             settings: Settings) -> tuple[Sandbox | None, str]:
    """The sandbox code checks run in now, and the reason they are skipped without one. A run
    that left them out by choice is regraded the same way."""
    if (manifest.code_checks or "").startswith("skipped"):
        return None, f"code check {manifest.code_checks}"
    try:
        choice = choose("auto", settings, has_code=has_code_checks(suite.cases),
                        code_checks="if_sandboxed", folder=None)
    except HubskillsError as err:
        return None, f"code checks: no sandbox here to rerun them ({err.message})"
    return choice.sandbox, f"code checks: no sandbox here to rerun them ({choice.status})"


def _plan(case: Case, *, agent: bool, scored: dict[_Shape, dict[tuple[bool, ...], _Held]],
          cap: float = CHECK_TIMEOUT_S) -> _Plan:
    """How `case` is replayed: code checks capped at `cap` seconds; agent mode: its workspace
    checks (file and `command` checks) left out of what runs without the sample's final
    workspace, and the whole case (`full`) run on it when the row stores it."""
    case, capped = _capped(case, cap)
    positions: list[int | None] = list(range(len(case.checks) + len(case.assertions)))
    rerun = case
    if agent and any(check.type in WORKSPACE_CHECK_TYPES for check in case.checks):
        kept = [i for i, check in enumerate(case.checks)
                if check.type not in WORKSPACE_CHECK_TYPES]
        positions = [kept.index(i) if i in kept else None for i in range(len(case.checks))]
        positions += [len(kept) + i for i in range(len(case.assertions))]
        rerun = case.model_copy(update={"checks": [case.checks[i] for i in kept]})
    if None in positions or rerun.assertions or not _TEXT.issuperset(map(type, rerun.checks)) \
            or any(map(unsafe_pattern, rerun.checks)):  # sandboxed, as graded
        # (a case of workspace checks alone leaves nothing to rerun as text: it is never
        # text-only, so its samples are regraded on their rebuilt workspaces)
        return _Plan(rerun, positions, full=case, capped=capped)
    shape = tuple([(c.type, c.label(), c.weight) for c in rerun.checks])
    return _Plan(rerun, positions, True, case, list(map(compile_text, rerun.checks)), shape,
                 scored=scored.setdefault(shape, {}), capped=capped)


def _capped(case: Case, cap: float) -> tuple[Case, frozenset[int]]:
    """`case` with each code check's time limit at most `cap` seconds, and the checks lowered."""
    lowered, checks = set(), list(case.checks)
    for index, check in enumerate(checks):
        name = _CODE_LIMITS.get(type(check))
        if name is not None and getattr(check, name) > cap:
            checks[index] = check.model_copy(update={name: cap})
            lowered.add(index)
    if not lowered:
        return case, frozenset()
    return case.model_copy(update={"checks": checks}), frozenset(lowered)


@contextmanager
def _final_workspace(row: ResultRow, plan: _Plan,
                     scratch: Path) -> Iterator[tuple[_Plan, Path | None, str | None]]:
    """An agent sample's final workspace rebuilt in a new folder under `scratch` from the
    case's files and the row's record (`workspace_paths.rebuild_workspace`: every path checked
    before any file operation, no link followed), with the plan that reruns every check on it;
    else the plan as it is and no workspace (chat mode builds its own from the answer). The
    third value is why the record was refused (then there is no workspace), else None."""
    record = row.workspace
    if None not in plan.positions or record is None or plan.full is None:
        yield plan, None, None
        return
    refused = record_problem(record)
    if refused is None and not is_complete(record):
        yield plan, None, None
        return
    full = _Plan(plan.full, list(range(len(plan.positions))), full=plan.full,
                 capped=plan.capped)
    root = Path(tempfile.mkdtemp(prefix="workspace-", dir=scratch))
    try:
        if refused is None:
            try:
                rebuild_workspace(root, plan.full.input_bytes(), record)
            except UnsafePath as err:
                refused = str(err)
        yield full, None if refused else root, refused
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _stored_judge(row: ResultRow, plan: _Plan) -> Any:
    """A judge that answers each rubric with the reply stored on its verdict (re-parsed as the
    run parsed it); a verdict stored without one is skipped (not replayable)."""
    case = plan.full or plan.case
    rubrics = [c.rubric if isinstance(c, cs.JudgeCheck) else None  # pairwise: `stored_pair`
               for c in case.checks] + list(case.assertions)
    answers = {rubric: stored.answer for rubric, stored in zip(rubrics, row.checks, strict=False)
               if rubric is not None and stored.answer is not None}

    async def judge(rubric: str, prompt: str, output: str) -> tuple[bool, str, str]:
        answer = answers.get(rubric)
        if answer is None:
            raise _Skipped(NO_JUDGE)
        return (*parse_verdict(answer), answer)

    return judge


def _check_ungraded(row: ResultRow, replay: Replay) -> None:
    """A row the run did not grade (an error) carries no verdicts; an arm's error fails."""
    label = _label(row)
    if row.checks:
        replay.differences.append(Difference(label, "checks", f"{len(row.checks)} verdicts "
                                             f"on an error row ({row.error})", "none"))
    if row.error_kind == "arm" and (row.passed is not False or row.score not in (0.0, None)):
        replay.differences.append(Difference(label, "passed", row.passed, False))


def _compare_row(row: ResultRow, plan: _Plan, fresh: list[CheckVerdict] | list[Graded],
                 replay: Replay) -> ResultRow:
    """The row regraded: fresh verdicts where they could run, stored ones where not."""
    label = _label(row)
    if len(row.checks) != len(plan.positions):
        replay.differences.append(Difference(label, "checks", f"{len(row.checks)} verdicts",
                                             f"{len(plan.positions)} in the suite's case"))
        return row
    combined = []
    for number, (stored, position) in enumerate(zip(row.checks, plan.positions, strict=True), 1):
        new = None if position is None else fresh[position]
        if number - 1 in plan.capped and _timed_out(new) and not _timed_out(stored):
            replay.unreplayable[f"code checks: timed out under this replay's cap of "
                                f"{replay.cap:g}s a check (their suite allows longer)"] += 1
            combined.append(stored)  # not the run's verdict to judge: the stored one stands
            continue
        combined.append(_compare_check(label, number, stored, new, replay))
    passed, score = case_score(combined)
    if passed != row.passed:
        replay.differences.append(Difference(label, "passed", row.passed, passed))
    elif not math.isclose(score, row.score or 0.0, rel_tol=TOLERANCE):
        replay.differences.append(Difference(label, "score", row.score, score))
    elif all(a is b for a, b in zip(combined, row.checks, strict=True)):
        return row  # every verdict held: the row is its own regrade
    return row.model_copy(update={"checks": combined, "passed": passed, "score": score})


def _timed_out(verdict: CheckVerdict | Graded | None) -> bool:
    return verdict is not None and verdict.passed is False \
        and verdict.reason.startswith("timed out after ")  # as checks.py and run_command say


def _compare_check(label: str, number: int, stored: CheckVerdict,
                   new: CheckVerdict | Graded | None, replay: Replay) -> CheckVerdict:
    """The verdict to score the sample with: the stored one where the fresh one agrees or
    could not run, else the fresh one (and the difference)."""
    if new is None:
        replay.unreplayable[NO_WORKSPACE] += 1
        return stored
    if (stored.type, stored.label) != (new.type, new.label):  # (what, was, now)
        change: tuple[str, Any, Any] = (f"check {number}", stored.label, new.label)
    elif new.skipped and not stored.skipped:
        replay.unreplayable[NO_JUDGE if new.type in ("judge", "assertion") else new.reason] += 1
        return stored
    elif (stored.passed, stored.skipped) != (new.passed, new.skipped):
        change = (f"check {number} ({new.label})", _verdict(stored), _verdict(new))
    elif stored.weight != new.weight:
        change = (f"check {number} ({new.label}) weight", stored.weight, new.weight)
    else:
        replay.checks += 1
        return stored  # the same verdict: kept as stored (its reason too)
    replay.checks += 1
    replay.differences.append(Difference(label, *change))
    return CheckVerdict(**new._asdict()) if isinstance(new, Graded) else new


def _verdict(check: CheckVerdict | Graded) -> str:
    if check.skipped:
        return "skipped"
    return {True: "passed", False: "failed", None: "error"}[check.passed]


def _label(row: ResultRow) -> str:
    return f"{row.case_id} #{row.repeat} {row.arm} ({row.model})"
