"""An adaptive trigger run's rows held against its design: `hubskills verify` recomputes every
round, as `verify.design` does for A/B runs.

From the rows alone, grouped by the round each records, `trigger_design_problems` replays the
plan (`sequential_rates.check_rounds`, per model) and names each decision the design did not
make: a session its plan did not ask, a round asked after it stopped, rows that end where it
had not stopped although the run says it finished (a run cut at a lucky moment), a recorded
stop it did not make, a row without its round, or one past the plan's last round (named before
the replay, whose list of rounds a row's round would size).
"""

from __future__ import annotations

import json
from typing import Any

from registry.errors import HubskillsError
from registry.results.runs import ResultRow, RunManifest
from registry.verify.design import is_adaptive, rounds_problems


def trigger_design_problems(manifest: RunManifest, rows: list[ResultRow],
                            kinds: dict[str, bool]) -> list[str]:
    """Why an adaptive trigger run's rows (the latest per session) are not what its design
    allows; ``kinds``: each query's class (should trigger) from the suite. Empty for a fixed
    run."""
    if not is_adaptive(manifest):
        return []
    from registry.results.sequential_rates import RateDesign, check_rounds, n_rounds, validate

    try:
        design = RateDesign.from_dict(manifest.design or {})
        validate(design, len(manifest.case_ids))
    except (HubskillsError, TypeError) as err:  # a design no hubskills could have run
        return [f"the run's design cannot be replayed: {getattr(err, 'message', err)}"]
    queries = {q: kinds.get(q, True) for q in manifest.case_ids}
    return rounds_problems(
        manifest, rows, most=n_rounds(design), where=lambda r: f"{r.case_id} #{r.repeat}",
        entry=lambda r: (r.case_id, r.repeat, None if r.is_error else bool(r.activated)),
        check=lambda rounds, stopped: check_rounds(
            design, queries, rounds, complete=not manifest.is_partial, stopped=stopped))


def carried_design(first: ResultRow) -> dict[str, Any]:
    """The design a pushed run's rows carry (JSON: its parameters, `stops` and `cases`; {} for
    a fixed run or one unreadable, whose rows are then checked as a fixed run's, and fall
    short)."""
    try:
        found = json.loads(first.design) if first.design else {}
    except ValueError:
        found = {}
    return found if isinstance(found, dict) else {}
