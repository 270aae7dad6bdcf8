"""`registry.evaluation.leaderboard` (ranked entries from result rows) and `hubskills leaderboard`.

Expected values are worked out by hand from `shared/facts/statistics.md`: Wilson 95% for 2/10
is center (0.2 + z²/20) / (1 + z²/10) = 0.2833 and half-width 0.2266, so [0.0567, 0.5098];
for 7/10 it is [0.3968, 0.8922]; exact McNemar for b = 5, c = 0 is 2 · 0.5⁵ = 0.0625.
"""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest
from click.testing import CliRunner

from registry.cli.leaderboard import leaderboard_command, render_leaderboard
from registry.config import Settings
from registry.evaluation import leaderboard, stats
from registry.evaluation.leaderboard import (
    entries,
    model_view,
    skill_history,
    table_rows,
    to_records,
)
from registry.evaluation.report import summarize
from registry.evaluation.results import ResultRow, RunManifest

JAN, FEB = "2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00"
MAR = "2026-03-01T12:00:00+00:00"


def run_rows(baseline_passes: int, skill_passes: int, *, cases: int = 10, repeats: int = 1,
             run: str = "r1", created: str = JAN, **fields) -> list[ResultRow]:
    """Case i passes in an arm when i < that arm's passes; every repeat alike."""
    base = dict(skill_name="csv", skill_repo="me/csv", skill_version="1.0.0", model="m",
                cost_usd=0.001, output_tokens=20)
    base.update(fields)
    return [ResultRow(run_id=run, arm=arm, case_id=f"c{i:02d}", repeat=r, passed=i < passes,
                      input_tokens=100 if arm == "baseline" else 300, created_at=created, **base)
            for arm, passes in (("baseline", baseline_passes), ("skill", skill_passes))
            for i in range(cases) for r in range(repeats)]


def frame_of(rows: list[ResultRow]) -> pd.DataFrame:
    return pd.DataFrame([r.model_dump(exclude={"output", "checks"}) for r in rows])


def only(frame: pd.DataFrame, **filters) -> leaderboard.Entry:
    (entry,) = entries(frame, **filters)
    return entry


def test_hand_computed_reference_values():
    e = only(frame_of(run_rows(2, 7)))
    assert (e.skill, e.repo, e.name, e.version, e.model, e.mode) == (
        "me/csv", "me/csv", "csv", "1.0.0", "m", "inline")
    assert e.baseline == pytest.approx(0.2)
    assert (round(e.baseline_lo, 4), round(e.baseline_hi, 4)) == (0.0567, 0.5098)
    assert e.with_skill == pytest.approx(0.7)
    assert (round(e.skill_lo, 4), round(e.skill_hi, 4)) == (0.3968, 0.8922)
    assert e.lift == pytest.approx(0.5)
    assert (e.b, e.c, e.cases, e.repeats, e.errors) == (5, 0, 10, 1, 0)
    assert e.p_value == pytest.approx(0.0625)
    assert 0 < e.lift_lo < 0.5 < e.lift_hi <= 1  # five of ten cases gain, none lose
    assert e.verdict == stats.verdict(e.lift_lo, e.lift_hi) == "helps"
    assert (e.baseline_input_tokens, e.skill_input_tokens, e.token_overhead) == (100, 300, 200)
    assert (e.baseline_output_tokens, e.skill_output_tokens) == (20, 20)
    assert e.baseline_cost == pytest.approx(0.01) and e.skill_cost == pytest.approx(0.01)
    assert e.cost_per_pass == pytest.approx(0.01 / 7)
    assert (e.run_id, e.runs, e.date) == ("r1", 1, "2026-01-01T00:00:00Z")


def test_interval_straddling_zero_is_no_detectable_effect():
    e = only(frame_of(run_rows(3, 4)))  # one discordant case in ten
    assert e.lift == pytest.approx(0.1) and e.lift_lo <= 0 < e.lift_hi
    assert e.verdict == "no detectable effect"
    e = only(frame_of(run_rows(9, 1)))
    assert e.lift_hi < 0 and e.verdict == "hurts" and (e.b, e.c) == (0, 8)


