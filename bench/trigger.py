"""Trigger evals' own overhead: `eval --mode trigger` against a fake model with 100 ms latency.

40 queries (half should trigger) x 3 runs x 2 models = 240 sessions at concurrency 16, the skill
listed among the 26 bundled distractors; the fake (`tests/fakes/trigger_model.py`, in another
process) opens the closest skill or answers in one call, so every session is one model call.
Ideal wall time: ceil(sessions / concurrency) rounds of one latency each; we print our wall time
over it (goal <= 1.2). A peer measured in the same rounds, the raw `openai` SDK sending the same
requests (the same listing, tools and queries through `chat.completions.create`) at the same
concurrency, shows what the machine and the SDK cost alone.

The fake is `tests/fakes/async_openai_server.py` (the OpenAI wire of `FakeOpenAIServer`,
served by asyncio: ~0.3 ms of its own CPU a request, printed below), so the figure measures
the client, not the fake. A warm-up run of each loads everything first; then `ROUNDS` rounds,
each running the peer and hubskills (in turns, first one then the other), and the medians are
printed, with each side's CPU per session (load-independent where the wall times are not) and
the load average. No response cache, so every call is made.

Measured 2026-11-29 on the shared 2-core machine: see docs/benchmarks.md (Trigger evals).
"""

from __future__ import annotations

import asyncio
import json
import math
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

LATENCY, QUERIES, RUNS, CONCURRENCY = 0.1, 40, 3, 16
MODELS = ["local/bench-a", "local/bench-b"]
ROUNDS = 7
DESCRIPTION = "Configure ports of the zorblax daemon and its widgets. Use when configuring zorblax."


def serve_fake(queue: multiprocessing.Queue) -> None:
    """The fake OpenAI server playing the trigger model after `LATENCY`; puts its URL."""
    from fakes.async_openai_server import AsyncOpenAIServer
    from fakes.trigger_model import TriggerModel

    server = AsyncOpenAIServer(responder=TriggerModel(threshold=2), latency=LATENCY).start()
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


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of another process so far (Linux), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(work: Callable[[], object], server_pid: int, into: dict[str, list[float]]) -> None:
    """Run `work` once; append its wall seconds, this process's CPU seconds and the fake's."""
    server = cpu_seconds(server_pid)
    cpu, started = time.process_time(), time.perf_counter()
    work()
    into["wall"].append(time.perf_counter() - started)
    into["cpu"].append(time.process_time() - cpu)
    if server is not None:
        into["fake"].append((cpu_seconds(server_pid) or 0.0) - server)


def report(hub: dict[str, list[float]], peer: dict[str, list[float]], sessions: int) -> None:
    """Print the medians: wall / ideal for both, CPU per session, the fake's CPU per request."""
    ideal = math.ceil(sessions / CONCURRENCY) * LATENCY
    ratio = [w / ideal for w in hub["wall"]]
    peer_ratio = [w / ideal for w in peer["wall"]]
    print(f"trigger eval: {QUERIES} queries x {RUNS} runs x {len(MODELS)} models = {sessions} "
          f"sessions of one call, {LATENCY * 1000:.0f} ms latency, concurrency {CONCURRENCY}: "
          f"ideal {ideal:.2f} s; medians of {ROUNDS} rounds")
    print(f"  hubskills  wall / ideal {statistics.median(ratio):.2f} "
          f"({min(ratio):.2f}-{max(ratio):.2f}), CPU "
          f"{statistics.median(hub['cpu']) / sessions * 1000:.2f} ms a session (goal <= 1.2)")
    print(f"  raw SDK    wall / ideal {statistics.median(peer_ratio):.2f} "
          f"({min(peer_ratio):.2f}-{max(peer_ratio):.2f}), CPU "
          f"{statistics.median(peer['cpu']) / sessions * 1000:.2f} ms a session")
    both = hub["fake"] + peer["fake"]
    fake = f"{statistics.median(both) / sessions * 1000:.2f} ms" if both else "unknown"
    relative = statistics.median(hub["wall"]) / statistics.median(peer["wall"])
    print(f"  hubskills / raw SDK {relative:.2f}; the fake's CPU {fake} a request; "
          f"load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    """Run the benchmark and print its ratios."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve_fake, args=(queue,), daemon=True)
    server.start()
    url = queue.get(timeout=30)
    from registry.config import Settings
    from registry.evaluation.trigger import TriggerConfig
    from registry.evaluation.trigger_run import run_trigger_eval

    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    hub: dict[str, list[float]] = {"wall": [], "cpu": [], "fake": []}
    peer: dict[str, list[float]] = {"wall": [], "cpu": [], "fake": []}
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env({"HUBSKILLS_HOME": os.path.join(tmp, "home"),
                                      "HUBSKILLS_BASE_URL": url})
        skill = bench_skill(Path(tmp))
        queries = json.loads((skill / "evals" / "triggers.json").read_text())
        config = TriggerConfig(models=MODELS, runs=RUNS, concurrency=CONCURRENCY,
                               use_cache=False)
        runs = []
        sides = [(hub, lambda: runs.append(run_trigger_eval(skill, config, settings))),
                 (peer, lambda: asyncio.run(_raw_sdk(url, queries)))]
        for _, work in sides:  # warm-up: imports, connections, caches
            work()
        for round_ in range(ROUNDS):
            for into, work in sides[::-1] if round_ % 2 else sides:
                measure(work, server.pid, into)
    server.terminate()
    run = runs[-1]
    sessions = len(run.rows)
    calls = sum(row.turns or 0 for row in run.rows)
    assert sessions == calls == QUERIES * RUNS * len(MODELS), (sessions, calls)
    assert not any(row.is_error for row in run.rows)
    report(hub, peer, sessions)


if __name__ == "__main__":
    main()
