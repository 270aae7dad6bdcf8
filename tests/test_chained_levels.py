"""The chained levels of an adaptive run's looks (`results.chained_levels`): exact under the
sign-flip null, checked by enumerating every swap of the arms on small suites."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from registry.results.chained_levels import Spent, chained
from registry.results.formulas import mcnemar_exact
from registry.results.sequential import Design, spent


def test_a_first_look_takes_the_largest_level_its_spending_allows():
    # ten decided cases: p = 0.00195 (0 or 10 better), 0.0215 (1 or 9), 0.109 (2 or 8), ...
    status = np.array([[1] * 6 + [-1] * 4 + [0] * 2], np.int8)
    spent = chained(Spent.start(1, 12), status, 0.05, 0.05)
    assert spent.level[0] == 0.05  # p <= 0.0215 rejects; adding 2 or 8 would spend 0.109
    assert spent.union[0] == pytest.approx(2 * (1 + 10) / 1024, abs=1e-15)
    tight = chained(Spent.start(1, 12), status, 0.01, 0.05)
    assert tight.level[0] == 0.01 and tight.union[0] == pytest.approx(2 / 1024, abs=1e-15)
    assert chained(Spent.start(1, 12), status, 0.0, 0.05).level[0] == 0.0  # spends nothing


def looks(trajectory: np.ndarray, caps: list[float]) -> list[tuple[float, int, int]]:
    """Per look: (level, better, worse) for one suite's signs (look x case)."""
    state, out = Spent.start(1, trajectory.shape[1]), []
    for status, cap in zip(trajectory, caps, strict=True):
        state = chained(state, status[None].astype(np.int8), cap, 0.05)
        out.append((float(state.level[0]), int((status > 0).sum()), int((status < 0).sum())))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_under_every_swap_of_the_arms_the_looks_reject_within_what_was_spent(seed: int):
    """Enumerate all 2^n swaps of a suite's cases: each look's level is the same for every
    swap (it depends only on what swaps leave alone), and the share of swaps rejecting at any
    look so far stays within the spending function's value there."""
    rng = np.random.default_rng(seed)
    n, design = 11, Design(runs=3)
    # signs that drift from look to look, as a case's pass fractions do with more runs
    first = rng.choice([-1, 0, 1], size=n, p=[0.3, 0.3, 0.4])
    second = np.where(rng.random(n) < 0.3, rng.choice([-1, 0, 1], size=n), first)
    third = np.where(rng.random(n) < 0.3, rng.choice([-1, 0, 1], size=n), second)
    trajectory = np.stack([first, second, third])
    caps = [spent(design, t) for t in (1 / 3, 2 / 3, 1.0)]
    levels = None
    rejected_by = np.zeros(3)
    for flips in itertools.product([1, -1], repeat=n):
        seen = looks(trajectory * np.array(flips), caps)
        mine = [level for level, _, _ in seen]
        levels = levels or mine
        assert mine == levels  # the levels do not depend on the swap
        hit = [mcnemar_exact(b, c) < level for level, b, c in seen]
        rejected_by += np.cumsum(hit) > 0
    share = rejected_by / 2**n
    assert np.all(share <= np.array(caps) + 1e-12), (share, caps)


def test_the_statistics_page_example_by_hand():
    """docs/statistics.md, "Check it by hand": 40 cases x 3 runs at the defaults, stopping at
    round 3 (the first half's second run) after half the answers."""
    from registry.results.sequential import plan_round, spent_by

    outcomes = ([([False] * 3, [True] * 3)] * 3 + [([True, False, True], [True] * 3)] * 3
                + [([True] * 3, [True] * 3)] * 14 + [([False] * 3, [True] * 3)] * 2
                + [([True] * 3, [True] * 3)] * 18)
    truth = {f"c{i:02d}": pair for i, pair in enumerate(outcomes)}
    history = {c: {"baseline": [], "skill": []} for c in truth}
    design = Design(runs=3)
    assert [spent_by(design, 40, j) for j in (1, 2, 3)] == [0.05 / 6, 0.05 / 3, 0.025]
    while not (plan := plan_round(design, history)).stop:
        for case, run in plan.samples:
            history[case]["baseline"].append(truth[case][0][run])
            history[case]["skill"].append(truth[case][1][run])
    assert plan.round == 3 and plan.verdict == "helps" and plan.alpha == 0.025
    assert sum(len(h["skill"]) for h in history.values()) == 60  # of 120 a arm
    # the looks by hand: nothing can reject at looks 1 and 2; at look 3 only 0 or 8 of 8
    state = Spent.start(1, 40)
    for j, up in ((1, [0, 1, 2]), (2, [0, 1, 2, 20, 21]), (3, [0, 1, 2, 3, 4, 5, 20, 21])):
        status = np.zeros((1, 40), np.int8)
        status[0, up] = 1
        state = chained(state, status, spent_by(design, 40, j), 0.05)
        assert state.union[0] == (2 / 256 if j == 3 else 0)  # 3 or 5 decided: p >= 0.0625
    assert mcnemar_exact(8, 0) == 2 / 256 < state.level[0] == 0.025


def test_the_boards_codes_only_look_agrees_with_the_full_look():
    """`look_codes` (the leaderboard's replay) skips the engine's table where the sign test
    cannot reject: its codes and levels are `look`'s on random suites, errors included."""
    from registry.results import sequential as seq

    rng = np.random.default_rng(7)
    design = Design(runs=3)
    for lift in (0.0, 0.2, 0.4):
        base = rng.uniform(0.1, 0.9, size=(300, 30))
        passed = rng.random((300, 30, 2, 3)) < np.stack(
            [base, np.minimum(base + lift, 1)], 2)[..., None]
        graded = rng.random(passed.shape) > 0.05
        settled = seq.settled_cases(design, np.ones_like(passed), graded, passed)
        full = codes_only = None
        for j in range(1, seq.n_rounds(design, 30) + 1):
            m = seq.asked_runs(design, 30, j, settled)
            a, _, full = seq.look(design, 30, j, m, graded, passed, full)
            b, codes_only = seq.look_codes(design, 30, j, m, graded, passed, codes_only)
            assert np.array_equal(a, b) and np.array_equal(full.level, codes_only.level)


def test_a_look_too_large_for_the_exact_table_spends_what_is_left_by_bonferroni():
    """A submitted run may claim any number of cases: past `MAX_EXACT` decided cases no
    (d + 1)^2 table is built, and the level is what the spending has left (valid)."""
    from registry.results import chained_levels

    n = chained_levels.MAX_EXACT + 100
    first = chained(Spent.start(1, n), np.ones((1, n), np.int8), 0.02, 0.05)
    assert first.level[0] == 0.02 and first.union[0] == 0.02
    second = chained(first, np.ones((1, n), np.int8), 0.05, 0.05)
    assert second.level[0] == pytest.approx(0.03) and second.union[0] == pytest.approx(0.05)
