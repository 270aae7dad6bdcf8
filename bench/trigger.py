"""Trigger evals' own overhead: `eval --mode trigger` against a fake model with 100 ms latency.

40 queries (half should trigger) x 3 runs x 2 models at concurrency 16, the skill listed among
the 26 bundled distractors; the fake (`tests/fakes/trigger_model.py`, in another process) opens
the closest skill or answers in one call, so every session is one model call. Ideal wall time is
sessions x latency / concurrency; we print our wall time over it (goal <= 1.2). A peer measured
in the same rounds, the raw `openai` SDK sending the same requests (the same listing, tools and
queries) at the same concurrency, shows what the machine and the SDK cost alone. A warm-up
loads everything first; then `ROUNDS` rounds each time the peer and the run (no response cache,
so every call is made), and the medians are printed.

Measured on the shared 2-core machine: ratio 1.19-1.22 (three runs), the peer 1.22-1.25, so
hubskills / peer = 0.97-0.98: trigger mode adds nothing over the SDK's own request. The rest is
the floor of this fake and client: the same SDK sending 240 one-line requests (no listing, no
tools) to the same server measures 1.17-1.28 of the ideal, so the listing's size is not it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

LATENCY, QUERIES, RUNS, CONCURRENCY = 0.1, 40, 3, 16
MODELS = ["local/bench-a", "local/bench-b"]
ROUNDS = 3
DESCRIPTION = "Configure ports of the zorblax daemon and its widgets. Use when configuring zorblax."


def serve_fake(queue: multiprocessing.Queue) -> None:
    """A fake OpenAI server playing the trigger model after `LATENCY`; puts its URL."""
    from fakes.openai_server import FakeOpenAIServer
    from fakes.trigger_model import TriggerModel

    server = FakeOpenAIServer(responder=TriggerModel(threshold=2), latency=LATENCY)
    server.start()
    queue.put(server.url)
    time.sleep(3600)


def bench_skill(root: Path) -> Path:
    """`root/zorblax-ports` with `QUERIES` trigger queries, half of them should-trigger."""
    folder = root / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: zorblax-ports\ndescription: \"{DESCRIPTION}\""
                                     "\n---\n\nZorblax listens on port 4417.\n")
    queries = [{"query": f"configure zorblax ports on host {i}", "should_trigger": True}
               for i in range(QUERIES // 2)]
    queries += [{"query": f"bake bread number {i} in an oven", "should_trigger": False}
                for i in range(QUERIES // 2)]
    (folder / "evals" / "triggers.json").write_text(json.dumps(queries))
    return folder


async def _raw_sdk(url: str, queries: list[dict]) -> None:
    """The peer: the raw `openai` SDK sending every session's request (the same system prompt
    listing the skill among the bundled distractors, tools and query) at the same concurrency."""
    import openai

    from registry.agent import TOOLS
    from registry.agent.loop import skills_prompt
    from registry.evaluation.distractors import bundled_distractors
    from registry.evaluation.trigger import listing

    client = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0)
    limit = asyncio.Semaphore(CONCURRENCY)
    tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                               "parameters": t.parameters}} for t in TOOLS]
    distractors = bundled_distractors()

    async def one(model: str, i: int, repeat: int) -> None:
        listed = listing("zorblax-ports", DESCRIPTION, distractors, f"q{i + 1}:{repeat}")
        messages = [{"role": "system", "content": skills_prompt(listed)},
                    {"role": "user", "content": queries[i]["query"]}]
        async with limit:
            await client.chat.completions.create(model=model, messages=messages, tools=tools,
                                                 max_tokens=512, temperature=0.7, seed=repeat)

    await asyncio.gather(*(one(m, i, r) for r in range(RUNS) for i in range(QUERIES)
                           for m in MODELS))
    await client.close()


@contextlib.contextmanager
def timed(into: list[float]) -> Iterator[None]:
    """Append the seconds the block took to `into`."""
    started = time.perf_counter()
    try:
        yield
    finally:
        into.append(time.perf_counter() - started)


def main() -> None:
    """Run the benchmark and print its ratio."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve_fake, args=(queue,), daemon=True)
    server.start()
    url = queue.get(timeout=30)
    from registry.config import Settings
    from registry.evaluation.trigger import TriggerConfig
    from registry.evaluation.trigger_run import run_trigger_eval

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env({"HUBSKILLS_HOME": os.path.join(tmp, "home"),
                                      "HUBSKILLS_BASE_URL": url})
        skill = bench_skill(Path(tmp))
        queries = json.loads((skill / "evals" / "triggers.json").read_text())
        config = TriggerConfig(models=MODELS, runs=RUNS, concurrency=CONCURRENCY,
                               use_cache=False)
        run_trigger_eval(skill, TriggerConfig(models=MODELS[:1], runs=1, use_cache=False,
                                              query_ids=["q1"]), settings)  # warm-up
        walls: list[float] = []
        peers: list[float] = []
        for _ in range(ROUNDS):
            with timed(peers):
                asyncio.run(_raw_sdk(url, queries))
            with timed(walls):
                run = run_trigger_eval(skill, config, settings)
    server.terminate()
    wall, peer = statistics.median(walls), statistics.median(peers)
    sessions = len(run.rows)
    calls = sum(row.turns or 0 for row in run.rows)
    assert sessions == calls == QUERIES * RUNS * len(MODELS), (sessions, calls)
    assert not any(row.is_error for row in run.rows)
    ideal = calls * LATENCY / CONCURRENCY
    print(f"trigger eval: {QUERIES} queries x {RUNS} runs x {len(MODELS)} models = {sessions} "
          f"sessions of one call, {LATENCY * 1000:.0f} ms latency, concurrency {CONCURRENCY}")
    print(f"  wall {wall:.2f} s (median of {ROUNDS} rounds; {min(walls) / ideal:.2f}–"
          f"{max(walls) / ideal:.2f} of the ideal) / ideal {ideal:.2f} s = ratio "
          f"{wall / ideal:.2f} (goal <= 1.2)")
    print(f"  peer (raw openai SDK, same requests): {peer:.2f} s, ratio to ideal "
          f"{peer / ideal:.2f}; hubskills / peer = {wall / peer:.2f}")


if __name__ == "__main__":
    main()
