"""`registry.results.leaderboard` (entries from result rows) and `hubskills leaderboard`.

Expected values by hand (as in tests/test_stats.py): Wilson 95% for 2/12 is [0.0470, 0.4480] and
for 9/12 [0.4677, 0.9111]; seven of twelve cases gain and none lose, so the exact test gives
2 · 0.5⁷ = 0.015625; the lift's interval of seven 1s and five 0s is Tango's score interval with
b = 7, c = 0, n = 12 and t(11)·√(12/11) for z, [0.0992, 0.8316] (tests/test_stats_interval.py;
the paired t interval was [0.2562, 0.9105]).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from result_frames import rows_frame

from registry.cli.leaderboard import leaderboard_command, render_leaderboard
from registry.config import Settings
from registry.results.leaderboard import Entry, entries, model_view, skill_history
from registry.results.leaderboard_table import COLUMNS, table_rows, to_records
from registry.results.report import summarize
from registry.results.runs import ResultRow, RunManifest

JAN, FEB = "2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00"
MAR = "2026-03-01T12:00:00+00:00"


def run_rows(baseline_passes: int, skill_passes: int, *, cases: int = 12, repeats: int = 1,
             run: str = "r1", created: str = JAN, suite: int | None = None,
             **fields) -> list[ResultRow]:
    """Case i passes in an arm when i < that arm's passes; every repeat alike. ``suite``: the
    full suite's size (default: ``cases``, a full run)."""
    base = dict(skill_name="csv", skill_repo="me/csv", skill_version="1.0.0", model="m",
                cost_usd=0.001, output_tokens=20, suite_hash="s1", placement="user",
                suite_cases=suite or cases, run_cases=cases, planned_runs=repeats)
    base.update(fields)
    return [ResultRow(run_id=run, arm=arm, case_id=f"c{i:02d}", repeat=r, passed=i < passes,
                      input_tokens=100 if arm == "baseline" else 300, created_at=created, **base)
            for arm, passes in (("baseline", baseline_passes), ("skill", skill_passes))
            for i in range(cases) for r in range(repeats)]


def only(rows: list[ResultRow], **filters) -> Entry:
    (entry,) = entries(rows_frame(rows), **filters)
    return entry


def test_hand_computed_reference_values():
    e = only(run_rows(2, 9))
    assert (e.rank, e.status, e.skill, e.repo, e.name, e.version, e.model, e.mode) == (
        1, "", "me/csv", "me/csv", "csv", "1.0.0", "m", "inline")
    assert (e.placement, e.suite_hash, e.suite_cases) == ("user", "s1", 12)
    assert e.baseline == pytest.approx(2 / 12) and e.with_skill == pytest.approx(0.75)
    assert (round(e.baseline_lo, 4), round(e.baseline_hi, 4)) == (0.0470, 0.4480)
    assert (round(e.skill_lo, 4), round(e.skill_hi, 4)) == (0.4677, 0.9111)
    assert e.lift == pytest.approx(7 / 12)
    assert (round(e.lift_lo, 4), round(e.lift_hi, 4)) == (0.0992, 0.8316)
    assert (e.b, e.c, e.p_value, e.verdict, e.note) == (7, 0, 0.015625, "helps", None)
    assert (e.cases, e.repeats, e.errors, e.uneven) == (12, 1, 0, 0)
    assert (e.baseline_input_tokens, e.skill_input_tokens, e.token_overhead) == (100, 300, 200)
    assert e.baseline_cost == pytest.approx(0.012) and e.cost_per_pass == pytest.approx(0.012 / 9)
    assert (e.run_id, e.date) == ("r1", "2026-01-01T00:00:00Z")


def test_small_and_negative_effects():
    e = only(run_rows(3, 4))  # one discordant case in twelve
    assert e.lift_lo <= 0 < e.lift_hi and e.verdict == "no detectable effect" and e.rank == 1
    e = only(run_rows(11, 1))
    assert e.lift_hi < 0 and e.verdict == "hurts" and (e.b, e.c) == (0, 10)


