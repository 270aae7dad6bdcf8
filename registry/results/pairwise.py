"""What a pairwise judge check's stored replies say: the preference in each order, the winner,
the verdict each arm gets, and a run's win counts and position-bias rate.

A `pairwise` check is graded once per sample pair (same model, case and repeat): the judge
compares the two arms' answers twice, the skill's answer first (as A) and then the baseline's.
Both replies are stored, as JSON, on both rows' verdict (`CheckVerdict.answer`), so everything
here is re-derived from them: the run's summary and `hubskills verify` alike. The judge and the
engine's pairing live in `evaluation/pairwise.py`; this module calls no model.

Verdicts: the arm both orders prefer passes the check and the other fails it. A tie (the orders
disagree, the judge says TIE, or an order gave no verdict) passes both: the check then moves
neither arm, so a pair's difference comes from the judge's agreed preference alone and a
position-biased judge cannot manufacture lift (see docs/evaluating.md, "Pairwise judge checks").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast

if TYPE_CHECKING:
    from registry.results.runs import ResultRow

Arm = Literal["baseline", "skill"]
Preference = Literal["A", "B", "TIE"]
SKILL_FIRST, BASELINE_FIRST = "skill_as_a", "baseline_as_a"  # the stored replies' keys
_VERDICT = re.compile(r"VERDICT\s*[:=]\s*\**\s*(A|B|TIE)\b", re.I)
_REASON = re.compile(r"REASON\s*[:=]\s*(.+)", re.I)


class BadAnswer(ValueError):
    """A stored pairwise answer that is not the two replies the engine writes."""


def parse_preference(reply: str) -> Preference | None:
    """The answer the judge preferred in one order (A, B or TIE), or None without a verdict."""
    match = _VERDICT.search(reply)
    # the pattern matches A, B or TIE in any case: upper-cased, a Preference
    return None if match is None else cast(Preference, match.group(1).upper())


def _arm(preference: Preference | None, first: Arm) -> str | None:
    """The arm (or "tie") a preference names when `first` was shown as A."""
    if preference is None or preference == "TIE":
        return None if preference is None else "tie"
    second = "baseline" if first == "skill" else "skill"
    return first if preference == "A" else second


@dataclass(frozen=True)
class Outcome:
    """One pair judged in both orders: each order's choice, in arms ("skill", "baseline",
    "tie", or None when that reply held no verdict), and what they decide."""

    skill_first: str | None
    baseline_first: str | None

    @property
    def winner(self) -> str | None:
        """The arm both orders preferred; None for a tie."""
        agreed = self.skill_first == self.baseline_first
        return self.skill_first if agreed and self.skill_first in ("skill", "baseline") else None

    @property
    def decided(self) -> bool:
        """Both orders gave a verdict (only then can they disagree)."""
        return self.skill_first is not None and self.baseline_first is not None

    @property
    def disagreed(self) -> bool:
        """Both orders gave a verdict and they differ: the judge's position bias showing."""
        return self.decided and self.skill_first != self.baseline_first

    def verdict(self, arm: str) -> tuple[bool, str]:
        """(passed, reason) of `arm`'s pairwise check."""
        said = f"skill first: {self.skill_first or 'no verdict'}; baseline first: " \
               f"{self.baseline_first or 'no verdict'}"
        if self.winner is None:
            why = "the orders disagreed" if self.disagreed else (
                "judged a tie" if self.decided else "an order gave no verdict")
            return True, f"tie ({why}; {said})"
        return self.winner == arm, f"{self.winner} preferred in both orders ({said})"


def answer_text(skill_first: str, baseline_first: str) -> str:
    """What a pairwise verdict stores: both replies (each already clipped), as JSON."""
    return json.dumps({SKILL_FIRST: skill_first, BASELINE_FIRST: baseline_first},
                      ensure_ascii=False)


def outcome_of(answer: str | None) -> Outcome:
    """The outcome a stored answer records.

    Raises:
        BadAnswer: the answer is not the two replies, as `answer_text` writes them.
    """
    try:
        replies = json.loads(answer or "")
    except ValueError:
        replies = None
    if not isinstance(replies, dict) or set(replies) != {SKILL_FIRST, BASELINE_FIRST} \
            or not all(isinstance(v, str) for v in replies.values()):
        raise BadAnswer("the stored pairwise answer is not the judge's two replies")
    return Outcome(_arm(parse_preference(replies[SKILL_FIRST]), "skill"),
                   _arm(parse_preference(replies[BASELINE_FIRST]), "baseline"))


@dataclass
class PairwiseSummary:
    """One model's pairwise checks over a run: each judged pair (a skill-arm sample's
    pairwise verdict) counted once. `bias_rate` is the share of pairs whose two orders both
    gave a verdict and disagreed (None when no pair had two)."""

    pairs: int = 0
    skill_wins: int = 0
    baseline_wins: int = 0
    ties: int = 0
    no_verdict: int = 0  # pairs where an order's reply held no verdict (ties)
    disagreed: int = 0
    bias_rate: float | None = None


def summarize_pairwise(rows: list[ResultRow]) -> PairwiseSummary | None:
    """The `PairwiseSummary` of one model's rows; None when no sample has a pairwise verdict."""
    summary, found = PairwiseSummary(), False
    for row in rows:
        if row.arm != "skill" or row.is_error:
            continue
        for check in row.checks:
            if check.type != "pairwise" or check.skipped or check.answer is None:
                continue
            found = True
            try:
                outcome = outcome_of(check.answer)
            except BadAnswer:
                continue  # `verify` names it; the summary counts what it can read
            summary.pairs += 1
            summary.skill_wins += outcome.winner == "skill"
            summary.baseline_wins += outcome.winner == "baseline"
            summary.ties += outcome.winner is None
            summary.no_verdict += not outcome.decided
            summary.disagreed += outcome.disagreed
    if not found:
        return None
    decided = summary.pairs - summary.no_verdict
    summary.bias_rate = summary.disagreed / decided if decided else None
    return summary
