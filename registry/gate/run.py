"""The CI gate: evaluate the skills a change touched and decide whether the change may pass.

Each changed skill is evaluated with the one engine (`run_evaluation`, or whatever runs it
elsewhere, such as Jobs) against its baseline and, when the registry has a published version
of it, that version is evaluated on the *same* suite, models and settings, and the two skill
arms are compared case by case with the same statistics (`stats.compare_arms`: the paired
interval and the exact test). The published version's baseline answers come from the response
cache, so only its skill arm costs calls. Unchanged skills are never evaluated: zero calls.

A skill fails the gate on a model when its verdict against the baseline is "hurts", when the
verdict is no measurement at all (too few cases, or errors that could decide it: the gate
cannot tell that it does not hurt, and a pull request controls the suite), when the lift's
lower bound falls below `min_lift` (when given), or when it is significantly worse than the
published version ("hurts" with the published version as the baseline). A changed skill
that `hubskills validate` rejects (an error: publish would refuse it), whose signature the change
voided (`stale-signature`: publish refuses it, and every pull would) or whose suite does not
load fails as `Refused`, found for every changed skill before the first model call (checks that
cost nothing before anything that costs money), so the others are still gated and the reports
name each one.

The published version is looked up (`gate.published`) by the name the skill had at the base
commit, so a change that renames the skill is still compared with what it replaces; where it was
looked for is said when none is found.
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry.config import Settings
from registry.errors import RunNotFound
from registry.format.version_ref import SkillVersionRef
from registry.gate.changes import Changes, cases_removed, name_at
from registry.gate.published import Lookup, find_published
from registry.results.display import lift_interval, p_equals, points
from registry.results.verdicts import MIN_CASES, is_conclusive
from registry.stores.base import SkillStore

if TYPE_CHECKING:  # the engine (numpy, the providers) loads only when a skill changed
    from registry.evaluation.config import EvalConfig
    from registry.evaluation.engine import EvalRun
    from registry.results.runs import ResultRow
    from registry.results.stats import LiftStats

#: (skill folder, config, settings, **keywords of `run_evaluation`) -> the finished run
Evaluate = Callable[..., "EvalRun"]


@dataclass
class GateCheck:
    """One changed skill on one model: its lift, its comparison with the published version,
    and why it fails the gate (empty when it passes)."""

    skill: str
    folder: str
    model: str
    run_id: str
    lift: LiftStats
    published: SkillVersionRef | None = None  # the newest published version, compared with
    published_run_id: str | None = None
    versus: LiftStats | None = None
    case_changes: str | None = None
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # for a reviewer, not failures
    lookup: Lookup | None = None  # how the published version was looked for

    @property
    def passed(self) -> bool:
        """Whether this skill passes the gate on this model."""
        return not self.failures


@dataclass(frozen=True)
class Refused:
    """A changed skill that fails the gate before any model call for it, and why (each reason
    whole, as `hubskills validate` says it)."""

    folder: str
    reasons: list[str]
    hint: str  # the command that says the same, locally


@dataclass
class GateResult:
    """Every check of one gate, and the skills left alone because they did not change."""

    base: str
    min_lift: float | None
    checks: list[GateCheck]
    unchanged: list[str]
    removed: list[str] = field(default_factory=list)  # skill folders the change deleted
    refused: list[Refused] = field(default_factory=list)  # failed before any model call

    @property
    def passed(self) -> bool:
        """Whether every changed skill passed on every model."""
        return not self.refused and all(c.passed for c in self.checks)

    def failed(self) -> list[GateCheck]:
        """The checks that failed."""
        return [c for c in self.checks if not c.passed]


def failures(lift: LiftStats, versus: LiftStats | None, published: SkillVersionRef | None,
             min_lift: float | None) -> list[str]:
    """Why a skill fails the gate on one model (see the module docstring); [] when it passes."""
    why = []
    shown = lift_interval(lift.lift, lift.lo, lift.hi)
    if lift.verdict == "hurts":
        why.append(f"hurts: lift {shown} against the baseline (exact test "
                   f"{p_equals(lift.p_value)})")
    elif not is_conclusive(lift.verdict):
        why.append(f"{lift.verdict}: no verdict, so the gate cannot tell that it does not hurt "
                   f"(lift {shown}; a suite of {MIN_CASES} cases or more, answered, decides)")
    if min_lift is not None and not lift.lo > min_lift:  # the bound must exceed it
        why.append(f"the lift's lower bound {points(lift.lo)} is not above --min-lift "
                   f"{points(min_lift)} (lift {shown})")
    if versus is not None and published is not None and versus.verdict == "hurts":
        why.append(f"significantly worse than the published {published.label}: "
                   f"{lift_interval(versus.lift, versus.lo, versus.hi)} "
                   f"(exact test {p_equals(versus.p_value)})")
    return why


def skill_arms(rows: Sequence[ResultRow]) -> dict[str, dict[str, list[bool | None]]]:
    """``model -> case -> per-repeat verdicts`` of the skill arm (None: a transport error)."""
    arms: dict[str, dict[str, list[bool | None]]] = defaultdict(dict)
    for row in sorted(rows, key=lambda r: (r.case_id, r.repeat)):
        if row.arm == "skill":
            arms[row.model].setdefault(row.case_id, []).append(
                None if row.is_error else bool(row.passed))
    return arms


def _published_run(store: SkillStore, published: SkillVersionRef, folder: Path,
                   config: EvalConfig, settings: Settings, evaluate: Evaluate) -> EvalRun:
    """Evaluate the published version on the changed skill's suite (same models, settings)."""
    from registry.format.suite import suite_path

    with tempfile.TemporaryDirectory(prefix="hubskills-ci-") as tmp:
        dest = Path(tmp) / folder.name
        store.fetch(published.repo, published.revision, dest, count=False)  # a look, not a pull
        return evaluate(dest, config, settings, tests=suite_path(folder),
                        published=published)