def _random_rows(seed: int, cases: tuple[int, ...]) -> list[ResultRow]:
    """Skills with random per-case pass probabilities, three repeats, 5% transport errors and
    2% arm-caused errors, rows in random order."""
    rng, rows = random.Random(seed), []
    for s, n in enumerate(cases):
        for model in ("a", "b"):
            for i in range(n):
                for arm, p in (("baseline", rng.random()), ("skill", rng.random())):
                    for r in range(3):
                        roll = rng.random()
                        kind = "transport" if roll < 0.05 else "arm" if roll < 0.07 else None
                        rows.append(ResultRow(
                            run_id=f"r{s}", skill_name=f"s{s}", skill_repo=f"me/s{s}",
                            model=model, arm=arm, case_id=f"c{i}", repeat=r,
                            error=kind and "failed", error_kind=kind,
                            passed=None if kind == "transport" else kind is None and
                            rng.random() < p, input_tokens=rng.randint(1, 900),
                            output_tokens=rng.randint(1, 90),
                            cost_usd=rng.choice([0.001, 0.002, 0.0037])))
    rng.shuffle(rows)
    return rows


def test_equals_the_run_summary_to_the_last_bit():
    rows = _random_rows(7, (30, 45, 80))
    ranked = entries(rows_frame(rows))
    assert len(ranked) == 6
    for e in ranked:
        (s,) = summarize([r for r in rows if r.skill_repo == e.skill and r.model == e.model])
        st = s.stats
        assert (e.baseline, e.baseline_lo, e.baseline_hi) == (
            st.baseline.pass_rate, st.baseline.lo, st.baseline.hi)
        assert (e.with_skill, e.skill_lo, e.skill_hi) == (
            st.skill.pass_rate, st.skill.lo, st.skill.hi)
        assert (e.lift, e.lift_lo, e.lift_hi, e.p_value, e.b, e.c, e.cases) == (
            st.lift, st.lo, st.hi, st.p_value, st.b, st.c, st.n_cases)
        assert (e.verdict, e.note, e.normalized_gain, e.detectable, e.uneven) == (
            st.verdict, st.note, st.normalized_gain, st.detectable, st.uneven)
        assert e.errors == s.baseline.errors + s.skill.errors
        assert (e.skill_cost, e.cost_per_pass) == (s.skill.cost_usd, s.cost_per_pass)
        assert e.token_overhead == s.skill_overhead_tokens


