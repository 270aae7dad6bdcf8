"""`hubskills verify ... --resample K`, run: a spot check of a run read from here or a registry.

`load_run` reads the run (a local run's folder, or a pushed run's file from a registry's results
dataset, its manifest rebuilt from its rows as the replay rebuilds it: `verify_pushed`),
`resample_run` takes the skill the run names (the revision it names, read from the registry, the
folder it recorded, or a given folder) and `spot_check` re-asks the recorded model for K samples
per arm as a fresh local run (`use_cache=False`) and tests them against the stored ones. The
test, the draw and the cost estimate are `evaluation.verify_resample`'s (pure); this module is
the part that reads a store and `Settings` and calls the model.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from registry.errors import HubskillsError
from registry.verify.resample import ALPHA, SpotCheck, check_cost, compare, plan_check

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.results.runs import ResultRow, RunManifest
    from registry.stores.base import SkillStore


def spot_check(manifest: RunManifest, rows: list[ResultRow], skill_dir: Path,
               settings: Settings, *, k: int, seed: int = 0, alpha: float = ALPHA,
               max_cost: float | None = None,
               announce: Callable[[SpotCheck], None] | None = None) -> SpotCheck:
    """Re-ask K samples per arm of the run (`evaluation.verify_resample`) and test them against
    the stored. ``announce`` is shown the plan and its estimated cost before any call (and
    before a refusal).

    Raises:
        HubskillsError: over ``max_cost`` (before any call), a trigger run, or what the
            evaluation refuses (no key, no sandbox).
    """
    from registry.agent import Budget
    from registry.evaluation.config import EvalConfig
    from registry.evaluation.engine import run_evaluation

    slots, check = plan_check(manifest, rows, k, seed, alpha)
    if announce is not None:
        announce(check)
    check_cost(check.estimated_cost, max_cost)
    config = EvalConfig(
        models=list(manifest.models), runs=max(r for _, r in slots) + 1, mode=manifest.mode,
        placement=manifest.placement, judge=manifest.judge,  # type: ignore[arg-type]
        case_ids=check.cases, temperature=manifest.temperature,
        max_tokens=manifest.max_tokens, use_cache=False, max_cost=max_cost,
        harness=manifest.harness,
        budget=Budget(**manifest.agent_budget) if manifest.agent_budget else Budget())
    fresh = run_evaluation(skill_dir, config, settings)
    check.run_id = fresh.manifest.run_id
    wanted = set(slots)
    compare(rows, [r for r in fresh.rows if (r.case_id, r.repeat) in wanted], check)
    return check


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
                 max_cost: float | None, announce: Callable[[SpotCheck], None] | None = None,
                 ) -> tuple[SpotCheck, RunManifest, bytes | None]:
    """Spot-check a run read by `load_run` with the skill it names (the revision it names, the
    folder it recorded, or ``skill_dir``); the check, the run's manifest and its file's bytes.

    Raises:
        HubskillsError: over ``max_cost``, no skill to re-ask with, or what `spot_check`
            refuses.
    """
    from registry.verify.replay import Verification, skill_folder

    manifest, rows, data = load_run(target, run_id, revision, settings, open_store)
    with ExitStack() as stack:
        scratch = Verification(manifest.run_id)
        folder = skill_folder(stack, manifest, scratch, skill_dir, open_store)
        if folder is None or scratch.problems:
            raise HubskillsError(
                f"no skill to re-ask run {manifest.run_id} with: "
                f"{(scratch.problems or list(scratch.unreplayable) or ['unknown'])[0]}",
                hint=f"hubskills verify {target} --skill FOLDER --resample {k}")
        check = spot_check(manifest, rows, folder, settings, k=k, seed=seed,
                           max_cost=max_cost, announce=announce)
    return check, manifest, data