def gate_skill(folder: Path, root: Path, config: EvalConfig, settings: Settings,
               store: SkillStore | None, *, min_lift: float | None,
               evaluate: Evaluate, base_name: str | None = None,
               notes: Sequence[str] = (), namespace: str | None = None) -> list[GateCheck]:
    """Evaluate one changed skill (and its published version: the one of ``base_name``, its
    name at the base commit, when it had one, under ``namespace`` when given) and judge it on
    each model."""
    from registry.format.skill import load_skill
    from registry.results.compare import compare_runs
    from registry.results.report import summarize
    from registry.results.stats import compare_arms

    name = load_skill(folder).name
    # The registry is asked before the first model call: its failure costs nothing.
    lookup = find_published(store, base_name or name, namespace=namespace) \
        if store is not None else None
    published = lookup.ref if lookup is not None else None
    notes = [*notes, *([lookup.said] if lookup is not None and lookup.said else [])]
    run = evaluate(folder, config, settings)
    theirs: dict[str, dict[str, list[bool | None]]] = {}
    published_run_id = changes = None
    if store is not None and published is not None:
        old = _published_run(store, published, folder, config, settings, evaluate)
        theirs, published_run_id = skill_arms(old.rows), old.manifest.run_id
        try:  # per case, as `hubskills runs compare` says it (runs saved here only)
            changes = compare_runs(settings.runs_dir, published_run_id, run.manifest.run_id,
                                   same_skill=True)["summary"]  # by its name at --base
        except RunNotFound:
            changes = None
    ours = skill_arms(run.rows)
    checks = []
    for summary in summarize(run.rows, run.manifest):
        versus = (compare_arms(theirs[summary.model], ours[summary.model])
                  if summary.model in theirs else None)
        checks.append(GateCheck(
            skill=name, folder=_relative(folder, root), model=summary.model,
            run_id=run.manifest.run_id, lift=summary.stats, published=published,
            published_run_id=published_run_id, versus=versus, case_changes=changes,
            failures=failures(summary.stats, versus, published, min_lift),
            notes=list(notes), lookup=lookup))
    return checks


