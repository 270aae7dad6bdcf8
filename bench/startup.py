"""Start-up: `hubskills --help`, and a small eval beside two all-at-once reference clients.

Two walls, each the median of a few runs of a fresh process (so interpreter start-up and
imports count), the two sides of each comparison run in turn:

1. `hubskills --help`, beside a bare `python -c pass`.
2. `hubskills eval` of a 25-case skill with `--runs 1` (N = 50 requests: 25 cases x 2 arms)
   against a fake OpenAI-compatible server with a fixed 100 ms latency, at `--concurrency 100`,
   beside two peers that send the same 50 requests at once and grade them (no limits, retries,
   cache or saved run): `bench/peers/stdlib_eval.py`, the standard library only (the floor),
   and `bench/peers/all_at_once_eval.py`, the raw `openai` SDK. The ideal for all three is one
   round trip (0.1 s) plus start-up. Goals: hubskills within 3x of the stdlib client, and no
   more than 0.3 s slower than the raw-SDK client.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval_throughput import LATENCY, ROOT, bench_skill, serve_fake

CASES, CONCURRENCY, REPEATS = 25, 100, 7
FLOOR_GOAL, SDK_GOAL_S = 3.0, 0.3
PEERS = ROOT / "bench" / "peers"


def _walls(commands: list[list[str]], env: dict[str, str]) -> list[float]:
    """Median wall of each command over `REPEATS` fresh runs, the commands taken in turn so a
    loaded machine weighs on all of them alike (one untimed round first warms the OS caches)."""
    walls: list[list[float]] = [[] for _ in commands]
    for i in range(REPEATS + 1):
        for argv, times in zip(commands, walls, strict=True):
            t0 = time.perf_counter()
            done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - t0
            if done.returncode != 0:
                raise SystemExit(f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}")
            if i:
                times.append(wall)
    return [statistics.median(times) for times in walls]


def main() -> None:
    """Run both measurements and print them with their ratios."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve_fake, args=(queue,), daemon=True)
    server.start()
    url = queue.get(timeout=30)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            env = {**os.environ, "PYTHONPATH": str(ROOT), "HUBSKILLS_HOME": str(Path(tmp, "home")),
                   "NO_COLOR": "1"}
            skill = bench_skill(Path(tmp), CASES)
            hubskills = [sys.executable, "-m", "registry.cli"]
            bare, helped = _walls([[sys.executable, "-c", "pass"], [*hubskills, "--help"]], env)
            ours, floor, sdk = _walls([
                [*hubskills, "eval", str(skill), "-m", "local/bench", "--runs", "1",
                 "--concurrency", str(CONCURRENCY), "--base-url", url, "--no-cache"],
                *([sys.executable, str(PEERS / peer), str(skill), url, "bench"]
                  for peer in ("stdlib_eval.py", "all_at_once_eval.py")),
            ], env)
    finally:
        server.terminate()
    requests = CASES * 2
    print(f"start-up: median of {REPEATS} fresh processes each")
    print(f"  hubskills --help: {helped:.2f} s (bare python: {bare:.2f} s)")
    print(f"  eval N = {requests}, {LATENCY * 1000:.0f} ms latency, concurrency {CONCURRENCY}: "
          f"hubskills {ours:.2f} s, stdlib client {floor:.2f} s, raw-SDK client {sdk:.2f} s")
    print(f"  vs the stdlib client: ratio {ours / floor:.2f} (goal <= {FLOOR_GOAL:.0f}); "
          f"vs the raw-SDK client: {ours - sdk:+.2f} s (goal <= +{SDK_GOAL_S:.1f} s)")


if __name__ == "__main__":
    main()
