"""Pending submissions: results proposed to someone else's results dataset, not yet reviewed.

A push from a token that may not write the results dataset opens a pull request on it (see
`hub_results.py`). The leaderboard ranks merged rows only; `pending_frame` returns the rows
that wait in open pull requests, for a separate view marked "unreviewed". A local registry
has no reviews: its pending frame is empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from registry.stores.base import SkillStore

if TYPE_CHECKING:
    import pandas as pd

UNREVIEWED = "unreviewed"


def pending_frame(store: SkillStore) -> pd.DataFrame:
    """Rows of the open pull requests on ``store``'s results dataset (empty when none).

    Raises:
        HubskillsError: the Hub could not be asked (offline, unreachable, no access).
    """
    from registry.hub import user_errors
    from registry.stores.frame import empty_frame
    from registry.stores.hub_results import HubResults

    results = getattr(store, "results", None)
    if store.kind == "local" or not isinstance(results, HubResults):
        return empty_frame()
    with user_errors():
        return results.pending_frame()