def run_gate(changes: Changes, config: EvalConfig, settings: Settings,
             store: SkillStore | None, *, min_lift: float | None = None,
             evaluate: Evaluate, announce: Callable[[str], Any] | None = None,
             namespace: str | None = None) -> GateResult:
    """Gate every changed skill (see the module docstring); unchanged ones make no call.
    ``namespace``: where the skills are published (`--namespace`; see `gate.published`).

    Raises:
        HubskillsError: a model is unknown or a key is missing (before that skill's first
            call), or the registry failed. A changed skill that does not load is no error:
            it is `Refused`, and the others are still gated.
    """
    from registry.errors import hint_command
    from registry.format.suite import suite_path

    root = changes.root
    refused = [Refused(_relative(folder, root), why, hint_command(says, str(_shown(folder))))
               for folder in changes.changed for why, says in [refusal(folder)] if why]
    failed = {r.folder for r in refused}
    todo = [f for f in changes.changed if _relative(f, root) not in failed]
    checks = list[GateCheck]()
    for index, folder in enumerate(todo, 1):
        if announce:
            announce(f"[{index}/{len(todo)}] {_relative(folder, root)}")
        removed, had = cases_removed(changes, folder, suite_path(folder))
        notes = [f"the change removes {len(removed)} of the {had} cases its suite held at "
                 f"{changes.base}: {', '.join(removed[:5])}"
                 + (f" (+{len(removed) - 5} more)" if len(removed) > 5 else "")] if removed \
            else []
        checks += gate_skill(folder, root, config, settings, store, min_lift=min_lift,
                             evaluate=evaluate, base_name=name_at(changes, folder),
                             notes=notes, namespace=namespace)
    return GateResult(changes.base, min_lift, checks,
                      [_relative(f, root) for f in changes.unchanged], changes.removed, refused)


def refusal(folder: Path) -> tuple[list[str], str]:
    """Why the changed skill in ``folder`` fails before any model call ([] when it may be
    evaluated), and the command that says so locally (`scan` or `validate`).

    First as `hubskills scan` says it, following no link: a secret or a high finding (a
    symlink, a device, an archive; publish refuses those without `--allow-risky`, and a pull
    without it). Then as `hubskills validate` says it: its errors (SKILL.md and its suites:
    publish refuses them), a `stale-signature` (publish refuses it, and every pull would), or a
    suite that does not load. Reads files only, so it costs nothing.
    """
    from registry.errors import HubskillsError
    from registry.format.skill import load_skill
    from registry.format.suite import load_suite, suite_path
    from registry.format.suite_check import check_suite
    from registry.format.validate import validate_skill
    from registry.publishing.checks import stale_signature
    from registry.scan import ScanFailed, check_findings, scan_folder

    shown = _shown(folder)
    try:
        check_findings(scan_folder(shown))
    except ScanFailed as risky:
        return [f"{shown.as_posix()}/{f.where}: {f.code}: {f.message}"
                for f in risky.findings], "scan"
    found = [p for p in validate_skill(shown) + check_suite(shown) if p.severity == "error"]
    found += stale_signature(shown)
    if found:
        return [f"{shown.as_posix()}/{p.location()}: {p.code}: {p.message}" for p in found], \
            "validate"
    try:  # what validate only warns of, such as no suite at all, is no evaluation here
        load_suite(suite_path(shown), skill_dir=load_skill(shown).path)
    except HubskillsError as err:
        return [err.message], "validate"
    return [], "validate"


def _shown(folder: Path) -> Path:
    """``folder`` as the person who ran the gate would type it: relative to the working folder
    when inside it (a reason names its files, and its hint a command to paste)."""
    for inside, here in ((folder, Path.cwd()), (folder.resolve(), Path.cwd().resolve())):
        if inside.is_relative_to(here):
            return inside.relative_to(here)
    return folder


def _relative(folder: Path, root: Path) -> str:
    try:
        return folder.relative_to(root).as_posix() or "."
    except ValueError:
        return str(folder)
