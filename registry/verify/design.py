"""An adaptive run's rows held against its design: `hubskills verify` recomputes every round.

An adaptive run (`RunManifest.design`) asks in rounds that `results.sequential` plans; each row
records the round it was asked in and the manifest where each model's plan stopped
(`design_stops`). From the rows alone, grouped by round, `design_problems` replays the plan
(`sequential.check_rounds`) and names each decision the design did not make: a sample its plan
did not ask, a round asked after it stopped, rows that end where it had not stopped although
the run says it finished (a run cut at a lucky moment), a recorded stop it did not make, a row
without its round. A fixed run has no rounds: its plan is checked as before (`replay`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from registry.errors import HubskillsError
from registry.results.runs import ResultRow, RunManifest

Entry = TypeVar("Entry")  # what a plan's check reads of one row


def is_adaptive(manifest: RunManifest) -> bool:
    """Whether the run was planned by an adaptive design (its rows end where it stopped)."""
    return manifest.design is not None and manifest.design.get("kind") == "adaptive"


def design_problems(manifest: RunManifest, rows: list[ResultRow]) -> list[str]:
    """Why an adaptive run's rows are not what its design allows (`results.sequential.
    check_rounds`, per model): a sample its plan did not ask, a round asked after it stopped,
    rows that end where it had not stopped although the run says it finished, a recorded stop
    it did not make, a row without its round. Empty for a fixed run."""
    if not is_adaptive(manifest):
        return []
    from registry.results.sequential import Design, check_rounds, n_rounds, validate_design

    try:
        design = Design.from_record(manifest.design or {})
        validate_design(design, len(manifest.case_ids))
    except (HubskillsError, TypeError) as err:  # a design no hubskills could have run
        return [f"the run's design cannot be replayed: {getattr(err, 'message', err)}"]
    return rounds_problems(
        manifest, rows, most=n_rounds(design, len(manifest.case_ids)),
        where=lambda r: f"{r.case_id} #{r.repeat} {r.arm}",
        entry=lambda r: (r.case_id, r.arm, r.repeat, None if r.is_error else r.passed),
        check=lambda rounds, stopped: check_rounds(
            design, rounds, cases=manifest.case_ids, complete=not manifest.is_partial,
            stopped=stopped))


def rounds_problems(manifest: RunManifest, rows: list[ResultRow], *,
                    where: Callable[[ResultRow], str], entry: Callable[[ResultRow], Entry],
                    check: Callable[[list[list[Entry]], dict[str, Any] | None], list[str]],
                    most: int | None = None) -> list[str]:
    """Each model's rows grouped by the round each records (``entry``: what the plan's check
    reads of a row) and replayed by ``check(rounds, stopped)``, its problems named by model; a
    row without its round (``where``: how one is named), or past the plan's ``most`` rounds, is
    named before any replay, and a finished run must record where its design stopped. Shared by
    A/B runs (`design_problems`) and trigger runs (`verify.trigger_design`)."""
    found = []
    for model in manifest.models:
        mine = [r for r in rows if r.model == model]
        unplaced = [r for r in mine if r.round is None or r.round < 1]
        if unplaced:
            found.append(f"{model}: {len(unplaced)} row(s) record no round, first "
                         f"{where(unplaced[0])}")
            continue
        beyond = [r for r in mine if most is not None and (r.round or 0) > most]
        if beyond:  # a row's round sizes the replay: one past the plan is refused, unread
            found.append(f"{model}: {len(beyond)} row(s) record a round past the design's "
                         f"{most}, first round {beyond[0].round} ({beyond[0].case_id})")
            continue
        rounds: list[list[Entry]] = [[] for _ in range(max((r.round or 0 for r in mine),
                                                           default=0))]
        for r in mine:
            rounds[(r.round or 1) - 1].append(entry(r))
        stopped = (manifest.design_stops or {}).get(model)
        found += [f"{model}: {problem}" for problem in check(rounds, stopped)]
        if not manifest.is_partial and stopped is None:
            found.append(f"{model}: the run says it finished, but records no stop of its design")
    return found
