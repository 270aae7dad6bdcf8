"""The adaptive design: its schedule, its rules on a run's rows, and `check_rounds` catching a
run cut or stopped where its design did not allow (the error rates: tests/test_adaptive_sim.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from adaptive_sim import simulate

from registry.errors import HubskillsError
from registry.results import sequential as seq
from registry.results.sequential import Design, check_rounds, plan_round, validate_design
from registry.results.stats import compare_arms


def empty(n: int) -> dict[str, dict[str, list]]:
    return {f"c{i:02d}": {"baseline": [], "skill": []} for i in range(n)}


def answer(history: dict, plan: seq.RoundPlan, outcome) -> list[tuple]:
    """Ask the plan's samples: ``outcome(case_id, arm, run)``; returns the rows asked."""
    rows = []
    for cid, run in plan.samples:
        for arm in seq.ARMS:
            if len(history[cid][arm]) == run:
                value = outcome(cid, arm, run)
                history[cid][arm].append(value)
                rows.append((cid, arm, run, value))
    return rows


def run(design: Design, n: int, outcome) -> tuple[seq.RoundPlan, list[list[tuple]]]:
    """Play a whole run; returns the stopping plan and the rows grouped by round."""
    history, rounds = empty(n), []
    while not (plan := plan_round(design, history)).stop:
        rounds.append(answer(history, plan, outcome))
    return plan, rounds


def test_a_design_round_trips_through_the_manifest():
    design = Design(kind="adaptive", runs=3, futility=0.2)
    assert Design.from_dict(design.to_dict()) == design
    assert Design.from_record(design.to_dict()) == design
    # a record from before chained levels and early futility replays as it ran
    old = {k: v for k, v in design.to_dict().items() if k not in ("levels", "early_futility")}
    assert Design.from_record(old) == Design(kind="adaptive", runs=3, futility=0.2,
                                             levels="bonferroni", early_futility=0.0)
    with pytest.raises(HubskillsError, match="unknown design parameters: lucky"):
        Design.from_dict({**design.to_dict(), "lucky": True})


@pytest.mark.parametrize("change", [dict(kind="bandit"), dict(runs=0), dict(alpha=0.1),
                                    dict(spending="greedy"), dict(settle_after=1),
                                    dict(futility=0.9), dict(futility_from=0),
                                    dict(batches=0), dict(levels="lucky"),
                                    dict(early_futility=0.7)])
def test_out_of_range_parameters_are_refused_with_a_hint(change):
    with pytest.raises(HubskillsError) as err:
        validate_design(Design(**{"runs": 3, **change}), 20)
    assert err.value.hint and next(iter(change)) in err.value.message


def test_the_looks_spend_exactly_alpha():
    for design in (Design(runs=3), Design(runs=5, spending="haybittle-peto"), Design(runs=1)):
        for n in (10, 18, 60):
            total = sum(seq.look_alpha(design, n, j) for j in range(1, seq.n_rounds(design, n) + 1))
            assert total == pytest.approx(0.05, abs=1e-15)
    # O'Brien-Fleming type at half the plan: 2 (1 - Phi(1.959964 / sqrt(0.5))) = 0.005575
    obf = Design(runs=2, spending="obrien-fleming")
    assert seq.spent(obf, 0.5) == pytest.approx(0.0055746, abs=1e-6)
    # Haybittle-Peto type: a fiftieth of alpha per tenth of the plan
    assert seq.spent(Design(runs=2, spending="haybittle-peto"), 0.5) == pytest.approx(
        0.005, abs=1e-15)
    # Pocock type
    assert seq.spent(Design(runs=2, spending="pocock"), 0.5) == pytest.approx(
        0.05 * math.log((1 + math.e) / 2), abs=1e-12)
    # linear (the default): alpha times the share of the plan
    assert seq.spent(Design(runs=2), 0.5) == 0.025
    assert seq.look_alpha(Design(kind="fixed", runs=3), 30, 1) == 0.05