def test_a_run_is_summarized_without_loading_pandas():
    script = ("import sys\nfrom registry.results.report import summarize\n"
              "from registry.results.runs import ResultRow\n"
              "rows = [ResultRow(run_id='r', skill_name='s', model='m', arm=a, case_id=f'c{i}',"
              " passed=a == 'skill' or i < 2) for i in range(12) for a in ('baseline', 'skill')]\n"
              "print(round(summarize(rows)[0].stats.lift, 4), 'pandas' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.split() == [str(round(10 / 12, 4)), "False"]


def test_arm_caused_errors_are_failures_and_transport_errors_are_left_out():
    rows = run_rows(2, 12)
    rows[-1] = rows[-1].model_copy(update={"passed": False, "error": "context overflow",
                                           "error_kind": "arm"})
    rows[-2] = rows[-2].model_copy(update={"passed": None, "error": "timeout",
                                           "error_kind": "transport", "cost_usd": None})
    e = only(rows)
    assert (e.errors, e.uneven, e.cases) == (1, 1, 11)  # c10 is usable in the baseline only
    assert e.with_skill == pytest.approx(10 / 11)  # the overflow counts as a failure
    assert e.verdict == "inconclusive: errors in 1 case" and e.rank is None
    assert e.skill_cost == pytest.approx(0.011)  # the transport error's unknown price is out


def test_a_sample_counts_once_as_the_replay_reads_it():
    """A red-team note: a run file with a transport-error copy of every baseline row verified
    clean (the replay keeps one row a sample: the graded one) while the board counted the
    copies, showing `inconclusive: errors in 12 cases` and 2 repeats. The board keeps the same
    row per sample as `latest_rows`: a graded row over error rows, else the last; a resumed
    run's retry (an error, then its graded answer) counts once as well."""
    rows = run_rows(2, 9)
    clean = only(rows)
    copies = [r.model_copy(update={"passed": None, "error": "timeout", "error_kind": "transport"})
              for r in rows if r.arm == "baseline"]
    for padded in (rows + copies, copies + rows):
        assert only(padded) == clean
    retried = [r.model_copy(update={"passed": True}) for r in rows[:1]]  # graded twice: last
    assert only(rows + retried).baseline == pytest.approx(2 / 12)
    failed = [r.model_copy(update={"passed": False}) for r in rows[:1]]
    assert only(rows + failed).baseline == pytest.approx(1 / 12)
    lost = rows[:-1] + [rows[-1].model_copy(update={"passed": None, "error": "timeout",
                                                     "error_kind": "transport"})] * 2
    assert only(lost).errors == 1


def test_categorical_frame_gives_identical_entries():
    frame = rows_frame(_random_rows(3, (12, 20)))
    strings = frame.select_dtypes(include=["object", "string"]).columns
    as_store = frame.astype({c: "category" for c in strings if c != "created_at"})
    as_store["created_at"] = pd.to_datetime(frame["created_at"], utc=True)
    as_store["passed"] = frame["passed"].astype("boolean")
    assert to_records(entries(as_store)) == to_records(entries(frame))


def test_unranked_entries_stay_visible_with_their_reason():
    rows = (run_rows(0, 12, skill_name="good", skill_repo="me/good")
            + run_rows(0, 2, cases=2, skill_name="two", skill_repo="me/two")
            + run_rows(0, 8, cases=10, suite=48, skill_name="sub", skill_repo="me/sub")
            + run_rows(0, 12, skill_name="orphan", skill_repo=None)
            + run_rows(0, 12, repeats=3, skill_name="part", skill_repo="me/part")[:50])
    ranked = entries(rows_frame(rows))
    assert [(e.skill, e.rank) for e in ranked][:1] == [("me/good", 1)]
    reasons = {e.skill: (e.rank, e.status, e.verdict) for e in ranked}
    assert reasons["me/two"] == (None, "too few cases (2)", "too few cases (2)")
    assert reasons["me/sub"][:2] == (None, "subset: 10 of 48 cases")
    assert reasons["orphan"][:2] == (None, "not in the registry")
    assert reasons["me/part"][:2] == (None, "partial: 50 of 72 samples")
    assert len(ranked) == 5 and all(e.rank is None for e in ranked[1:])


def test_a_newer_subset_run_does_not_replace_the_full_run():
    full = run_rows(2, 9, run="full", created=JAN)
    subset = run_rows(0, 2, cases=2, suite=12, run="sub", created=FEB)
    e = only(full + subset)
    assert (e.run_id, e.rank, e.lift) == ("full", 1, pytest.approx(7 / 12))
    assert only(subset).status == "subset: 2 of 12 cases"
    newer = run_rows(5, 5, run="again", created=MAR)
    assert only(full + subset + newer).run_id == "again"
    tie = run_rows(0, 12, run="zz", created=MAR)  # same time: the greater run id wins
    assert only(full + newer + tie).run_id == "zz"


def test_one_row_per_mode_placement_and_suite():
    rows = (run_rows(2, 9, run="inline") + run_rows(2, 5, run="tool", mode="tool")
            + run_rows(2, 7, run="system", placement="system")
            + run_rows(2, 12, run="other-suite", suite_hash="s2"))
    ranked = entries(rows_frame(rows))
    assert sorted(e.run_id for e in ranked) == ["inline", "other-suite", "system", "tool"]
    assert [r[3] for r in table_rows(ranked)[1]] == [
        "inline (user)", "inline (user)", "inline (system)", "tool"]


def test_an_unknown_price_makes_the_cost_unknown_never_zero():
    rows = run_rows(2, 9)
    rows[-1] = rows[-1].model_copy(update={"cost_usd": None})
    e = only(rows)
    assert e.skill_cost is None and e.cost_per_pass is None
    assert e.baseline_cost == pytest.approx(0.012)
    assert table_rows([e])[1][0][COLUMNS.index("cost")] == "unknown"
    assert to_records([e])[0]["skill_cost"] is None


def test_ranked_by_the_lower_bound_then_the_lift():
    few = run_rows(0, 4, cases=12, skill_name="few", skill_repo="me/few")
    many = run_rows(10, 25, cases=50, skill_name="many", skill_repo="me/many")
    same = run_rows(10, 25, cases=50, skill_name="same", skill_repo="me/same", model="m2")
    ranked = entries(rows_frame(few + many + same))
    assert [e.skill for e in ranked] == ["me/many", "me/same", "me/few"]
    assert ranked[2].lift > ranked[0].lift and ranked[2].lift_lo < ranked[0].lift_lo
    assert [e.rank for e in ranked] == [1, 2, 3]


def test_filters():
    frame = rows_frame(
        run_rows(2, 9, skill_name="csv", skill_repo="me/CSV-clean", model="org/model-1")
        + run_rows(2, 2, skill_name="csv", skill_repo="me/CSV-clean", model="org/model-10")
        + run_rows(11, 1, skill_name="cuda", skill_repo=None, model="org/model-1")
        + run_rows(0, 2, cases=3, skill_name="tiny", skill_repo="me/tiny"))
    assert {e.skill for e in entries(frame, skill="csv-CLEAN")} == {"me/CSV-clean"}
    assert [e.skill for e in entries(frame, skill="cuda")] == ["cuda"]  # no repo: its name
    assert {e.model for e in entries(frame, model="org/model-1")} == {"org/model-1"}
    assert len(entries(frame, model="MODEL-1")) == 3  # no exact match: substring
    assert [e.skill for e in entries(frame, verdict="hurts")] == ["cuda"]
    assert [e.skill for e in entries(frame, verdict="too few cases")] == ["me/tiny"]
    tags = {"me/CSV-clean": ["data", "CSV"], "cuda": ["gpu"]}
    assert {e.skill for e in entries(frame, tags=tags, tag="csv")} == {"me/CSV-clean"}
    assert entries(frame, tags=tags, tag="none") == [] and entries(frame, skill="nothing") == []
    assert entries(rows_frame([])) == []
    with pytest.raises(ValueError, match="tags"):
        entries(frame, tag="gpu")


def test_model_view_ranks_the_skills_for_one_model():
    frame = rows_frame(run_rows(2, 9) + run_rows(2, 3, skill_name="b", skill_repo="me/b")
                       + run_rows(0, 10, skill_name="c", skill_repo="me/c", model="other"))
    assert [e.skill for e in model_view(entries(frame), "m")] == ["me/csv", "me/b"]
    assert [e.skill for e in model_view(entries(frame), "OTH")] == ["me/c"]


def test_skill_history_has_one_point_per_run_oldest_first():
    rows = (run_rows(2, 3, run="r1", created=JAN) + run_rows(2, 8, run="r2", created=FEB)
            + run_rows(2, 10, run="r3", created=MAR, skill_version="1.1.0")
            + run_rows(0, 0, run="r4", created=MAR, skill_name="x", skill_repo="me/x"))
    points = skill_history(rows_frame(rows), "me/csv")
    assert [(p["run_id"], p["version"], p["date"][:10]) for p in points] == [
        ("r1", "1.0.0", "2026-01-01"), ("r2", "1.0.0", "2026-02-01"), ("r3", "1.1.0", "2026-03-01")]
    assert [p["lift"] for p in points] == [1 / 12, 0.5, 8 / 12]
    assert all(p["lift_lo"] <= p["lift"] <= p["lift_hi"] for p in points)
    assert skill_history(rows_frame(rows), "csv") == points  # by name too
    assert skill_history(rows_frame(rows), "nope") == []


def test_records_are_json_ready_and_rows_are_strings():
    (record,) = to_records(entries(rows_frame(run_rows(2, 9))))
    assert json.loads(json.dumps(record)) == record
    assert record["p_value"] == 0.015625 and record["rank"] == 1
    (tiny,) = to_records(entries(rows_frame(run_rows(0, 2, cases=2))))
    assert tiny["detectable"] is None and tiny["rank"] is None  # infinite: no lift detectable
    columns, rows = table_rows(entries(rows_frame(run_rows(2, 9) + run_rows(
        0, 2, cases=2, suite=12, run="sub", skill_name="s", skill_repo="me/s"))))
    assert columns == list(COLUMNS)
    assert rows[0] == ["1", "me/csv@1.0.0", "m", "inline (user)", "17%", "75%",
                       "+58 [+10, +83]", "0.0156", "helps", "-", "+200", "$0.0120", "12×1",
                       "2026-01-01"]  # "-": no badges looked up
    assert rows[1][0] == "-" and rows[1][8] == "too few cases (2) · unranked: subset: 2 of " \
                                               "12 cases" and rows[1][12] == "2/12×1"


def test_a_million_rows_stay_vectorized():
    """No Python loop over rows: 1,000,000 rows give their entries (speed is in bench/)."""
    n_cases, reps, n_skills = 25, 2, 10_000
    size = n_skills * n_cases * reps * 2
    rng = np.random.default_rng(0)
    skill = np.repeat(np.arange(n_skills), n_cases * reps * 2)
    frame = pd.DataFrame({
        "run_id": pd.Categorical(skill), "skill_name": pd.Categorical(skill),
        "skill_repo": pd.Categorical([f"me/s{i}" for i in skill]), "model": "m",
        "arm": pd.Categorical(np.tile(np.repeat(["baseline", "skill"], n_cases * reps),
                                      n_skills)),
        "case_id": pd.Categorical(np.tile(np.arange(n_cases).repeat(reps), 2 * n_skills)),
        "passed": rng.random(size) < 0.5, "error": None})
    ranked = entries(frame)
    assert len(ranked) == n_skills and all(e.cases == n_cases for e in ranked[:10])


# -- the command ---------------------------------------------------------------------------------


def _push(rows: list[ResultRow]) -> None:
    """Append a run to the local registry of this test's HUBSKILLS_HOME."""
    from registry.registries import get_store

    first = rows[0]
    cases = len({r.case_id for r in rows})
    manifest = RunManifest(run_id=first.run_id, skill_name=first.skill_name,
                           skill_version=first.skill_version, skill_repo=first.skill_repo,
                           content_hash="h", suite_hash="s1", models=[first.model],
                           case_ids=[f"c{i:02d}" for i in range(cases)], status="complete",
                           started_at=first.created_at, partial=False)
    get_store(Settings.from_env()).append_results(manifest, rows)


def invoke(*args: str):
    return CliRunner().invoke(leaderboard_command, list(args), catch_exceptions=False)


def test_command_prints_the_ranked_table_and_json():
    _push(run_rows(2, 9, run="20260101-000000-aaaaaa"))
    _push(run_rows(2, 2, run="20260101-000000-bbbbbb", skill_name="zz", skill_repo="me/zz"))
    assert "2 entries not replayed" in invoke("--skill", "me/").output  # never replayed
    result = invoke("--skill", "me/", "--include-unverified")
    assert result.exit_code == 0
    assert "me/csv@1.0.0" in result.output and "+58 [+10, +83]" in result.output
    assert "helps" in result.output and "12×1" in result.output
    assert result.output.index("me/csv") < result.output.index("me/zz")
    top = invoke("--skill", "me/", "--limit", "1", "--include-unverified")
    assert "me/zz" not in top.output and "Showing 1 of 2" in top.output
    records = json.loads(invoke("--skill", "me/csv", "--json", "--include-unverified").output)
    assert [(r["skill"], r["lift"], r["verdict"]) for r in records] == [
        ("me/csv", 7 / 12, "helps")]
    assert json.loads(invoke("--skill", "me/", "--verdict", "hurts", "--json",
                             "--include-unverified").output) == []


def test_command_empty_states_point_to_eval_push(capsys: pytest.CaptureFixture[str]):
    result = invoke("--skill", "no-such-skill")
    assert result.exit_code == 0
    assert "No results match" in result.output and "hubskills eval SKILL --push" in result.output
    assert "No results match" in invoke("--tag", "no-such-tag").output
    render_leaderboard([])
    printed = capsys.readouterr().out
    assert "No evaluation results" in printed and "hubskills eval SKILL --push" in printed


def test_a_model_filter_no_model_contains_names_the_boards_models_and_the_nearest():
    """`--model gpt` on a board without it said only that nothing matched."""
    _push(run_rows(2, 9, run="20260101-000000-aaaaaa", model="openai/gpt-4.1-mini"))
    _push(run_rows(2, 5, run="20260101-000000-bbbbbb", model="anthropic/claude-haiku-4-5"))
    said = invoke("--model", "gtp-4.1", "--include-unverified").output
    assert "No model on this board contains 'gtp-4.1'; its models: " in said, said
    assert "anthropic/claude-haiku-4-5, " in said and "openai/gpt-4.1-mini" in said, said
    nearest = said.split("Nearest:", 1)[1].split()
    assert nearest[:3] == ["hubskills", "leaderboard", "--model"]
    board = invoke(*nearest[2:], "--include-unverified").output
    assert "me/csv@1.0.0" in board and "No results match" not in board, board
    assert "its models" not in invoke("--model", "gpt", "--verdict", "hurts").output


def test_a_skill_filter_no_skill_contains_names_the_boards_skills_and_the_nearest():
    """`--skill kernel-buildr` (a typo) said only that nothing matched, then `eval --push`."""
    _push(run_rows(2, 9, run="20260101-000000-aaaaaa"))
    said = invoke("--skill", "me/cvs", "--include-unverified").output
    assert "No skill on this board contains 'me/cvs'; its skills: " in said, said
    nearest = said.split("Nearest:", 1)[1].split()
    assert nearest[:3] == ["hubskills", "leaderboard", "--skill"]
    board = invoke(*nearest[2:], "--include-unverified").output
    assert "me/csv@1.0.0" in board and "No results match" not in board, board
    assert "its skills" not in invoke("--skill", "csv", "--verdict", "hurts").output
