"""Start-up: `hubskills --help`, and a small eval beside an all-at-once reference client.

Two walls, each the median of a few runs of a fresh process (so interpreter start-up and
imports count), the two sides of each comparison run in turn:

1. `hubskills --help`, beside a bare `python -c pass`.
2. `hubskills eval` of a 25-case skill with `--runs 1` (N = 50 requests: 25 cases x 2 arms)
   against a fake OpenAI-compatible server with a fixed 100 ms latency, at `--concurrency 100`,
   beside `bench/peers/all_at_once_eval.py`: the same 50 requests sent with the raw `openai`
   SDK in one `asyncio.gather` (no limits, retries, cache or saved run). The ideal for both is
   one round trip (0.1 s) plus start-up. Goal: hubskills within 3x of the reference.
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
GOAL = 3.0
REFERENCE = ROOT / "bench" / "peers" / "all_at_once_eval.py"


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
            ours, peer = _walls([
                [*hubskills, "eval", str(skill), "-m", "local/bench", "--runs", "1",
                 "--concurrency", str(CONCURRENCY), "--base-url", url, "--no-cache"],
                [sys.executable, str(REFERENCE), str(skill), url, "bench"],
            ], env)
    finally:
        server.terminate()
    requests = CASES * 2
    print(f"start-up: median of {REPEATS} fresh processes each")
    print(f"  hubskills --help: {helped:.2f} s (bare python: {bare:.2f} s)")
    print(f"  eval N = {requests}, {LATENCY * 1000:.0f} ms latency, concurrency {CONCURRENCY}: "
          f"hubskills {ours:.2f} s, reference client {peer:.2f} s, "
          f"ratio {ours / peer:.2f} (goal <= {GOAL:.0f})")


if __name__ == "__main__":
    main()