def _random_rows(seed: int, cases: tuple[int, ...]) -> list[ResultRow]:
    """Skills with random per-case pass probabilities, three repeats and 5% errors."""
    rng, rows = random.Random(seed), []
    for s, n in enumerate(cases):
        for model in ("a", "b"):
            for i in range(n):
                for arm, p in (("baseline", rng.random()), ("skill", rng.random())):
                    for r in range(3):
                        error = rng.random() < 0.05
                        rows.append(ResultRow(
                            run_id=f"r{s}", skill_name=f"s{s}", model=model, arm=arm,
                            case_id=f"c{i}", repeat=r, error="timeout" if error else None,
                            passed=None if error else rng.random() < p,
                            input_tokens=rng.randint(1, 900), output_tokens=rng.randint(1, 90),
                            cost_usd=rng.choice([0.001, 0.002])))
    return rows


def test_agrees_with_the_per_run_report_and_stats_bootstrap():
    rows = _random_rows(7, (30, 45, 80))
    ranked = entries(frame_of(rows))
    assert len(ranked) == 6
    for e in ranked:
        (summary,) = summarize([r for r in rows if r.skill_name == e.skill and r.model == e.model])
        st = summary.stats
        assert e.baseline == pytest.approx(st.baseline.pass_rate)
        assert e.with_skill == pytest.approx(st.skill.pass_rate)
        assert (e.baseline_lo, e.baseline_hi, e.skill_lo, e.skill_hi) == (
            st.baseline.lo, st.baseline.hi, st.skill.lo, st.skill.hi)
        assert e.lift == pytest.approx(st.lift)
        assert (e.b, e.c, e.cases, e.p_value) == (st.b, st.c, st.n_cases, st.p_value)
        assert e.errors == summary.baseline.errors + summary.skill.errors
        assert e.token_overhead == pytest.approx(summary.skill_overhead_tokens)
        assert e.skill_cost == pytest.approx(summary.skill.cost_usd)
        assert e.cost_per_pass == pytest.approx(summary.cost_per_pass)
        # the vectorized bootstrap draws other random numbers: same method, close intervals
        assert e.lift_lo == pytest.approx(st.lo, abs=0.02)
        assert e.lift_hi == pytest.approx(st.hi, abs=0.02)


def test_categorical_frame_gives_the_same_entries():
    frame = frame_of(_random_rows(3, (12, 20)))
    strings = frame.select_dtypes(include=["object", "string"]).columns
    as_store = frame.astype({c: "category" for c in strings if c != "created_at"})
    as_store["created_at"] = pd.to_datetime(frame["created_at"], utc=True)
    as_store["passed"] = frame["passed"].astype("boolean")
    store_records, plain_records = to_records(entries(as_store)), to_records(entries(frame))
    assert len(store_records) == len(plain_records) == 4
    for got, want in zip(store_records, plain_records, strict=True):
        assert got == pytest.approx(want)  # sums may differ in the last bit, not more


def test_latest_only_picks_the_newest_run():
    old, new = run_rows(2, 7, run="r1", created=JAN), run_rows(5, 5, run="r2", created=FEB)
    e = only(frame_of(old + new))
    assert (e.run_id, e.date, e.lift, e.runs) == ("r2", "2026-02-01T00:00:00Z", 0.0, 1)
    pooled = only(frame_of(old + new), latest_only=False)
    assert (pooled.run_id, pooled.runs, pooled.repeats) == ("r2", 2, 2)
    assert pooled.baseline == pytest.approx(0.35) and pooled.with_skill == pytest.approx(0.6)
    tie = run_rows(0, 10, run="r3", created=FEB)  # same time as r2: the greater run id wins
    assert only(frame_of(old + new + tie)).run_id == "r3"


