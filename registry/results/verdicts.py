"""The verdict in words: the rule `stats.table` applies per group, and what it says.

A run's verdict is "helps" or "hurts" only when the lift's interval excludes 0 *and* the exact
test agrees in direction; a suite of fewer than `MIN_CASES` cases is "too few cases"; errors
that could decide it make it inconclusive (`errors_verdict`). `stats` applies these rules to
its arrays (docs/statistics.md).
"""

from __future__ import annotations

from registry.results.formulas import ALPHA

MIN_CASES = 10
VERDICT_RULE = ("helps/hurts when the interval and the exact test agree, and only if it holds "
                "with every errored case counted against it")
VERDICTS = ("helps", "hurts", "no detectable effect", "too few cases", "inconclusive")


def verdict(lo: float, hi: float, p_value: float, b: int, c: int, *, cases: int,
            uneven: int = 0, alpha: float = ALPHA) -> str:
    """The verdict rule (module docstring): errors first, then size, then interval AND test
    (at level ``alpha``: an adaptive run's look spends less than `ALPHA`)."""
    if uneven:
        return errors_verdict(uneven)
    if cases < MIN_CASES:
        return f"too few cases ({cases})"
    significant = p_value < alpha
    if lo > 0 and significant and b > c:
        return "helps"
    if hi < 0 and significant and c > b:
        return "hurts"
    return "no detectable effect"


def errors_verdict(cases: int) -> str:
    """The verdict of a run whose errors in ``cases`` cases could decide it: "inconclusive:
    errors in N cases", never ranked (`is_conclusive`)."""
    return f"inconclusive: errors in {cases} case{'s' if cases != 1 else ''}"


def is_conclusive(verdict_text: str) -> bool:
    """Whether a verdict is a measurement that can be ranked (not too few cases or errors)."""
    return not verdict_text.startswith(("too few cases", "inconclusive"))


def disagreement(lo: float, hi: float, p_value: float, b: int, c: int,
                 alpha: float = ALPHA) -> str | None:
    """One sentence when the interval and the exact test disagree at level ``alpha`` (None when
    they agree)."""
    excludes = lo > 0 or hi < 0
    significant = p_value < alpha and b != c
    if excludes and not significant:
        return (f"The interval excludes 0 but the exact test does not (p = {p_value:.3g}; "
                f"{b} cases up, {c} down): too few cases changed to rule out chance, and the "
                "verdict needs both.")
    if significant and not excludes:
        return (f"The exact test finds more cases going one way (p = {p_value:.3g}; {b} up, "
                f"{c} down) but the interval includes 0: the changes are too small or too "
                "mixed to bound the lift away from 0, and the verdict needs both.")
    if excludes and significant and (lo > 0) != (b > c):
        return (f"The interval and the exact test point in opposite directions ({b} cases up, "
                f"{c} down): no verdict.")
    return None
