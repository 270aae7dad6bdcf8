"""How far an adaptive run's reported lift is from the truth, by simulation through the engine.

The review of issue 41 asked whether settled cases pull the lift towards 0: a case settled after
its first `settle_after` runs agree in both arms counts as no change, where the fixed plan's
later runs might have shown one. Each setting draws `SUITES` suites (40 cases, a base pass rate,
a true lift) and plays the same samples through the fixed design, the adaptive design at its
defaults, and the adaptive design with settling turned off (``settle_after`` = the runs), with
`sequential.settled_cases`, `asked_runs`, `look` and the engine's table at each look, as
tests/adaptive_sim.py does; printed per setting: the mean reported lift minus the true lift
(mean over cases of the pass-probability difference), in points; the fixed design is the peer
(unbiased up to noise). Run: `python bench/adaptive_bias.py` (about 15 s). Measured 2026-12-06:
docs/benchmarks.md#the-reported-lift-against-the-truth, docs/statistics.md#adaptive-evaluation.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from registry.results import sequential as seq  # noqa: E402

SUITES = 2000
CASES = 40


def reported(design: seq.Design, passed: np.ndarray) -> np.ndarray:
    """Each suite's lift as reported where its design stops (suite x case x arm x run)."""
    n = passed.shape[1]
    ones = np.ones(passed.shape, bool)
    settled = seq.settled_cases(design, ones, ones, passed)
    lift, active, spent = np.full(len(passed), np.nan), np.arange(len(passed)), None
    for j in range(1, seq.n_rounds(design, n) + 1):
        m = seq.asked_runs(design, n, j, settled[active])
        codes, tab, spent = seq.look(design, n, j, m, ones[active], passed[active], spent)
        lift[active[codes > 0]] = tab.lift[codes > 0]
        active, spent = active[codes == 0], spent.take(np.flatnonzero(codes == 0))
        if not len(active):
            break
    return lift


def setting(runs: int, base: str, effect: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    if base == "U-shaped":
        p = rng.beta(0.5, 0.5, size=(SUITES, CASES)) * (1 - effect)
    else:
        p = np.full((SUITES, CASES), 0.5)
    q = np.minimum(p + effect, 1.0)
    passed = rng.random((SUITES, CASES, 2, runs)) < np.stack([p, q], axis=2)[..., None]
    truth = (q - p).mean(axis=1)
    row = {"runs": runs, "base": base, "lift": effect}
    for name, design in (("fixed", seq.Design(kind="fixed", runs=runs)),
                         ("adaptive", seq.Design(runs=runs)),
                         ("no settling", seq.Design(runs=runs, settle_after=runs))):
        row[name] = 100 * float(np.mean(reported(design, passed) - truth))
    return row


def main() -> None:
    print(f"{SUITES:,} suites of {CASES} cases a setting; mean reported lift - true lift, "
          "in points")
    print("| cases × runs | base rate | true lift | fixed | adaptive (defaults) | adaptive, "
          "no settling |")
    print("|---|---|---|---|---|---|")
    for runs in (3, 5):
        for base in ("50%", "U-shaped"):
            for k, effect in enumerate((0.1, 0.3)):
                r = setting(runs, base, effect, seed=runs * 100 + len(base) * 10 + k)
                print(f"| {CASES} × {runs} | {base} | +{round(effect * 100)} | "
                      f"{r['fixed']:+.2f} | {r['adaptive']:+.2f} | {r['no settling']:+.2f} |")


if __name__ == "__main__":
    main()
