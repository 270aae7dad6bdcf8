"""Verification badges: what has been checked about the run behind a leaderboard entry.

A run's badge comes from the verification records kept beside its rows (`stores.verifications`)
for exactly those rows (run id and rows hash):

- ``replayed``: a replay regraded every sample and recomputed the summary, and both matched;
- ``spot-checked``: replayed, and re-asking K samples of the recorded model found pass rates
  consistent with the claimed ones (K, when and by whom in ``reason``);
- ``mismatch``: a replay or a spot check found a difference (the first one in ``reason``);
- ``unverified``: no record yet, or the run could not be replayed (why, in ``reason``).

Replay proves the grading and the arithmetic, not the outputs: only a spot check speaks to
those. Only ``replayed`` and ``spot-checked`` entries are ranked when badges are given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

REPLAYED, SPOT_CHECKED, MISMATCH, UNVERIFIED = "replayed", "spot-checked", "mismatch", \
    "unverified"
VERIFICATIONS = (SPOT_CHECKED, REPLAYED, MISMATCH, UNVERIFIED)
RANKABLE = frozenset({REPLAYED, SPOT_CHECKED})
REPLAY, SPOT_CHECK = "replay", "spot-check"  # the kinds of verification record
# A spot check's two-sided level per arm (`verify.resample` tests at it), and the fewest samples
# per arm whose sign test can fall under half of it at all: all K pairs disagreeing one way gives
# p = 2 / 2^K, so 9 at 0.01 (0.0039 < 0.005). A consistent check of fewer could not have failed,
# and the board does not count it (a record of an older hubskills may hold fewer).
SPOT_ALPHA = 0.01
MIN_SPOT_K = next(k for k in range(1, 64) if 2 * 0.5 ** k < SPOT_ALPHA / 2)


def too_few_to_fail(k: int) -> str | None:
    """Why a spot check of ``k`` samples per arm could only pass, or None when it can fail."""
    if k >= MIN_SPOT_K:
        return None
    return (f"--resample {k} is too few to find anything: with under {MIN_SPOT_K} samples per "
            f"arm, the sign test at {SPOT_ALPHA / 2:g} cannot call even pairs that all "
            "disagree inconsistent, so the check could only pass")


@dataclass(frozen=True)
class Badge:
    """A run's verification (one of `VERIFICATIONS`) and what to say about it."""

    verification: str
    reason: str = ""

    @property
    def is_rankable(self) -> bool:
        """Whether an entry with this badge may be ranked (replayed or better)."""
        return self.verification in RANKABLE

    def status(self) -> str:
        """Why an entry with this badge is unranked ("" when it may be ranked)."""
        if self.is_rankable:
            return ""
        return f"{self.verification}: {self.reason}" if self.reason else self.verification


NOT_REPLAYED = Badge(UNVERIFIED, "not replayed yet")


def badge_from(records: Iterable[Mapping[str, Any]]) -> Badge:
    """The badge that a run's records (all for the same rows, any order) add up to.

    The newest replay decides (a later replay may run a corrected hubskills); a spot check
    counts only on a replayed run: an inconsistent one is a mismatch, a consistent one makes
    the run ``spot-checked``.
    """
    ordered = sorted(records, key=lambda r: str(r.get("verified_at") or ""))
    replays = [r for r in ordered if r.get("kind", REPLAY) == REPLAY]
    if not replays:
        return NOT_REPLAYED
    replay = replays[-1]
    status, problem = replay.get("status"), replay.get("first_problem") or ""
    if status == "mismatch":
        return Badge(MISMATCH, problem or "the replay differs from the stored run")
    if status != "verified":
        return Badge(UNVERIFIED, f"not replayable: {problem}" if problem else "not replayable")
    checks = [r for r in ordered if r.get("kind") == SPOT_CHECK]
    if not checks:
        return Badge(REPLAYED, _who(replay))
    check = checks[-1]
    if check.get("status") == "inconclusive":
        return Badge(REPLAYED, f"{_who(replay)}; a spot check compared too few samples to "
                               f"count: {check.get('first_problem') or 'inconclusive'}")
    if check.get("status") != "consistent":
        return Badge(MISMATCH, f"spot check of {check.get('k')} samples per arm: "
                               f"{check.get('first_problem') or 'inconsistent'}")
    compared = _compared(check)
    if compared < MIN_SPOT_K:  # it could only pass
        return Badge(REPLAYED, f"{_who(replay)}; a spot check of {compared} samples per arm "
                               f"is too few to count (under {MIN_SPOT_K})")
    return Badge(SPOT_CHECKED, f"K={check.get('k')}, {_who(check)}")


def _compared(check: Mapping[str, Any]) -> int:
    """The fewest pairs a spot check's record says an arm compared (K where an older record
    does not say; 0 where it makes no sense)."""
    arms = check.get("arms")
    if isinstance(arms, list) and arms:
        pairs = [arm.get("pairs") if isinstance(arm, Mapping) else None for arm in arms]
        return min(p if isinstance(p, int) and not isinstance(p, bool) else 0 for p in pairs)
    k = check.get("k")
    return k if isinstance(k, int) and not isinstance(k, bool) else 0


def _who(record: Mapping[str, Any]) -> str:
    """`by NAME on DATE` for a record."""
    return f"by {record.get('verified_by') or 'unknown'} on " \
        f"{str(record.get('verified_at') or '')[:10] or 'an unknown date'}"


def run_badges(badges: Mapping[str, Badge] | None, run_ids: Iterable[str]) -> list[Badge]:
    """Each run's badge (`NOT_REPLAYED` for a run without one)."""
    found = badges or {}
    return [found.get(run, NOT_REPLAYED) for run in run_ids]


def is_shown(entry: Any) -> bool:
    """Whether the default view shows a leaderboard entry: replayed or better, or no badge
    looked up (``verification`` None)."""
    return entry.verification is None or entry.verification in RANKABLE