def test_error_rows_stay_out_of_rates_and_are_counted():
    rows = run_rows(2, 7)
    failed = ResultRow(**{**rows[-1].model_dump(), "passed": None, "error": "timeout",
                          "cost_usd": None, "input_tokens": 0})
    rows[-1] = failed  # skill arm of c09: its only repeat errored
    e = only(frame_of(rows))
    assert (e.errors, e.cases, e.b, e.c) == (1, 9, 5, 0)
    assert e.with_skill == pytest.approx(7 / 9) and e.baseline == pytest.approx(0.2)
    assert e.skill_input_tokens == 300 and e.skill_cost == pytest.approx(0.009)
    assert e.lift == pytest.approx(5 / 9)


def test_an_unknown_price_makes_the_cost_unknown_never_zero():
    rows = run_rows(2, 7)
    rows[-1] = rows[-1].model_copy(update={"cost_usd": None})
    e = only(frame_of(rows))
    assert e.skill_cost is None and e.cost_per_pass is None
    assert e.baseline_cost == pytest.approx(0.01)
    assert table_rows([e])[1][0][8] == "unknown"
    assert to_records([e])[0]["skill_cost"] is None


def test_ranked_by_the_lower_bound_then_the_lift():
    few = run_rows(0, 2, cases=4, skill_name="few", skill_repo="me/few")  # +50, wide interval
    many = run_rows(10, 25, cases=50, skill_name="many", skill_repo="me/many")  # +30, narrow
    same = run_rows(10, 25, cases=50, skill_name="same", skill_repo="me/same", model="m2")
    ranked = entries(frame_of(few + many + same))
    assert [e.skill for e in ranked] == ["me/many", "me/same", "me/few"]
    assert ranked[2].lift > ranked[0].lift and ranked[2].lift_lo < ranked[0].lift_lo
    assert [r["rank"] for r in to_records(ranked)] == [1, 2, 3]


def test_filters():
    frame = frame_of(
        run_rows(2, 7, skill_name="csv", skill_repo="me/CSV-clean", model="org/model-1")
        + run_rows(2, 2, skill_name="csv", skill_repo="me/CSV-clean", model="org/model-10")
        + run_rows(9, 1, skill_name="cuda", skill_repo=None, model="org/model-1"))
    assert {e.skill for e in entries(frame, skill="csv-CLEAN")} == {"me/CSV-clean"}
    assert [e.skill for e in entries(frame, skill="cuda")] == ["cuda"]  # no repo: its name
    assert {e.model for e in entries(frame, model="org/model-1")} == {"org/model-1"}
    assert len(entries(frame, model="MODEL-1")) == 3  # no exact match: substring
    assert [e.skill for e in entries(frame, verdict="hurts")] == ["cuda"]
    assert [e.verdict for e in entries(frame, verdict="helps")] == ["helps"]
    tags = {"me/CSV-clean": ["data", "CSV"], "cuda": ["gpu"]}
    assert {e.skill for e in entries(frame, tags=tags, tag="csv")} == {"me/CSV-clean"}
    assert [e.skill for e in entries(frame, tags=tags, tag="gpu")] == ["cuda"]
    assert entries(frame, tags=tags, tag="none") == []
    assert entries(frame, skill="nothing") == [] and entries(frame_of([])) == []
    with pytest.raises(ValueError, match="tags"):
        entries(frame, tag="gpu")


def test_model_view_ranks_the_skills_for_one_model():
    frame = frame_of(run_rows(2, 7, model="m") + run_rows(2, 3, skill_name="b", skill_repo="me/b",
                                                         model="m")
                     + run_rows(0, 10, skill_name="c", skill_repo="me/c", model="other"))
    view = model_view(entries(frame), "m")
    assert [e.skill for e in view] == ["me/csv", "me/b"]
    assert [e.skill for e in model_view(entries(frame), "OTH")] == ["me/c"]


