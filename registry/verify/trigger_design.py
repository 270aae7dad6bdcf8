"""An adaptive trigger run's rows held against its design: `hubskills verify` recomputes every
round, as `verify.design` does for A/B runs.

From the rows alone, grouped by the round each records, `trigger_design_problems` replays the
plan (`sequential_rates.check_rounds`, per model) and names each decision the design did not
make: a session its plan did not ask, a round asked after it stopped, rows that end where it
had not stopped although the run says it finished (a run cut at a lucky moment), a recorded
stop it did not make, a row without its round.
"""

from __future__ import annotations

import json
from typing import Any

from registry.errors import HubskillsError
from registry.results.runs import ResultRow, RunManifest


def is_adaptive(manifest: RunManifest) -> bool:
    """Whether the trigger run was planned by an adaptive design (its rows end where it
    stopped, short of the fixed plan)."""
    return manifest.design is not None and manifest.design.get("kind") == "adaptive"


def trigger_design_problems(manifest: RunManifest, rows: list[ResultRow],
                            kinds: dict[str, bool]) -> list[str]:
    """Why an adaptive trigger run's rows (the latest per session) are not what its design
    allows; ``kinds``: each query's class (should trigger) from the suite. Empty for a fixed
    run."""
    if not is_adaptive(manifest):
        return []
    from registry.results.sequential_rates import RateDesign, check_rounds, validate

    try:
        design = RateDesign.from_dict(manifest.design or {})
        validate(design, len(manifest.case_ids))
    except (HubskillsError, TypeError) as err:  # a design no hubskills could have run
        return [f"the run's design cannot be replayed: {getattr(err, 'message', err)}"]
    queries = {q: kinds.get(q, True) for q in manifest.case_ids}
    found = []
    for model in manifest.models:
        mine = [r for r in rows if r.model == model]
        unplaced = [r for r in mine if r.round is None or r.round < 1]
        if unplaced:
            found.append(f"{model}: {len(unplaced)} row(s) record no round, first "
                         f"{unplaced[0].case_id} #{unplaced[0].repeat}")
            continue
        rounds: list[list[tuple[str, int, bool | None]]] = \
            [[] for _ in range(max((r.round or 0 for r in mine), default=0))]
        for r in mine:
            rounds[(r.round or 1) - 1].append(
                (r.case_id, r.repeat, None if r.is_error else bool(r.activated)))
        stopped = (manifest.design_stops or {}).get(model)
        found += [f"{model}: {problem}" for problem in check_rounds(
            design, queries, rounds, complete=not manifest.is_partial, stopped=stopped)]
        if not manifest.is_partial and stopped is None:
            found.append(f"{model}: the run says it finished, but records no stop of its design")
    return found


def carried_design(first: ResultRow) -> dict[str, Any]:
    """The design a pushed run's rows carry (JSON: its parameters, `stops` and `cases`; {} for
    a fixed run or one unreadable, whose rows are then checked as a fixed run's, and fall
    short)."""
    try:
        found = json.loads(first.design) if first.design else {}
    except ValueError:
        found = {}
    return found if isinstance(found, dict) else {}
