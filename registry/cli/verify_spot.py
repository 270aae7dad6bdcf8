"""`hubskills verify ... --resample K`: after a verified replay, a spot check against the model.

The run is read again as the replay read it (a local run's folder; a pushed run's file, its
manifest rebuilt from its rows), the skill taken at the revision the run names (or the folder it
recorded, or --skill), and `verify_resample.spot_check` re-asks K samples per arm. The estimated
cost is shown before any call and refused over --max-cost. A spot check of a registry run is
recorded in its results dataset beside the replays (`stores.verifications`), so the leaderboard
can badge it `spot-checked` (or `mismatch`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from registry.cli import _output as out
from registry.errors import HubskillsError

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.evaluation.verify_resample import SpotCheck
    from registry.results.runs import ResultRow, RunManifest


def resample(target: str, run_id: str | None, revision: str | None, skill_dir: Path | None,
             settings: Settings, open_store: Callable[[], Any], *, k: int, seed: int,
             max_cost: float | None) -> tuple[SpotCheck, str | None]:
    """Spot-check the run (module docstring); returns the check and, for a registry run, the
    path of the record written.

    Raises:
        HubskillsError: over --max-cost, the skill cannot be read, or the evaluation refuses.
    """
    from registry.evaluation.verify import Verification, skill_folder
    from registry.evaluation.verify_resample import spot_check

    manifest, rows, data = _load(target, run_id, revision, settings, open_store)
    with ExitStack() as stack:
        scratch = Verification(manifest.run_id)
        folder = skill_folder(stack, manifest, scratch, skill_dir, open_store)
        if folder is None or scratch.problems:
            raise HubskillsError(
                f"no skill to re-ask run {manifest.run_id} with: "
                f"{(scratch.problems or list(scratch.unreplayable) or ['unknown'])[0]}",
                hint=f"hubskills verify {target} --skill FOLDER --resample {k}")
        check = spot_check(manifest, rows, folder, settings, k=k, seed=seed,
                           max_cost=max_cost, announce=_announce)
    if data is None:
        return check, None
    return check, _record(check, manifest, data, open_store())


def _load(target: str, run_id: str | None, revision: str | None, settings: Settings,
          open_store: Callable[[], Any]) -> tuple[RunManifest, list[ResultRow], bytes | None]:
    """The run's manifest and rows, and for a registry run its file's bytes (to hash)."""
    from registry.evaluation.verify import Verification, parse_rows
    from registry.evaluation.verify_registry import manifest_from_rows, read_pushed
    from registry.results.runs import read_manifest, read_rows

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


def _announce(check: SpotCheck) -> None:
    cost = "unknown (the run records no costs)" if check.estimated_cost is None \
        else f"about ${check.estimated_cost:.4f}"
    out.info(f"Spot check: re-asking {check.k} samples per arm over {len(check.cases)} "
             f"case(s) (seed {check.seed}); estimated cost {cost}")


def _record(check: SpotCheck, manifest: RunManifest, data: bytes, store: Any) -> str:
    from registry.evaluation.verify_resample import spot_record
    from registry.stores.verifications import append_record, rows_hash, shelf_of

    shelf = shelf_of(store)
    if shelf is None:
        raise HubskillsError(f"a {store.kind} registry keeps no verification records",
                             hint="hubskills verify RUN_ID --resample K  # a local run")
    record = spot_record(check, manifest.run_id, rows_hash(data),
                         skill_repo=manifest.skill_repo, skill_revision=manifest.skill_revision,
                         verified_by=shelf.who())
    return append_record(store, record)


def render(check: SpotCheck, record: str | None) -> None:
    """The spot check's finding, one line per arm."""
    found = "consistent" if check.consistent else "inconsistent"
    out.result(f"spot check: {found} (K={check.k} per arm, fresh run {escape(str(check.run_id))}"
               f", false alarms at most {check.alpha:g})")
    for arm in check.arms:
        out.result(f"  {arm.arm}: {arm.pairs} pairs, {arm.b} passed only as stored, {arm.c} "
                   f"only when re-asked, p={arm.p_value:.3g}")
    if record:
        out.result(f"  recorded as {escape(record)}")