def test_skill_history_has_one_point_per_run_oldest_first():
    rows = (run_rows(2, 3, run="r1", created=JAN) + run_rows(2, 7, run="r2", created=FEB)
            + run_rows(2, 9, run="r3", created=MAR, skill_version="1.1.0")
            + run_rows(0, 0, run="r4", created=MAR, skill_name="x", skill_repo="me/x"))
    points = skill_history(frame_of(rows), "me/csv")
    assert [(p["run_id"], p["version"], p["date"][:10]) for p in points] == [
        ("r1", "1.0.0", "2026-01-01"), ("r2", "1.0.0", "2026-02-01"), ("r3", "1.1.0", "2026-03-01")]
    assert [p["lift"] for p in points] == [0.1, 0.5, 0.7]
    assert all(p["lift_lo"] <= p["lift"] <= p["lift_hi"] for p in points)
    assert skill_history(frame_of(rows), "csv") == points  # by name too
    assert skill_history(frame_of(rows), "nope") == []


def test_records_are_json_ready_and_rounded_and_rows_are_strings():
    (record,) = to_records(entries(frame_of(run_rows(2, 7))))
    assert json.loads(json.dumps(record)) == record
    assert (record["baseline_lo"], record["skill_hi"]) == (0.0567, 0.8922)
    assert record["p_value"] == 0.0625
    assert record["cost_per_pass"] == 0.001429
    columns, rows = table_rows(entries(frame_of(run_rows(2, 7))))
    assert columns == list(leaderboard.COLUMNS)
    assert rows[0][:8] == ["1", "me/csv@1.0.0", "m", "20%", "70%", rows[0][5], "helps", "+200"]
    assert rows[0][5].startswith("+50 [+") and rows[0][9:] == ["10×1", "2026-01-01"]


# -- the command ---------------------------------------------------------------------------------


def _push(rows: list[ResultRow]) -> None:
    """Append a run to the local registry of this test's HUBSKILLS_HOME."""
    from registry.stores import get_store

    first = rows[0]
    manifest = RunManifest(run_id=first.run_id, skill_name=first.skill_name,
                           skill_version=first.skill_version, skill_repo=first.skill_repo,
                           content_hash="h", suite_hash="s", models=[first.model],
                           started_at=first.created_at)
    get_store(Settings.from_env()).append_results(manifest, rows)


def invoke(*args: str):
    return CliRunner().invoke(leaderboard_command, list(args), catch_exceptions=False)


def test_command_prints_the_ranked_table_and_json():
    _push(run_rows(2, 7, run="20260101-000000-aaaaaa"))
    _push(run_rows(2, 2, run="20260101-000000-bbbbbb", skill_name="zz", skill_repo="me/zz"))
    result = invoke("--skill", "me/")
    assert result.exit_code == 0
    assert "me/csv@1.0.0" in result.output and "+50 [+" in result.output
    assert "helps" in result.output and "10×1" in result.output
    assert result.output.index("me/csv") < result.output.index("me/zz")
    top = invoke("--skill", "me/", "--limit", "1")
    assert "me/zz" not in top.output and "Showing 1 of 2" in top.output
    records = json.loads(invoke("--skill", "me/csv", "--json").output)
    assert [(r["skill"], r["lift"], r["verdict"]) for r in records] == [("me/csv", 0.5, "helps")]
    assert json.loads(invoke("--skill", "me/", "--verdict", "hurts", "--json").output) == []


def test_command_empty_states_point_to_eval_push(capsys: pytest.CaptureFixture[str]):
    result = invoke("--skill", "no-such-skill")
    assert result.exit_code == 0
    assert "No results match" in result.output and "hubskills eval SKILL --push" in result.output
    assert "No results match" in invoke("--tag", "no-such-tag").output
    render_leaderboard([])
    printed = capsys.readouterr().out
    assert "No evaluation results" in printed and "hubskills eval SKILL --push" in printed
