"""Errors are unchecked claims: a verdict must hold with its errored samples filled in against it.

Issue 37, hole 3: turning both arms of the cases where the skill hurts into transport errors kept
the error counts even, so a real +0 showed as +100 "helps" and ranked first. The engine now fills
every errored sample the worst way for the verdict (for "helps": a failure with the skill, a pass
without; the reverse for "hurts") and calls the run "inconclusive: errors in N cases" when the
verdict does not survive. The same value reaches the report, the leaderboard and its ranking.
"""

from __future__ import annotations

import pytest
from result_frames import rows_frame

from registry.results.leaderboard import entries
from registry.results.leaderboard_table import table_rows
from registry.results.report import summarize
from registry.results.runs import ResultRow
from registry.results.stats import compare_arms, errors_verdict, is_conclusive

HELPED, HURT = [f"c{i:02d}" for i in range(12)], [f"c{i:02d}" for i in range(12, 24)]


def honest() -> tuple[dict, dict]:
    """Twelve cases the skill fixes, twelve it breaks: a real lift of +0."""
    base = {**{c: [False] for c in HELPED}, **{c: [True] for c in HURT}}
    skill = {**{c: [True] for c in HELPED}, **{c: [False] for c in HURT}}
    return base, skill


def forged() -> tuple[dict, dict]:
    """The same run with both arms of every case the skill breaks turned into transport
    errors: twelve errors in each arm, so the counts stay even."""
    base, skill = honest()
    for case in HURT:
        base[case], skill[case] = [None], [None]
    return base, skill


def rows(base: dict, skill: dict) -> list[ResultRow]:
    """Result rows of one run (None: a transport error)."""
    fields = dict(run_id="r1", skill_name="csv", skill_repo="me/csv", skill_version="1.0.0",
                  model="m", suite_hash="s1", suite_cases=24, run_cases=24, planned_runs=1,
                  created_at="2026-01-01T00:00:00+00:00")
    return [ResultRow(arm=arm, case_id=case, repeat=r, passed=value,
                      error=None if value is not None else "timeout",
                      error_kind=None if value is not None else "transport", **fields)
            for arm, cases in (("baseline", base), ("skill", skill))
            for case, values in cases.items() for r, value in enumerate(values)]


def test_the_forged_run_is_inconclusive_not_helps():
    assert compare_arms(*honest()).verdict == "no detectable effect"
    s = compare_arms(*forged())
    assert (s.lift, s.baseline.n_errors, s.skill.n_errors) == (1.0, 12, 12)  # +100, even
    assert s.verdict == "inconclusive: errors in 12 cases" == errors_verdict(12)
    assert not is_conclusive(s.verdict)


def test_the_forged_run_is_inconclusive_in_the_report_and_unranked_on_the_board():
    [summary] = summarize(rows(*forged()))
    assert summary.stats.verdict == "inconclusive: errors in 12 cases"
    [entry] = entries(rows_frame(rows(*forged())))
    assert entry.verdict == "inconclusive: errors in 12 cases" and entry.rank is None
    assert entry.status == entry.verdict and entry.lift == 1.0
    [row] = table_rows([entry])[1]
    assert "inconclusive: errors in 12 cases" in row and "helps" not in row


def test_a_help_that_survives_its_errors_filled_against_it_stands():
    """40 cases all flip; two lose their only sample in both arms. Filled in against the skill
    (a pass without, a failure with), 38 up and 2 down is still "helps"."""
    base = {f"c{i:02d}": [False] for i in range(40)}
    skill = {f"c{i:02d}": [True] for i in range(40)}
    base["c00"] = skill["c00"] = base["c01"] = skill["c01"] = [None]
    s = compare_arms(base, skill)
    assert (s.verdict, s.n_cases, s.baseline.n_errors) == ("helps", 38, 2)


def test_hurts_is_checked_the_other_way_round():
    base, skill = forged()
    s = compare_arms(skill, base)  # arms swapped: a forged "hurts"
    assert s.lift == -1.0 and s.verdict == "inconclusive: errors in 12 cases"
    base = {f"c{i:02d}": [True, True] for i in range(30)}
    skill = {f"c{i:02d}": [False, False] for i in range(30)}
    skill["c00"] = [None, False]  # one error: filled as a pass with the skill, still "hurts"
    assert compare_arms(base, skill).verdict == "hurts"


@pytest.mark.parametrize(("cases", "text"), [(1, "inconclusive: errors in 1 case"),
                                             (3, "inconclusive: errors in 3 cases")])
def test_the_errors_verdict_names_its_cases(cases, text):
    assert errors_verdict(cases) == text and not is_conclusive(text)
