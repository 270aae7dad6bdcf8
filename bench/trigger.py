"""Trigger evals' own overhead: `eval --mode trigger` against a fake model with 100 ms latency.

40 queries (half should trigger) x 3 runs x 2 models = 240 sessions at concurrency 16, the skill
listed among the 26 bundled distractors; the fake (`tests/fakes/trigger_model.py`, in another
process) opens the closest skill or answers in one call, so every session is one model call.
Ideal wall time: ceil(sessions / concurrency) rounds of one latency each; we print our wall time
over it (goal <= 1.2). Two peers measured in the same rounds send the same requests (the same
listing, tools and queries) at the same concurrency with the raw `openai` SDK: through
`chat.completions.create` (what a hand-written client does; it first walks each body against
the SDK's types), and through the SDK's generic `post`, as hubskills sends them. The second is
the floor of this client and machine; hubskills' CPU a session over it is hubskills' own part.

The fake is `tests/fakes/async_openai_server.py` (the OpenAI wire of `FakeOpenAIServer`,
served by asyncio: ~0.3 ms of its own CPU a request, printed below; the threaded fake took
~1.3 ms), so the figure measures the client, not the fake. A warm-up run of each side loads
everything first; then `ROUNDS` rounds, each running every side (in turns, each side first as
often as last), and the medians are printed, with each side's CPU a session (which a busy
machine stretches far less than the wall times) and the load average. No response cache, so
every call is made.

Measured 2026-11-29 on the 2-core machine at load average below 1, after the endpoint probe
moved beside the run's first calls and answers are read as the JSON sent: hubskills 1.24 and
1.25 of the ideal (rounds 1.19-1.29), the `create` peer 1.30 and 1.28, the `post` peer (the
floor) 1.23 and 1.22; CPU a session 3.07-3.34 ms, 4.50-4.81 ms, 2.94-2.97 ms. Goal <= 1.2 not
met: hubskills is at the SDK's floor, which itself misses it here. Details: docs/benchmarks.md.
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
PEER = "raw SDK create"
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


async def _raw_sdk(url: str, queries: list[dict], *, generic: bool = False) -> None:
    """The peer: the raw `openai` SDK sending every session's request (the same system prompt
    listing the skill among the bundled distractors, tools and query) at the same concurrency,
    through `chat.completions.create`, or with `generic` its `post` as hubskills does."""
    import openai
    from openai.types.chat import ChatCompletion

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
        body = {"model": model, "messages": messages, "tools": tools, "max_tokens": 512,
                "temperature": 0.7, "seed": repeat}
        async with limit:
            if generic:
                await client.post("/chat/completions", body=body, cast_to=ChatCompletion)
            else:
                await client.chat.completions.create(**body)

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


def report(sides: dict[str, dict[str, list[float]]], sessions: int) -> None:
    """Print the medians: each side's wall / ideal and CPU a session, the fake's CPU a request."""
    ideal = math.ceil(sessions / CONCURRENCY) * LATENCY
    print(f"trigger eval: {QUERIES} queries x {RUNS} runs x {len(MODELS)} models = {sessions} "
          f"sessions of one call, {LATENCY * 1000:.0f} ms latency, concurrency {CONCURRENCY}: "
          f"ideal {ideal:.2f} s; medians of {ROUNDS} rounds (range)")
    for name, side in sides.items():
        ratio = [wall / ideal for wall in side["wall"]]
        print(f"  {name:<28} wall / ideal {statistics.median(ratio):.2f} "
              f"({min(ratio):.2f}-{max(ratio):.2f}), CPU "
              f"{statistics.median(side['cpu']) / sessions * 1000:.2f} ms a session"
              + (" (goal <= 1.2)" if name == "hubskills" else ""))
    walls = {name: statistics.median(side["wall"]) for name, side in sides.items()}
    fake = [cpu for side in sides.values() for cpu in side["fake"]]
    print(f"  hubskills / {PEER}: {walls['hubskills'] / walls[PEER]:.2f}; the fake's CPU "
          + (f"{statistics.median(fake) / sessions * 1000:.2f} ms a request" if fake else "?"))
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        print(f"  load average {load:.1f} on {os.cpu_count()} cores: the walls are stretched; "
              "the ratios between the sides and the CPU a session still compare")
    else:
        print(f"  load average {load:.1f} on {os.cpu_count()} cores")


def main() -> None:
    """Run the benchmark and print its ratios."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve_fake, args=(queue,), daemon=True)
    server.start()
    url = queue.get(timeout=30)
    from registry.config import Settings
    from registry.evaluation.config import EvalConfig
    from registry.evaluation.trigger_run import run_trigger_eval

    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env({"HUBSKILLS_HOME": os.path.join(tmp, "home"),
                                      "HUBSKILLS_BASE_URL": url})
        skill = bench_skill(Path(tmp))
        queries = json.loads((skill / "evals" / "triggers.json").read_text())
        config = EvalConfig(models=MODELS, mode="trigger", runs=RUNS, concurrency=CONCURRENCY,
                               use_cache=False)
        runs = []
        work: dict[str, Callable[[], object]] = {
            "hubskills": lambda: runs.append(run_trigger_eval(skill, config, settings)),
            PEER: lambda: asyncio.run(_raw_sdk(url, queries)),
            "raw SDK post (as hubskills)": lambda: asyncio.run(
                _raw_sdk(url, queries, generic=True))}
        sides = {name: {"wall": [], "cpu": [], "fake": []} for name in work}
        for name in work:  # warm-up: imports, connections, caches
            work[name]()
        for round_ in range(ROUNDS):  # in turns, each side first as often as last
            for name in list(work)[round_ % 3:] + list(work)[:round_ % 3]:
                measure(work[name], server.pid, sides[name])
    server.terminate()
    run = runs[-1]
    sessions = len(run.rows)
    calls = sum(row.turns or 0 for row in run.rows)
    assert sessions == calls == QUERIES * RUNS * len(MODELS), (sessions, calls)
    assert not any(row.is_error for row in run.rows)
    report(sides, sessions)


if __name__ == "__main__":
    main()