def test_the_power_family_measured_against_linear_is_not_offered():
    """bench/adaptive_frontier.py measures Kim-DeMets' alpha * t^r beside the defaults: at r = 1
    it is the linear spending to the last digit, at r = 1.5 a third of the plan spends
    0.05 / sqrt(27); no run can be planned or verified with it (docs/statistics.md)."""
    for t in (0.1, 1 / 6, 0.5, 5 / 6):
        assert seq.spent(Design(spending="power-1"), t) == seq.spent(Design(), t)
    assert seq.spent(Design(spending="power-1.5"), 1 / 3) == pytest.approx(0.05 / 27**0.5,
                                                                            abs=1e-15)
    assert seq.spent(Design(spending="power-1.5"), 1.0) == 0.05
    with pytest.raises(HubskillsError, match="spending must be one of"):
        validate_design(Design(runs=3, spending="power-1.25"), 40)


def test_each_run_is_asked_in_two_rounds_of_half_the_cases():
    design = Design(runs=3)  # splits 2: a look after every half of a run
    assert seq.n_rounds(design, 40) == 6 and seq.n_rounds(Design(runs=3, splits=1), 40) == 3
    assert [list(seq.runs_by(design, 5, j)) for j in (1, 2, 3, 6)] == [
        [1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [2, 2, 2, 1, 1], [3, 3, 3, 3, 3]]
    assert [seq.fraction(design, 40, j) for j in (1, 3, 6)] == [1 / 6, 0.5, 1.0]
    assert [seq.whole_runs(design, 40, j) for j in (1, 2, 3, 4)] == [0, 1, 1, 2]
    first = plan_round(design, empty(40))
    assert first.samples == tuple((f"c{i:02d}", 0) for i in range(20)) and first.rounds == 6
    # a round of fewer than 10 cases cannot decide: its look spends nothing
    assert seq.spent_by(design, 12, 1) == 0 and seq.spent_by(design, 12, 2) == 0.05 / 3


def test_one_run_per_case_goes_in_batches_of_at_least_five_cases():
    assert [seq.n_rounds(Design(runs=1), n) for n in (4, 10, 18, 30, 60)] == [1, 2, 4, 6, 8]
    design = Design(runs=1, batches=4)
    assert [seq.n_rounds(design, n) for n in (4, 10, 18, 30, 60)] == [1, 2, 4, 4, 4]
    first = plan_round(design, empty(30))
    assert first.samples == tuple((f"c{i:02d}", 0) for i in range(8)) and first.rounds == 4
    # five cases cannot decide: their look spends nothing, the next spends it all
    assert seq.look_alpha(design, 10, 1) == 0 and seq.look_alpha(design, 10, 2) == 0.05


def test_a_fixed_design_asks_everything_at_once_and_reports_the_fixed_verdict():
    design = Design(kind="fixed", runs=3)
    history = empty(12)
    plan = plan_round(design, history)
    assert len(plan.samples) == 36 and not plan.stop
    answer(history, plan, lambda cid, arm, r: arm == "skill" or r == 0)
    done = plan_round(design, history)
    assert done.stop and done.reason == seq.COMPLETE and done.alpha == 0.05
    expected = compare_arms({c: h["baseline"] for c, h in history.items()},
                            {c: h["skill"] for c, h in history.items()})
    assert done.verdict == expected.verdict == "helps"


def test_cases_that_agree_on_two_runs_in_both_arms_get_no_third():
    design = Design(splits=1, runs=3, futility=0, settle_after=2)
    history = empty(20)
    answer(history, plan_round(design, history), lambda cid, arm, r: cid < "c10")
    answer(history, plan_round(design, history), lambda cid, arm, r: cid < "c10" or arm == "skill")
    third = plan_round(design, history)
    assert third.round == 3 and third.settled == 10
    assert {cid for cid, _ in third.samples} == {f"c{i}" for i in range(10, 20)}
    assert {r for _, r in third.samples} == {2}


def test_an_errored_sample_does_not_settle_a_case():
    design = Design(splits=1, runs=3, futility=0, settle_after=2)
    history = empty(12)
    answer(history, plan_round(design, history), lambda cid, arm, r: None if cid == "c00" else True)
    answer(history, plan_round(design, history), lambda cid, arm, r: True)
    assert [cid for cid, _ in plan_round(design, history).samples] == ["c00"]


def test_a_resumed_round_asks_only_what_it_lacks():
    design = Design(splits=1, runs=3)
    history = empty(12)
    history["c00"]["baseline"].append(True)
    history["c01"]["baseline"].append(False)
    history["c01"]["skill"].append(False)
    plan = plan_round(design, history)
    assert plan.round == 1 and len(plan.samples) == 11 and ("c01", 0) not in plan.samples


def test_a_clear_lift_stops_early_and_says_when():
    plan, rounds = run(Design(splits=1, runs=3), 30, lambda cid, arm, r: arm == "skill")
    assert plan.stop and plan.verdict == "helps" and plan.round == 1 == len(rounds)
    assert plan.reason == "helps, decided at round 1"
    # the chained level: above the Bonferroni increment, within what Pocock spends by 1/3
    design = Design(splits=1, runs=3)
    assert seq.look_alpha(design, 30, 1) <= plan.alpha <= seq.spent(design, 1 / 3)
    assert plan.reported == plan.alpha


def test_no_difference_at_all_stops_for_futility():
    plan, rounds = run(Design(splits=1, runs=5), 40, lambda cid, arm, r: int(cid[1:]) % 2 == 0)
    # not one case differs: under 1% conditional power already at round 1 (early_futility)
    assert plan.stop and plan.reason == seq.NO_EFFECT and plan.round == 1
    assert plan.verdict == "no detectable effect"
    assert sum(len(r) for r in rounds) == 80  # of the 400 answers the fixed design asks
    late, rounds = run(Design(splits=1, runs=5, early_futility=0), 40,
                       lambda cid, arm, r: int(cid[1:]) % 2 == 0)
    assert late.round == 2 and sum(len(r) for r in rounds) == 160


def alternating(cid: str, arm: str, r: int) -> bool:
    return (r + int(cid[1:])) % 2 == 1


def test_without_futility_a_null_run_completes_its_plan():
    plan, rounds = run(Design(splits=1, runs=3, futility=0, settle_after=2), 20, alternating)
    assert plan.stop and plan.reason == seq.COMPLETE and plan.round == 3 == len(rounds)


# -- check_rounds: verify recomputes every stop and skip --------------------------------------


def drifting(cid: str, arm: str, r: int) -> bool:
    """Outcomes that keep the design going all three rounds."""
    return (int(cid[1:]) + r + (arm == "skill")) % 3 > 0


def test_an_honest_run_checks_clean():
    design = Design(splits=1, runs=3, futility=0, settle_after=2)
    plan, rounds = run(design, 20, drifting)
    assert len(rounds) == 3
    assert check_rounds(design, rounds, stopped={"round": plan.round, "reason": plan.reason,
                                                 "verdict": plan.verdict}) == []


def test_rows_cut_where_the_design_had_not_stopped_are_a_mismatch():
    design = Design(splits=1, runs=3, futility=0, settle_after=2)
    _, rounds = run(design, 20, drifting)
    found = check_rounds(design, rounds[:2])
    assert len(found) == 1 and "where the design had not stopped" in found[0]
    cut = [rounds[0], rounds[1], rounds[2][: len(rounds[2]) // 2]]
    assert "had not stopped" in check_rounds(design, cut)[0]
    assert check_rounds(design, cut, complete=False) == []  # a partial run may be resumed


def test_a_forged_early_stop_is_a_mismatch():
    """A run that stops at a lucky moment: round 1 looked good, rounds 2 and 3 did not; it
    records "helps" at round 1 and leaves out the rest."""
    design = Design(splits=1, runs=3, futility=0, settle_after=2)
    plan, rounds = run(design, 20, drifting)
    forged = {"round": 1, "reason": "helps, decided at round 1", "verdict": "helps"}
    found = check_rounds(design, rounds[:1], stopped=forged)
    assert any("had not stopped" in f for f in found)
    found = check_rounds(design, rounds, stopped=forged)
    assert found and all("records" in f for f in found)


def test_a_sample_the_plan_did_not_ask_and_rows_after_the_stop_are_mismatches():
    design = Design(splits=1, runs=3, futility=0, settle_after=2, spending="haybittle-peto")
    _, rounds = run(design, 20, lambda cid, arm, r: cid < "c10" or (r == 1) == (arm == "skill"))
    assert len(rounds) == 3 and len(rounds[2]) == 20  # ten cases settled after two runs
    extra = [rounds[0], rounds[1], rounds[2] + [("c00", "skill", 2, True),
                                                ("c00", "baseline", 2, True)]]
    found = check_rounds(design, extra)
    assert len(found) == 2 and "c00 run 3" in found[0] and "did not ask" in found[0]
    stopped, later = run(Design(splits=1, runs=3), 30, lambda cid, arm, r: arm == "skill")
    more = later + [[(c, a, 1, a == "skill") for c in sorted(empty(30)) for a in seq.ARMS]]
    assert "after the design stopped at round 1" in check_rounds(Design(splits=1, runs=3), more)[0]


# -- error rates, by simulation through the engine (the full grid: bench/adaptive.py) ----------


SUITES = 2000  # a 2.5% rate is measured within about +-0.7%


def suites(kind: str, n: int, lift: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if kind == "mixed":  # U-shaped: most cases nearly always pass or fail, some flaky
        base = rng.beta(0.5, 0.5, size=(SUITES, n)) * (1 - lift)
    else:
        base = np.full((SUITES, n), float(kind))
    return base, np.minimum(base + lift, 1.0)


NULL = [(n, runs, kind) for n, runs in ((10, 3), (18, 1), (30, 5), (40, 3), (60, 1))
        for kind in ("0.1", "0.5", "mixed")]


@pytest.mark.parametrize("n_cases, runs, kind", NULL)
def test_no_effect_rarely_says_helps_and_the_interval_covers(n_cases: int, runs: int, kind: str):
    seed = n_cases * 100 + runs * 10 + len(kind)
    base, skill = suites(kind, n_cases, 0.0, seed)
    s = simulate(Design(runs=runs), base, skill, seed)
    helps, hurts = np.mean(s.verdict == "helps"), np.mean(s.verdict == "hurts")
    assert helps <= 0.025 and hurts <= 0.025, f"false 'helps' {helps:.2%}, 'hurts' {hurts:.2%}"
    assert np.mean((s.lo <= s.truth) & (s.truth <= s.hi)) >= 0.95
    assert s.calls.max() <= s.planned


def test_no_effect_costs_far_fewer_answers():
    saved = []
    for n_cases, runs, kind in NULL:
        base, skill = suites(kind, n_cases, 0.0, 1)
        s = simulate(Design(runs=runs), base[:500], skill[:500], 1)
        saved.append(1 - s.calls.mean() / s.planned)
    assert np.median(saved) >= 0.4, sorted(saved)  # 47% at the defaults (2026-12-06)


@pytest.mark.parametrize("kind", ["0.1", "0.5", "mixed"])
def test_a_thirty_point_lift_on_40_cases_and_3_runs_is_found_for_less(kind: str):
    base, skill = suites(kind, 40, 0.3, 40)
    fixed = simulate(Design(kind="fixed", runs=3), base, skill, 41)
    s = simulate(Design(runs=3), base, skill, 41)
    power = np.mean(s.verdict == "helps")
    assert power >= 0.95 and power >= np.mean(fixed.verdict == "helps") - 0.04
    assert not np.any(s.verdict == "hurts")
    assert np.mean((s.lo <= s.truth) & (s.truth <= s.hi)) >= 0.95
    assert s.calls.mean() <= 0.75 * s.planned


def test_errors_where_the_skill_fails_do_not_make_it_help():
    """A third of the skill arm's failing samples lost: the errors rule keeps it honest when
    the run stops early too."""
    def lost(passed: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        mask = np.zeros(passed.shape, bool)
        mask[:, :, 1] = ~passed[:, :, 1] & (rng.random(passed[:, :, 1].shape) < 1 / 3)
        return mask

    for n_cases, runs in ((30, 3), (60, 1)):
        base, skill = suites("0.5", n_cases, 0.0, n_cases)
        s = simulate(Design(runs=runs), base, skill, n_cases, lost)
        assert np.mean(s.verdict == "helps") <= 0.025


# -- one engine: an adaptive run's figures at its stopping level, in the report and the board --


def test_an_adaptive_run_reports_at_its_stopping_level_in_the_summary_and_the_board():
    from result_frames import rows_frame

    from registry.results.leaderboard import run_entries
    from registry.results.report import summarize
    from registry.results.runs import ResultRow, RunManifest

    design = Design(splits=1, runs=3)
    cases = sorted(empty(40))
    plan, rounds = run(design, 40, lambda cid, arm, r: arm == "skill" and cid < "c22"
                       or cid >= "c32")
    assert plan.verdict == "helps" and plan.round == 1
    manifest = RunManifest(run_id="r1", skill_name="s", content_hash="h", suite_hash="x",
                           models=["m"], runs=3, case_ids=cases, design=design.to_dict(),
                           design_stops={"m": {"round": 1, "reason": plan.reason,
                                               "verdict": plan.verdict, "settled": 0}})
    rows = [ResultRow(run_id="r1", skill_name="s", skill_repo="org/s", content_hash="h",
                      model="m", arm=arm,
                      case_id=cid, repeat=r, passed=value, round=1, **manifest.row_fields())
            for cid, arm, r, value in rounds[0]]
    [summary] = summarize(rows, manifest)
    [entry] = run_entries(rows_frame(rows))
    at_level = compare_arms({c: [v for d, a, _, v in rounds[0] if d == c and a == "baseline"]
                             for c in cases},
                            {c: [v for d, a, _, v in rounds[0] if d == c and a == "skill"]
                             for c in cases})  # the 95% figures, for contrast
    assert (summary.stats.lo, summary.stats.hi) == (entry.lift_lo, entry.lift_hi)
    assert summary.stats.verdict == entry.verdict == "helps"
    assert entry.status == "" and entry.rank == 1  # 80 of 240 answers: whole, as its design stopped
    cut = [r for r in rows if r.case_id != "c39"]  # not where the design stopped: partial
    assert run_entries(rows_frame(cut))[0].status.startswith("partial")
    assert summary.stats.lo < at_level.lo  # the interval at 1 - 0.00333 is wider than at 95%
    assert [s.stats.lo for s in summarize(rows)] == [at_level.lo]  # without the design: 95%


def test_the_boards_replay_of_many_runs_gives_each_runs_own_level_to_the_last_digit():
    """`grouping.designed` replays every adaptive run of a frame together
    (`sequential_board.reportings`); each run's level and stop must be `reporting`'s for its
    own rows: runs played to their stop, cut short (partial), with errored samples, of several
    designs and suite sizes, one without its case list."""
    import json

    import pandas as pd

    from registry.results.grouping import Rows, designed

    rng = np.random.default_rng(41)
    designs = [Design(runs=3), Design(runs=5), Design(runs=1), Design(runs=3, futility=0),
               Design(runs=5, spending="pocock", settle_after=2)]
    records, want = [], []
    for k in range(80):
        design, n = designs[k % len(designs)], int(rng.choice([12, 20, 40]))
        p = rng.uniform(0, 1, n)
        lift = rng.choice([0.0, 0.2, 0.5])
        chance = {"baseline": p, "skill": np.minimum(p + lift, 1)}
        _, rounds = run(design, n, lambda cid, arm, r, c=chance: None if rng.random() < 0.05
                        else bool(rng.random() < c[arm][int(cid[1:])]))
        rows = [row for found in rounds for row in found]
        if k % 3 == 1:  # stopped mid-run (a kill): partial
            rows = rows[:int(rng.integers(1, len(rows) + 1))]
        cases = sorted(empty(n))
        spec = {**design.to_dict(), "stops": {}, **({} if k == 7 else {"cases": cases})}
        if k == 7:
            cases = sorted({row[0] for row in rows})
        want.append(seq.reporting(design, seq.history_of(cases, rows)))
        records += [{"run_id": f"r{k:02d}", "model": "m", "arm": arm, "case_id": cid,
                     "repeat": r, "passed": v, "error": "timeout" if v is None else None,
                     "design": json.dumps(spec, sort_keys=True)} for cid, arm, r, v in rows]
    frame = pd.DataFrame(records).sample(frac=1, random_state=0)  # rows in any order
    rows = Rows.from_frame(frame)
    group = rows.cols["run_id"]
    alpha, stopped = designed(rows, group, len(rows.labels["run_id"]))
    by_run = {str(label): (float(alpha[i]), bool(stopped[i]))
              for i, label in enumerate(rows.labels["run_id"])}
    assert [by_run[f"r{k:02d}"] for k in range(80)] == [(float(a), s) for a, s in want]
    assert {s for _, s in want} == {True, False}  # both kinds of run were replayed
    assert len({a for a, _ in want}) >= 5  # stops at several looks, partial runs at others
