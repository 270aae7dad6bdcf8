"""The trade between answers saved under a real lift and power, across variants of the adaptive
design (issue 41; docs/statistics.md#adaptive-evaluation, "Why this design").

Each variant (the defaults but for the parameters named) runs through `bench/adaptive.py`'s
grid with the same samples (`SUITES` suites a setting, 38 settings a lift) and is summed up in
one line: the answers saved (median over the settings) at +0 and at +30, the most false
"helps" under no effect, the least coverage, and at the goal's anchor (40 cases x 3 runs,
+30) the power against the fixed design's on the same `ANCHOR_SUITES` suites (a difference of
a few suites in a thousand, which 2,000 suites cannot tell from noise), in points with the
paired difference's 95% interval and the suites only the adaptive design called "helps"
(gained) and only the fixed one did (lost). "power-r" is Kim-DeMets' power family
alpha * t^r (linear is r = 1), measured here but not offered.

Goals (issue 41): saved >= 40% at +0 and at +30; false helps <= 2.5%; coverage >= 95%; power
at the anchor >= the fixed design's at every base rate. Prints a markdown table; writes nothing.

Measured 2026-12-07 (2,000 suites a setting, 20,000 at the anchor, 30-90 s a variant, about 15
min in all): no variant meets every line; the rows are docs/statistics.md's frontier table.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from adaptive import ANCHOR_SUITES, BASES, CASES, RUNS, SUITES, anchor, power_gap, setting

VARIANTS: tuple[dict, ...] = (
    {},
    {"spending": "power-1.15"},
    {"spending": "power-1.25"},
    {"spending": "power-1.5"},
    {"spending": "obrien-fleming"},
    {"futility": 0.2},
    {"futility": 0.25},
    {"spending": "power-1.25", "futility": 0.25},
    {"spending": "power-1.25", "settle_after": 3},
    {"futility": 0.0, "early_futility": 0.0},
    {"spending": "obrien-fleming", "futility": 0.0, "early_futility": 0.0},
    {"spending": "obrien-fleming", "futility": 0.05, "early_futility": 0.0},
    {"spending": "power-1.5", "futility": 0.05, "early_futility": 0.0},
    # more looks (three or four rounds a run), and settling after two agreeing runs
    {"splits": 3},
    {"splits": 4},
    {"spending": "obrien-fleming", "splits": 4, "futility": 0.05, "early_futility": 0.0},
    {"settle_after": 2},
    {"spending": "obrien-fleming", "settle_after": 2},
)


def variant(design: dict) -> dict:
    """The one-line summary of a variant (module docstring)."""
    out: dict = {"design": design}
    for lift in (0.0, 0.3):
        rows = [setting(n, runs, base, lift, design=design, fixed=False)
                for n in CASES for runs in RUNS for base in BASES]
        rows += [setting(40, 3, "flaky", lift, design=design, fixed=False),
                 setting(40, 3, "50%", lift, lost=True, design=design, fixed=False)]
        out[f"saved{lift}"] = float(np.median([r["saved"] for r in rows]))
        out.setdefault("coverage", 1.0)
        out["coverage"] = min(out["coverage"], min(r["coverage"] for r in rows))
        if lift == 0:
            out["helps"] = max(r["helps"] for r in rows)
    out["anchor"] = anchor(design)
    return out


def line(v: dict) -> str:
    name = ", ".join(f"{k} {val}" for k, val in v["design"].items()) or "the defaults"
    power = ", ".join(power_gap(r) for r in v["anchor"])
    return (f"| {name} | {v['saved0.0']:.1%} | {v['saved0.3']:.1%} | {v['helps']:.2%} "
            f"| {v['coverage']:.1%} | {power} |")


def main() -> None:
    print(f"{SUITES:,} suites a setting; power at 40 x 3, +30 against the fixed design on "
          f"{ANCHOR_SUITES:,} suites, in points with its 95% interval: 10%, 50%, U-shaped, "
          "flaky, 50% with 5% errors", "",
          "| variant | saved at +0 | saved at +30 | false helps, most | coverage, least "
          "| power vs fixed at 40 × 3, +30 |", "|---|---|---|---|---|---|", sep="\n")
    for design in VARIANTS:
        start = time.perf_counter()
        print(line(variant(design)), flush=True)
        print(f"  ({time.perf_counter() - start:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
