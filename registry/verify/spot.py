"""`hubskills verify ... --resample K`, run: a spot check of a run read from here or a registry.

`load_run` reads the run (a local run's folder, or a pushed run's file from a registry's results
dataset, its manifest rebuilt from its rows as the replay rebuilds it: `verify_pushed`),
`resample_run` takes the skill the run names (the revision it names, read from the registry, the
folder it recorded, or a given folder) and `spot_check` re-asks the recorded model for K samples
per arm as a fresh local run (`use_cache=False`) and tests them against the stored ones. The
test, the draw and the cost estimate are `verify.resample`'s (pure); this module is the part
that reads a store and `Settings` and calls the model. The estimate is the catalogue price of
the suite's prompts, never the rows' costs; the fresh run holds `max_cost` and `max_calls` call
by call (`providers.CostCap`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, cast

from registry.errors import HubskillsError
from registry.evaluation.dependencies import (  # a seam's types, read at runtime
    Dependency,
    DependencyLoader,
)
from registry.verify.resample import (
    ALPHA,
    SpotCheck,
    check_limits,
    compare,
    estimate,
    plan_check,
)

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.evaluation.arms import Placement
    from registry.evaluation.config import RunMode
    from registry.evaluation.engine import EvalRun
    from registry.format.skill import Skill
    from registry.format.suite import Suite
    from registry.results.runs import ResultRow, RunManifest
    from registry.stores.base import SkillStore


def spot_check(manifest: RunManifest, rows: list[ResultRow], skill_dir: Path,
               settings: Settings, *, k: int, seed: int = 0, alpha: float = ALPHA,
               max_cost: float | None = None, max_calls: int | None = None,
               announce: Callable[[SpotCheck], None] | None = None,
               command: str | None = None,
               dependencies: DependencyLoader | None = None) -> SpotCheck:
    """Re-ask K samples per arm of the run (`verify.resample`) and test them against the
    stored. ``announce`` is shown the plan and its estimated cost before any call (and before
    a refusal); the fresh run never spends past ``max_cost`` nor calls past ``max_calls``.
    ``command`` is the one a refusal's hint repeats (default: a local run's). A skill that
    requires others is re-asked with the revisions of them the run recorded, which
    ``dependencies`` loads (`evaluation.dependencies.pinned`); a run that records none is
    refused before any call.

    Raises:
        HubskillsError: over ``max_cost`` or ``max_calls``, a model without a known price under
            ``max_cost`` without ``max_calls`` (all before any call), a trigger run, or what
            the evaluation refuses (no key, no sandbox).
    """
    from registry.agent import Budget
    from registry.evaluation.config import EvalConfig
    from registry.evaluation.dependencies import pinned
    from registry.evaluation.engine import run_evaluation
    from registry.format.skill import load_skill

    skill = load_skill(skill_dir)
    held = pinned(dependencies, manifest, skill, f"hubskills verify {manifest.run_id}")
    loaded = [] if held is None else held(skill, [], root=manifest.skill_repo, recorded=None)
    slots, check = _priced(manifest, rows, skill_dir, k, seed, alpha,
                           tuple(d.skill for d in loaded))
    if announce is not None:
        announce(check)
    check_limits(check, manifest, max_cost, max_calls,
                 command or f"hubskills verify {manifest.run_id} --resample {k}")
    # the mode and placement as the run's manifest recorded them from its own EvalConfig
    config = EvalConfig(
        models=list(manifest.models), runs=max(r for _, r in slots) + 1,
        mode=cast("RunMode", manifest.mode), placement=cast("Placement", manifest.placement),
        judge=manifest.judge,
        case_ids=check.cases, temperature=manifest.temperature,
        max_tokens=manifest.max_tokens, use_cache=False, max_cost=max_cost,
        max_calls=max_calls, harness=manifest.harness,
        budget=Budget.recorded(manifest.agent_budget) if manifest.agent_budget else Budget(),
        dependencies=None if held is None else _given(loaded), via="spot-check")
    fresh = run_evaluation(skill_dir, config, settings)
    _account(check, fresh)
    wanted = set(slots)
    compare(rows, [r for r in fresh.rows if (r.case_id, r.repeat) in wanted], check)
    return check


def priced_plan(target: str, manifest: RunManifest, rows: list[ResultRow],
                open_store: Callable[[], SkillStore], *, k: int, seed: int = 0,
                max_cost: float | None = None, max_calls: int | None = None,
                announce: Callable[[SpotCheck], None] | None = None) -> SpotCheck:
    """The spot check of run ``manifest`` of ``target`` (a registry run) as planned and priced
    before anything is started elsewhere (a Job): its cases drawn, its cost estimated from the
    catalogue with the skill read at the revision the run names, ``announce``d, and refused over
    ``max_cost`` or ``max_calls``. No model is called.

    Raises:
        HubskillsError: no skill to price it with, a trigger run, or what `check_limits`
            refuses.
    """
    from registry.format.requires import requirements
    from registry.format.skill import load_skill

    with ExitStack() as stack:
        folder = _skill_folder(stack, target, manifest, None, open_store, k)
        needs = requirements(load_skill(folder).frontmatter)
        if needs:
            raise HubskillsError(f"{target} requires {', '.join(map(str, needs))}: a spot check "
                                 "on Jobs does not load a skill's dependencies yet",
                                 hint=f"hubskills verify {target} --run {manifest.run_id} "
                                      f"--resample {k}  # here, where they are loaded")
        _, check = _priced(manifest, rows, folder, k, seed, ALPHA)
    if announce is not None:
        announce(check)
    check_limits(check, manifest, max_cost, max_calls,
                 f"hubskills verify {target} --run {manifest.run_id} --resample {k} --on jobs")
    return check


def _priced(manifest: RunManifest, rows: list[ResultRow], skill_dir: Path, k: int, seed: int,
            alpha: float, required: tuple[Skill, ...] = ()
            ) -> tuple[list[tuple[str, int]], SpotCheck]:
    """The slots and the check, priced from the catalogue (`resample.estimate`; the skill
    arm's prompts with the skills it `required`)."""
    slots, check = plan_check(manifest, rows, k, seed, alpha)
    estimate(check, manifest, *_skill_and_suite(skill_dir, manifest),
             runs=max(r for _, r in slots) + 1, dependencies=required)
    return slots, check


def _given(loaded: list[Dependency]) -> DependencyLoader:
    """A loader that answers the dependencies already loaded (to price the check)."""

    def load(skill: Skill, needs: object, *, root: str | None,
             recorded: object) -> list[Dependency]:
        return loaded

    return load


def _account(check: SpotCheck, fresh: EvalRun) -> None:
    """The fresh run's id, what its calls cost (priced here, from their usage: samples the cap
    cut short included) and, when it stopped early, why."""
    manifest = fresh.manifest
    check.run_id, check.spent = manifest.run_id, fresh.spent
    if manifest.status != "complete":
        check.note = f"{manifest.note or manifest.status}: {len(fresh.rows)} of " \
                     f"{manifest.samples_planned} samples re-asked"


def _skill_and_suite(skill_dir: Path, manifest: RunManifest) -> tuple[Skill, Suite]:
    """The skill folder and the suite the run graded (agent mode's own, when it has one)."""
    from registry.format.skill import load_skill
    from registry.format.suite import load_suite, suite_path

    skill = load_skill(skill_dir)
    if manifest.mode == "agent":
        from registry.evaluation.agent_mode import agent_suite_path

        return skill, load_suite(agent_suite_path(skill.path), skill_dir=skill.path)
    return skill, load_suite(suite_path(skill.path), skill_dir=skill.path)


def load_run(target: str, run_id: str | None, revision: str | None, settings: Settings,
             open_store: Callable[[], SkillStore],
             ) -> tuple[RunManifest, list[ResultRow], bytes | None]:
    """The run to spot-check: a local run ``target`` (``run_id`` None), else run ``run_id`` of
    skill ``target`` in the registry's results (at ``revision``), its manifest rebuilt from its
    rows; for a registry run also its file's bytes (to hash).

    Raises:
        HubskillsError: no such run, or rows that do not replay.
    """
    from registry.results.runs import read_manifest, read_rows
    from registry.verify.pushed import manifest_from_rows, read_pushed
    from registry.verify.replay import Verification, parse_rows

    if run_id is None:
        return read_manifest(settings.runs_dir, target), read_rows(settings.runs_dir, target), \
            None
    data = read_pushed(open_store(), run_id, revision)
    report = Verification(run_id)
    rows = parse_rows(data.decode("utf-8", errors="replace").splitlines(), run_id, report)
    manifest = manifest_from_rows(rows, target, report)
    if manifest is None:  # the replay said why already
        raise HubskillsError(f"run {run_id} cannot be re-asked: its rows do not replay",
                             hint=f"hubskills verify {target} --run {run_id}")
    return manifest, rows, data


def resample_run(target: str, run_id: str | None, revision: str | None,
                 skill_dir: Path | None, settings: Settings,
                 open_store: Callable[[], SkillStore], *, k: int, seed: int,
                 max_cost: float | None, max_calls: int | None = None,
                 announce: Callable[[SpotCheck], None] | None = None,
                 dependencies: DependencyLoader | None = None,
                 ) -> tuple[SpotCheck, RunManifest, bytes | None]:
    """Spot-check a run read by `load_run` with the skill it names (the revision it names, the
    folder it recorded, or ``skill_dir``); the check, the run's manifest and its file's bytes.

    Raises:
        HubskillsError: over ``max_cost`` or ``max_calls``, no skill to re-ask with, or what
            `spot_check` refuses.
    """
    manifest, rows, data = load_run(target, run_id, revision, settings, open_store)
    with ExitStack() as stack:
        folder = _skill_folder(stack, target, manifest, skill_dir, open_store, k)
        where = f"{target} --run {run_id}" if run_id else target
        check = spot_check(manifest, rows, folder, settings, k=k, seed=seed,
                           max_cost=max_cost, max_calls=max_calls, announce=announce,
                           command=f"hubskills verify {where} --resample {k}",
                           dependencies=dependencies)
    return check, manifest, data


def _skill_folder(stack: ExitStack, target: str, manifest: RunManifest, skill_dir: Path | None,
                  open_store: Callable[[], SkillStore], k: int) -> Path:
    """The skill the run names (the revision it names, the folder it recorded, or
    ``skill_dir``), held open by ``stack``.

    Raises:
        HubskillsError: there is none to read.
    """
    from registry.verify.replay import Verification, skill_folder

    scratch = Verification(manifest.run_id)
    folder = skill_folder(stack, manifest, scratch, skill_dir, open_store)
    if folder is None or scratch.problems:
        raise HubskillsError(
            f"no skill to re-ask run {manifest.run_id} with: "
            f"{(scratch.problems or list(scratch.unreplayable) or ['unknown'])[0]}",
            hint=f"hubskills verify {target} --skill FOLDER --resample {k}")
    return folder
