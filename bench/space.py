"""Space benchmark: server-side time to build the leaderboard view (run: `python bench/space.py`).

The Space's Leaderboard tab calls `leaderboard.entries()` then `leaderboard.table_rows()` on the
store's results frame. Shape: 10,000 skills x 10 models, one run each of 10 cases x 1 repeat
x 2 arms = 2,000,000 rows and 100,000 table rows, a frame like the store's (categorical strings,
~1% errors). Goal: <= 1.5 s for both calls together. Best wall time of 5 calls (with its CPU
time); peak memory measured in a separate traced call.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from registry.results import leaderboard, leaderboard_table  # noqa: E402

SPACE_GOAL_S = 1.5
SHAPE = {"skills": 10_000, "models": 10, "runs": 1, "cases": 10, "repeats": 1}


def _bench_registry():
    """`bench/registry.py` (its synthesizer); loaded by path, as `registry` names the package."""
    spec = importlib.util.spec_from_file_location("bench_registry", Path(__file__).with_name(
        "registry.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_view(repeat: int = 5) -> float:
    """Time entries() + table_rows() over the Space-sized frame; returns the ratio to the goal."""
    helpers = _bench_registry()
    frame = helpers.synthesize(**SHAPE)

    def view() -> tuple[list[str], list[list[str]]]:
        return leaderboard_table.table_rows(leaderboard.entries(frame))

    seconds, cpu, (_, rows) = helpers.timed(view, repeat=repeat)
    ratio = seconds / SPACE_GOAL_S
    peak = helpers.traced_peak_mib(view)
    print(f"space leaderboard view, {SHAPE['skills']:,} skills × {SHAPE['models']} models "
          f"({len(frame):,} rows → {len(rows):,} table rows): {seconds:.2f} s "
          f"(goal ≤ {SPACE_GOAL_S:g} s, ratio {ratio:.2f}); CPU {cpu:.2f} s; "
          f"peak memory {peak:.0f} MiB")
    return ratio


def main(argv: list[str] | None = None) -> int:
    """Run the Space benchmark; exit 1 when it misses its goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed calls")
    args = parser.parse_args(argv)
    return 0 if bench_view(args.repeat) <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
