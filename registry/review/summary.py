"""What a review tells: how often people preferred the skill's answer, and where they and the
checks disagree.

Each reviewed case gets one verdict: the skill's answer preferred when more of its reviewers
chose it than the baseline's, the baseline's when fewer, a tie when as many (and "both bad"
when every reviewer said so). The preference rate is over the cases with a preference, ties
and "both bad" apart, with the Wilson interval of the stats engine (`formulas.wilson_arrays`):
cases are the unit, as for the measured lift, and a reviewer's many answers on one case count
once. Feedback is people's word, never a measured result: it is shown beside the lift and no
badge, verdict or ranking reads it.

Agreement with the checks names the cases worth a new check: the skill's answer passed its
checks yet people preferred the baseline's, and the skill's answer failed yet people preferred
it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from registry.results.display import count
from registry.results.formulas import LEVEL, wilson_arrays
from registry.review.feedback import Answer
from registry.review.pairs import ReviewCase


@dataclass(frozen=True)
class PreferenceSummary:
    """The review's answers over cases (see the module docstring)."""

    cases: int  # cases shown for review
    reviewed: int  # cases with at least one answer
    answers: int
    skill: int  # cases where people preferred the skill's answer
    baseline: int
    ties: int
    both_bad: int
    rate: float | None  # skill / (skill + baseline); None without a preference
    low: float | None
    high: float | None
    checks_pass_people_baseline: tuple[str, ...] = ()  # skill passed, people chose baseline
    checks_fail_people_skill: tuple[str, ...] = ()  # skill failed, people chose it
    level: float = LEVEL

    @property
    def headline(self) -> str:
        """"people preferred the skill's answer in N of M reviewed cases"."""
        if not self.reviewed:
            return "no case reviewed yet"
        return (f"people preferred the skill's answer in {self.skill} of {self.reviewed} "
                f"reviewed case{'s' if self.reviewed != 1 else ''}")

    @property
    def interval(self) -> str:
        """"75% of 4 cases with a preference (95% CI 30%–95%)", or why there is none."""
        if self.rate is None or self.low is None or self.high is None:
            return "no case with a preference yet (ties and 'both bad' are counted apart)"
        decided = self.skill + self.baseline
        return (f"{self.rate:.0%} of {decided} case{'s' if decided != 1 else ''} with a "
                f"preference ({self.level:.0%} CI {self.low:.0%}–{self.high:.0%})")

    @property
    def apart(self) -> str:
        """"1 tie, 0 both bad"."""
        return f"{self.ties} tie{'s' if self.ties != 1 else ''}, {self.both_bad} both bad"

    def lines(self, name: Callable[[str], str] = str) -> list[str]:
        """The summary in words, one line each, each case id as `name` writes it (the Space:
        a code span, as a results file's text is never markup)."""
        lines = [f"{self.headline} ({self.apart}); {count(self.answers, 'answer')} on "
                 f"{self.reviewed} of {self.cases} cases", self.interval]
        if self.checks_pass_people_baseline:
            lines.append("the skill's answer passed its checks but people preferred the "
                         "baseline's: " + ", ".join(map(name, self.checks_pass_people_baseline)))
        if self.checks_fail_people_skill:
            lines.append("the skill's answer failed its checks but people preferred it: "
                         + ", ".join(map(name, self.checks_fail_people_skill)))
        return lines


def case_verdict(answers: Iterable[Answer]) -> str | None:
    """"skill", "baseline", "tie" or "both_bad" for one case's answers (None: none)."""
    counts = Counter(a.preferred for a in answers)
    if not counts:
        return None
    if counts["skill"] > counts["baseline"]:
        return "skill"
    if counts["baseline"] > counts["skill"]:
        return "baseline"
    return "both_bad" if counts["both_bad"] and not counts["skill"] and not counts["tie"] \
        else "tie"


def summarize(answers: list[Answer], cases: list[ReviewCase] | None = None
              ) -> PreferenceSummary:
    """The summary of `answers`; with `cases` (what was shown), agreement with the checks."""
    by_case: dict[tuple[str, str], list[Answer]] = {}
    for answer in answers:  # runs apart: a skill page sums the reviews of several runs
        by_case.setdefault((answer.run_id, answer.case), []).append(answer)
    verdicts = {key: case_verdict(found) for key, found in by_case.items()}
    counts = Counter(verdicts.values())
    skill, baseline = counts["skill"], counts["baseline"]
    rate = low = high = None
    if skill + baseline:
        rate = skill / (skill + baseline)
        lo, hi = wilson_arrays(np.array([rate]), np.array([skill + baseline]))
        low, high = float(lo[0]), float(hi[0])
    shown = {c.case: c for c in cases or []}
    passed_but = tuple(c for (_, c), v in verdicts.items()
                       if v == "baseline" and c in shown and shown[c].skill.passed is True)
    failed_but = tuple(c for (_, c), v in verdicts.items()
                       if v == "skill" and c in shown and shown[c].skill.passed is False)
    return PreferenceSummary(
        cases=len(shown) if cases is not None else len(by_case), reviewed=len(by_case),
        answers=len(answers), skill=skill, baseline=baseline, ties=counts["tie"],
        both_bad=counts["both_bad"], rate=rate, low=low, high=high,
        checks_pass_people_baseline=passed_but, checks_fail_people_skill=failed_but)
