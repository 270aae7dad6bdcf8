"""Evaluation engine throughput against a fake server with a fixed 100 ms latency.

50 cases x 2 arms x 3 repeats = 300 requests at concurrency 16. Ideal wall time is
requests x latency / concurrency; we print our wall time over it (goal <= 1.15), the engine's
CPU time per call (the server runs in another process, so it is not counted), and the wall time
of a fully cached rerun. A peer is measured in the same run: the raw `openai` SDK making the same
300 requests at the same concurrency, so a loaded machine shows up in both numbers.
SDK imports and client creation happen in a warm-up before anything is timed.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

LATENCY, CASES, RUNS, CONCURRENCY = 0.1, 50, 3, 16


def serve_fake(queue: multiprocessing.Queue) -> None:
    """A fake OpenAI server answering "The answer is 42." after `LATENCY`; puts its URL."""
    from fakes.openai_server import FakeOpenAIServer

    server = FakeOpenAIServer(responder=lambda body: "The answer is 42.", latency=LATENCY)
    server.start()
    queue.put(server.url)
    time.sleep(3600)


def bench_skill(root: Path, cases: int = CASES) -> Path:
    """`root/bench-skill` with `cases` cases that pass when the answer holds "42"."""
    folder = root / "bench-skill"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        '---\nname: bench-skill\ndescription: "A benchmark skill. Use when benchmarking."\n'
        "---\n\nThe answer is always 42.\n")
    suite = [{"id": f"c{i}", "prompt": f"Question {i}?",
              "checks": [{"type": "contains", "value": ["42"]}]} for i in range(cases)]
    (folder / "evals" / "evals.json").write_text(json.dumps({"cases": suite}))
    return folder


async def _raw_sdk(url: str, requests: int) -> None:
    import openai

    client = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0)
    limit = asyncio.Semaphore(CONCURRENCY)

    async def one(i: int) -> None:
        async with limit:
            await client.chat.completions.create(
                model="bench", messages=[{"role": "user", "content": f"Question {i}?"}],
                max_tokens=512, temperature=0.7, seed=0)

    await asyncio.gather(*(one(i) for i in range(requests)))
    await client.close()


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    """Run the benchmark and print its ratios."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve_fake, args=(queue,), daemon=True)
    server.start()
    url = queue.get(timeout=30)
    from registry.config import Settings
    from registry.evaluation.config import EvalConfig
    from registry.evaluation.engine import run_evaluation

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env({"HUBSKILLS_HOME": os.path.join(tmp, "home"),
                                      "HUBSKILLS_BASE_URL": url})
        skill = bench_skill(Path(tmp))
        config = EvalConfig(models=["local/bench"], runs=RUNS, concurrency=CONCURRENCY)
        requests = CASES * 2 * RUNS
        run_evaluation(skill, EvalConfig(models=["local/bench"], runs=1, case_ids=["c0"],
                                         use_cache=False), settings)  # warm-up: imports
        asyncio.run(_raw_sdk(url, 1))
        t_peer = time.perf_counter()
        asyncio.run(_raw_sdk(url, requests))
        peer = time.perf_counter() - t_peer
        cpu0, t0 = _cpu(), time.perf_counter()
        run_evaluation(skill, config, settings)
        wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
        t1 = time.perf_counter()
        rerun = run_evaluation(skill, config, settings)
        cached_wall = time.perf_counter() - t1
    server.terminate()
    ideal = requests * LATENCY / CONCURRENCY
    assert all(row.cached for row in rerun.rows)
    print(f"eval throughput: {requests} requests, {LATENCY * 1000:.0f} ms latency, "
          f"concurrency {CONCURRENCY}")
    print(f"  wall {wall:.2f} s / ideal {ideal:.2f} s = ratio {wall / ideal:.2f} (goal <= 1.15)")
    print(f"  peer (raw openai SDK, same requests): {peer:.2f} s, ratio to ideal "
          f"{peer / ideal:.2f}; hubskills / peer = {wall / peer:.2f}")
    print(f"  engine CPU per call: {cpu / requests * 1000:.1f} ms")
    print(f"  cached rerun: {cached_wall:.2f} s for {requests} samples, 0 model calls")


if __name__ == "__main__":
    main()
