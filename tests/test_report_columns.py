"""The summary's per-model figures, derived from the rows' columns in one pass
(`report._Columns`), against the same figures worked out row by row as `stats.case_status`
and the docs define them, on random runs with errors of every kind, several models, repeats
that disagree, skipped checks and pairwise verdicts."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from registry.results.display import case_order
from registry.results.report import non_discriminating_checks, summarize
from registry.results.runs import CheckVerdict, ResultRow
from registry.results.stats import case_status


def _rows(seed: int) -> list[ResultRow]:
    pick = random.Random(seed)
    models = [f"org/m{i}" for i in range(pick.randint(1, 3))]
    cases = [f"case-{pick.randint(0, 30)}" for _ in range(pick.randint(1, 10))]
    rows = []
    for _ in range(pick.randint(1, 60)):
        kind = pick.choice([None, None, None, "arm", "check", "transport"])
        checks = [CheckVerdict(type=pick.choice(["contains", "contains", "regex"]),
                               label=pick.choice("abc"),
                               passed=pick.choice([True, True, False, None]))
                  for _ in range(pick.randint(0, 3))]
        rows.append(ResultRow(
            run_id="r", skill_name="s", model=pick.choice(models),
            arm=pick.choice(["baseline", "skill"]), case_id=pick.choice(cases),
            passed=pick.choice([True, False, None]), checks=checks,
            error=pick.choice([None, "boom"]) if kind else None, error_kind=kind,
            input_tokens=pick.randint(0, 99), cached=pick.random() < 0.3,
            cost_usd=pick.choice([None, 0.0, pick.random()]),
            skill_loaded=pick.choice([None, True, False]),
            mode=pick.choice(["inline", "inline", "agent"]),
            activated=pick.choice([None, None, True, False])))
    return rows


def _by_hand(rows: list[ResultRow]) -> dict[str, dict]:
    """Per model: case statuses, cached samples, invocation rate and checks that passed in
    both arms every time, each from a loop over the rows."""
    figures: dict[str, dict] = {}
    for model in dict.fromkeys(r.model for r in rows):
        mine = [r for r in rows if r.model == model]
        verdicts: dict[str, dict[str, list]] = {"baseline": defaultdict(list),
                                                "skill": defaultdict(list)}
        for row in mine:
            verdicts[row.arm][row.case_id].append(None if row.is_error else bool(row.passed))
        cases = sorted({r.case_id for r in mine})
        loaded = [r.skill_loaded for r in mine if r.arm == "skill" and not r.is_error
                  and r.skill_loaded is not None]
        passed_all: dict[tuple, dict[str, bool]] = {}
        for row in mine:
            if row.is_error:
                continue
            for index, check in enumerate(row.checks):
                arms = passed_all.setdefault((row.case_id, index, check.label), {})
                arms[row.arm] = arms.get(row.arm, True) and bool(check.passed)
        both = sorted((key for key, arms in passed_all.items()
                       if arms.get("baseline") and arms.get("skill")),
                      key=lambda key: (case_order(key[0]), key[1]))
        figures[model] = {
            "case_status": {c: {arm: case_status(verdicts[arm].get(c, [])) for arm in verdicts}
                            for c in cases},
            "cached": [sum(r.cached for r in mine if r.arm == arm and not r.is_error)
                       for arm in ("baseline", "skill")],
            "invocation_rate": sum(loaded) / len(loaded) if loaded else None,
            "non_discriminating": [f"{case}: {label}" for case, _, label in both],
            "errors": sum(r.is_error for r in mine)}
    return figures


@pytest.mark.parametrize("seed", range(300))
def test_per_model_figures_match_a_row_by_row_count(seed: int) -> None:
    rows = _rows(seed)
    expected = _by_hand(rows)
    summaries = summarize(rows)
    assert [s.model for s in summaries] == list(expected)
    for summary in summaries:
        want = expected[summary.model]
        assert summary.case_status == want["case_status"]
        assert [summary.baseline.cached, summary.skill.cached] == want["cached"]
        assert summary.invocation_rate == want["invocation_rate"]
        assert sorted(summary.non_discriminating) == sorted(want["non_discriminating"])
        assert summary.errors.transport + summary.errors.check + summary.errors.ungraded \
            == want["errors"]
    graded = [r for r in rows if not r.is_error]
    if len({r.model for r in rows}) == 1:
        assert non_discriminating_checks(rows) == summaries[0].non_discriminating
    assert sorted(non_discriminating_checks(graded)) == sorted(
        non_discriminating_checks(rows))


def test_a_case_seen_in_one_arm_is_an_error_in_the_other() -> None:
    rows = [ResultRow(run_id="r", skill_name="s", model="m", arm="skill", case_id="only",
                      passed=True),
            ResultRow(run_id="r", skill_name="s", model="m", arm="baseline", case_id="both",
                      passed=False),
            ResultRow(run_id="r", skill_name="s", model="m", arm="skill", case_id="both",
                      passed=None, error="timeout", error_kind="transport")]
    (summary,) = summarize(rows)
    assert summary.case_status == {
        "both": {"baseline": "stable fail", "skill": "error"},
        "only": {"baseline": "error", "skill": "stable pass"}}


def test_the_per_case_table_says_pass_or_fail_for_a_single_answer():
    """With one run a case was 'stable pass' on one answer (a walk): stable needs repeats."""
    from registry.results.report import per_case_table
    from registry.results.runs import ResultRow

    def row(case: str, arm: str, repeat: int, passed: bool) -> ResultRow:
        return ResultRow(run_id="r", skill_name="s", model="m", arm=arm, case_id=case,
                         repeat=repeat, passed=passed)

    rows = [row("one", "baseline", 0, False), row("one", "skill", 0, True),
            *(row("two", arm, r, True) for arm in ("baseline", "skill") for r in (0, 1))]
    table = {e["case"]: (e["baseline_status"], e["skill_status"])
             for e in per_case_table(rows, "m")}
    assert table == {"one": ("fail", "pass"), "two": ("stable pass", "stable pass")}
