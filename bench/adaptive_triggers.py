"""Adaptive trigger evals against the fixed plan, by simulation through the design's own
functions (`results.sequential_rates.simulate`, issue 41).

Each setting draws `SUITES` suites (queries, half of them should-trigger, x runs; per-query
chances to open the skill near-perfect, U-shaped or flaky; 5% failed sessions) and plays them
through the default adaptive design and the fixed one. Printed per setting: the sessions the
adaptive design saved (1 - its sessions / the fixed plan's), the share of suites it stopped
before the last round because recall and false triggers were settled, and how often the
interval it reports covers the true mean rate (recall, false triggers), beside the fixed
plan's coverage at 95%.

Goals: coverage >= 95% for both figures in every setting, and no suite past the fixed plan
(exit 1 otherwise). The table goes to stdout and into docs/benchmarks.md between the
`adaptive-triggers` markers (`--no-write` leaves the page alone).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from registry.results.sequential_rates import RateDesign, simulate  # noqa: E402

SUITES = 4000
QUERIES = (10, 20, 40, 80)
RUNS = (3, 5)
RATES = {  # should-trigger and should-not chances per query, and their means
    "perfect": (lambda r, s: np.ones(s), lambda r, s: np.zeros(s), 1.0, 0.0),
    "near-perfect": (lambda r, s: r.beta(9, 1, s), lambda r, s: r.beta(1, 9, s), 0.9, 0.1),
    "U-shaped": (lambda r, s: r.beta(0.5, 0.5, s), lambda r, s: r.beta(0.5, 0.5, s), 0.5, 0.5),
    "flaky": (lambda r, s: r.uniform(0.3, 0.7, s), lambda r, s: r.uniform(0.1, 0.4, s), 0.5,
              0.25),
}
PAGE = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- adaptive-triggers:begin -->", "<!-- adaptive-triggers:end -->"


def covered(found: dict, k: int, mean: float) -> float:
    return float(((found["lo"][:, k] <= mean) & (mean <= found["hi"][:, k])).mean())


def main() -> int:
    rng = np.random.default_rng(41)
    lines = ["| queries x runs | rates | sessions saved | stopped early | coverage recall / "
             "false triggers | fixed plan's coverage |", "|---|---|---|---|---|---|"]
    worst, over, saved_all = 1.0, 0, []
    started = time.perf_counter()
    for n in QUERIES:
        for runs in RUNS:
            for name, (draw_should, draw_not, m_should, m_not) in RATES.items():
                should = np.arange(n) < n // 2
                p = np.concatenate([draw_should(rng, (SUITES, n // 2)),
                                    draw_not(rng, (SUITES, n - n // 2))], 1)
                ada = simulate(RateDesign(runs=runs), should, p, rng, errors=0.05)
                fix = simulate(RateDesign(kind="fixed", runs=runs), should, p, rng, errors=0.05)
                cov = (covered(ada, 0, m_should), covered(ada, 1, m_not))
                fcov = (covered(fix, 0, m_should), covered(fix, 1, m_not))
                saved = 1 - ada["calls"].mean() / (n * runs)
                worst, saved_all = min(worst, *cov), [*saved_all, saved]
                over += int((ada["calls"] > n * runs).sum())
                lines.append(f"| {n} x {runs} | {name} | {saved:.0%} | "
                             f"{(ada['round'] < runs).mean():.0%} | {cov[0]:.1%} / {cov[1]:.1%} "
                             f"| {fcov[0]:.1%} / {fcov[1]:.1%} |")
    took = time.perf_counter() - started
    summary = (f"{len(saved_all)} settings, {SUITES:,} suites each ({took:.0f} s): sessions "
               f"saved {min(saved_all):.0%}-{max(saved_all):.0%} (median "
               f"{float(np.median(saved_all)):.0%}); lowest coverage {worst:.1%} (goal >= 95%); "
               f"suites past the fixed plan: {over} (goal 0)")
    print("\n".join(lines))
    print(summary)
    if "--no-write" not in sys.argv:
        text = PAGE.read_text(encoding="utf-8")
        if BEGIN in text and END in text:
            block = f"{BEGIN}\n" + "\n".join(lines) + f"\n\n{summary}\n{END}"
            PAGE.write_text(re.sub(re.escape(BEGIN) + ".*?" + re.escape(END),
                                   lambda _: block, text, flags=re.S), encoding="utf-8")
    return 0 if worst >= 0.95 and over == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
