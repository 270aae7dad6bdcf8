"""Pending submissions: results proposed to someone else's results dataset, not yet reviewed.

A push from a token that may not write the results dataset opens a pull request on it (see
`hub_results.py`). The leaderboard ranks merged rows only; `pending_frame` returns the rows
that wait in open pull requests, for a separate view marked "unreviewed". A local registry
has no reviews: its pending frame is empty.

Who submitted a pending row is the pull request's author as the Hub reports it: anyone can
write any name into a row's `produced_by`, so `pending_frame` replaces it with the author and
keeps a differing claim in `claimed_by` (`forged_claims` lists them), for a view to flag.

What is read is bounded, since a page load reads it: only files the gate could admit (a run
path, `records.run_id_of`, of at most `MAX_BYTES`), at most `SHOWN_RUNS` of a pull request and
`SHOWN_PRS` pull requests; the rest is left out unread (the review says why it is refused).
The Space's view (`pending_view`) reads at most `VIEW_BYTES` a run file: a larger one is
listed by its size from the pull request's listing, never parsed in the serving process (its
replay, in a child process, says what its rows hold).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from registry.stores.base import SkillStore
from registry.stores.records import run_id_of
from registry.verify.gate import MB

if TYPE_CHECKING:
    import pandas as pd

    from registry.hub import PullRequest, RemoteFile

UNREVIEWED = "unreviewed"
CLAIMED = "claimed_by"
SHOWN_PRS, SHOWN_RUNS, MAX_BYTES = 50, 20, 64 * MB
VIEW_BYTES = 8 * MB


def pending_frame(store: SkillStore) -> pd.DataFrame:
    """Rows of the open pull requests on ``store``'s results dataset (empty when none), each
    `produced_by` its pull request's author (see the module docstring).

    Raises:
        HubskillsError: the Hub could not be asked (offline, unreachable, no access).
    """
    return pending_view(store, MAX_BYTES)[0]


def pending_view(store: SkillStore, max_bytes: int = VIEW_BYTES, *,
                 listed: list[tuple[PullRequest, list[RemoteFile]]] | None = None
                 ) -> tuple[pd.DataFrame, list[tuple[PullRequest, RemoteFile]]]:
    """`pending_frame`'s rows, reading only run files of at most ``max_bytes``, and the run
    files left unread for their size (each with its pull request; sizes from the listing);
    ``listed``: `store.results.pending()`'s answer, when the caller has it (not asked again).

    Raises:
        HubskillsError: the Hub could not be asked (offline, unreachable, no access).
    """
    import pandas as pd

    from registry.stores.frame import empty_frame
    from registry.stores.verifications import pending_keys

    listed = store.results.pending() if listed is None else listed
    keys = pending_keys((pr.num, run_id) for pr, added in listed for f in added
                        if (run_id := run_id_of(f.path)) is not None)  # as `pending_badges`
    listed = listed[:SHOWN_PRS]
    waiting = [(pr, _readable(added, max_bytes)) for pr, added in listed]
    unread = [(pr, f) for pr, added in listed for f in _readable(added, MAX_BYTES)
              if f.size > max_bytes]
    frames = [_keyed(attributed(store.results.pending_frame(pr, added), pr.author), pr.num,
                     keys) for pr, added in waiting if added]
    if not frames:
        return attributed(empty_frame(), ""), unread
    joined = pd.concat(frames, ignore_index=True)
    strings = [name for name, kind in frames[0].dtypes.items()
               if isinstance(kind, pd.CategoricalDtype)]
    return joined.astype(dict.fromkeys(strings, "category")), unread


def _keyed(frame: pd.DataFrame, num: int, keys: dict[tuple[int, str], str]) -> pd.DataFrame:
    """``frame`` (pull request ``num``'s rows) with each run id under its `pending_keys` key:
    a run id another, older pull request adds too becomes `RUN_ID (#N)`."""
    renamed = {rid: keys.get((num, rid), rid) for rid in frame["run_id"].dropna().unique()}
    if all(rid == key for rid, key in renamed.items()):
        return frame
    return frame.assign(run_id=frame["run_id"].astype(object).map(renamed))


def _readable(added: list[RemoteFile], max_bytes: int = MAX_BYTES) -> list[RemoteFile]:
    """The files of ``added`` a view may read (module docstring)."""
    return [f for f in added if run_id_of(f.path) and f.size <= max_bytes][:SHOWN_RUNS]


def attributed(frame: pd.DataFrame, author: str) -> pd.DataFrame:
    """``frame`` with every row's `produced_by` set to ``author``; a row that named anyone
    else keeps that name in `claimed_by` (None when it named the author, or nobody)."""
    import pandas as pd

    claimed = frame["produced_by"].astype(object)
    differs = claimed.notna() & (claimed != author)
    return frame.assign(produced_by=pd.Categorical([author] * len(frame)),
                        **{CLAIMED: claimed.where(differs, None)})


def forged_claims(frame: pd.DataFrame) -> dict[str, list[str]]:
    """Per run id, the other producers its rows claimed (sorted); runs that claimed none are
    left out."""
    if CLAIMED not in frame or frame.empty:
        return {}
    claims = frame.loc[frame[CLAIMED].notna(), ["run_id", CLAIMED]].astype(str)
    return {run: sorted(set(group[CLAIMED])) for run, group in claims.groupby("run_id")}
