"""Agent mode's own overhead: hubskills' tool loop against a fake model with 100 ms latency.

40 cases x 2 arms, each a scripted 5-turn trajectory (write a file, run a check that fails in
bubblewrap, edit the file, run the check again, answer; the skill arm also reads SKILL.md), at
concurrency 16. Ideal wall time is model calls x latency / concurrency (the tools cost nothing
in the ideal); we print our wall time over it (goal <= 1.2) and the sandbox's share: the time
samples wait on it (a sample's commands share one bubblewrap session, started in the background
at its first tool call: its `run` calls, which wait for that start, and the session's end),
summed, over the samples' summed wall time. The same run with commands
answered instantly (no sandbox) shows the loop's own cost apart, and a peer measured in the
same run (the raw `openai` SDK holding the same conversations) shows what a loaded machine and
the SDK cost alone. The fake server runs in another process. A warm-up loads everything first;
then `ROUNDS` rounds each time the peer, the run and the loop alone, and the medians are printed
(one run varies by about ±0.04 of the ideal on a shared 2-core machine); the sandbox's figures
are the last round's.
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

LATENCY, CASES, CONCURRENCY, TURNS = 0.1, 40, 16, 5
ROUNDS = 3  # the run, the peer and the loop alone are each measured this often (medians)
SANDBOX_SECONDS: list[float] = []  # each session command, and each session's start and end
SESSION_STARTS: list[float] = []
COMMANDS: list[float] = []  # each `run` call's wait in bwrap (for the start, then the command)
DIRECT_SECONDS: list[float] = []


def serve_fake(queue: multiprocessing.Queue) -> None:
    """A fake OpenAI server playing the scripted agent after `LATENCY`; puts its URL."""
    from fakes.openai_server import FakeOpenAIServer
    from fakes.tool_script import AgentScript

    script = AgentScript(skill="bench-skill", command="grep -c port config.toml")
    server = FakeOpenAIServer(responder=script, latency=LATENCY)
    server.start()
    queue.put(server.url)
    time.sleep(3600)


def bench_skill(root: Path) -> Path:
    """`root/bench-skill` with `CASES` agent cases that pass when the answer names the port."""
    folder = root / "bench-skill"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        '---\nname: bench-skill\ndescription: "A benchmark skill. Use when benchmarking."\n'
        "---\n\nZorblax listens on port 4417.\n")
    suite = [{"id": f"c{i}", "prompt": f"Task {i}: write config.toml.",
              "checks": [{"type": "contains", "value": ["4417"]}]} for i in range(CASES)]
    (folder / "evals" / "agent.json").write_text(json.dumps({"cases": suite}))
    return folder


async def _raw_sdk(url: str, samples: int) -> None:
    """The peer: the raw `openai` SDK holding the same 5-turn conversations (same prompts,
    tools and growing history, tool results answered at once) at the same concurrency."""
    import openai

    from registry.agent import TOOLS, AgentTask, system_prompt

    client = openai.AsyncOpenAI(base_url=url, api_key="sk-bench", max_retries=0)
    limit = asyncio.Semaphore(CONCURRENCY)
    tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                               "parameters": t.parameters}} for t in TOOLS]

    async def one(i: int) -> None:
        skill = (".agents/skills/bench-skill", "bench-skill", "A benchmark skill.") \
            if i % 2 else (None, None, None)
        task = AgentTask("", Path("."), skill_path=skill[0], skill_name=skill[1],
                         skill_description=skill[2])
        messages: list = [{"role": "system", "content": system_prompt(task)},
                          {"role": "user", "content": f"Task {i // 2}: write config.toml."}]
        for _ in range(TURNS):
            async with limit:
                reply = await client.chat.completions.create(
                    model="bench", messages=messages, tools=tools, max_tokens=512,
                    temperature=0.7, seed=0)
            message = reply.choices[0].message
            if not message.tool_calls:
                break
            messages.append(message.model_dump(exclude_none=True))
            messages += [{"role": "tool", "tool_call_id": c.id, "content": "exit code 0\n1"}
                         for c in message.tool_calls]

    await asyncio.gather(*(one(i) for i in range(samples)))
    await client.close()


@contextlib.contextmanager
def timed(*into: list[float]) -> Iterator[None]:
    """Append the seconds the block took to each list in `into`."""
    started = time.perf_counter()
    try:
        yield
    finally:
        for seconds in into:
            seconds.append(time.perf_counter() - started)


def register_bench_sandboxes() -> None:
    """`bench-bwrap`: bubblewrap sessions, with each session's start (in the background) and
    the time samples wait in `run` calls and session ends recorded; `bench-direct`: the same
    commands as plain subprocesses, one per command, no isolation; `bench-null`: a command that
    does nothing and takes no time (the loop's own cost, without a sandbox)."""
    from registry.agent.tools import WorkspaceTools
    from registry.sandbox import (
        BwrapSandbox,
        CommandSession,
        DirectSandbox,
        SandboxResult,
        backend,
    )
    from registry.sandbox.bwrap_session import BwrapSession

    class TimedSession(BwrapSession):
        async def start(self) -> None:
            with timed(SESSION_STARTS):
                await super().start()

        async def aclose(self) -> None:
            with timed(SANDBOX_SECONDS):
                await super().aclose()

    class TimedBwrap(BwrapSandbox):
        def session(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            plain = super().session(*args, **kwargs)
            return TimedSession(plain.build, plain.workspace, limits=plain.limits)

    class TimedDirect(DirectSandbox):
        name = "bench-direct"

        async def run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            with timed(DIRECT_SECONDS):
                return await super().run(*args, **kwargs)

    class NullSandbox(BwrapSandbox):
        name = "bench-null"

        def session(self, workspace, *, limits, env=None):  # type: ignore[no-untyped-def]
            return CommandSession(self, workspace, limits=limits, env=env)

        async def run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            return SandboxResult(0, "1\n", "", False, 0.0, self.name)

    async def timed_run(self, command: str, time_left: float | None) -> str:
        if not isinstance(self.sandbox, TimedBwrap):
            return await plain_run(self, command, time_left)
        with timed(SANDBOX_SECONDS, COMMANDS):
            return await plain_run(self, command, time_left)

    plain_run = WorkspaceTools._run
    WorkspaceTools._run = timed_run  # type: ignore[method-assign]
    backend("bench-bwrap")(lambda settings: TimedBwrap(settings.bwrap_path))
    backend("bench-null")(lambda settings: NullSandbox(settings.bwrap_path))
    backend("bench-direct")(lambda settings: TimedDirect())


def main() -> None:
    """Run the benchmark and print its ratios."""
    queue: multiprocessing.Queue = multiprocessing.Queue()
    server = multiprocessing.Process(target=serve_fake, args=(queue,), daemon=True)
    server.start()
    url = queue.get(timeout=30)
    from registry.config import Settings
    from registry.evaluation.config import EvalConfig
    from registry.evaluation.engine import run_evaluation
    from registry.sandbox import BwrapSandbox

    works, why = BwrapSandbox().probe()
    if not works:
        print(f"agent loop: skipped ({why})")
        server.terminate()
        return
    register_bench_sandboxes()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.from_env({"HUBSKILLS_HOME": os.path.join(tmp, "home"),
                                      "HUBSKILLS_BASE_URL": url})
        skill = bench_skill(Path(tmp))
        base = {"models": ["local/bench"], "runs": 1, "mode": "agent",
                "concurrency": CONCURRENCY, "use_cache": False}
        run_evaluation(skill, EvalConfig(**base, case_ids=["c0"], sandbox="bench-bwrap"),
                       settings)  # warm-up
        asyncio.run(_raw_sdk(url, 2))
        walls: list[float] = []
        peers: list[float] = []
        loops: list[float] = []
        for _ in range(ROUNDS):  # the peer, the run and the loop alone, side by side each round
            with timed(peers):
                asyncio.run(_raw_sdk(url, CASES * 2))
            for figures in (SANDBOX_SECONDS, SESSION_STARTS, COMMANDS):
                figures.clear()
            with timed(walls):
                run = run_evaluation(skill, EvalConfig(**base, sandbox="bench-bwrap"), settings)
            with timed(loops):
                run_evaluation(skill, EvalConfig(**base, sandbox="bench-null"), settings)
        direct: list[float] = []
        with timed(direct):
            run_evaluation(skill, EvalConfig(**base, sandbox="bench-direct"), settings)
    server.terminate()
    wall, peer, loop_wall = (statistics.median(x) for x in (walls, peers, loops))
    direct_wall = direct[0]
    calls = sum(row.turns or 0 for row in run.rows)
    assert calls == CASES * 2 * TURNS and not any(row.is_error for row in run.rows), calls
    ideal = calls * LATENCY / CONCURRENCY
    agent_wall = sum(row.wall_s or 0.0 for row in run.rows)
    sandbox = sum(SANDBOX_SECONDS)
    print(f"agent loop: {CASES} cases x 2 arms, {TURNS}-turn trajectories = {calls} model "
          f"calls, {LATENCY * 1000:.0f} ms latency, concurrency {CONCURRENCY}")
    print(f"  wall {wall:.2f} s (median of {ROUNDS} rounds; {min(walls) / ideal:.2f}–"
          f"{max(walls) / ideal:.2f} of the ideal) / ideal {ideal:.2f} s = ratio "
          f"{wall / ideal:.2f} (goal <= 1.2)")
    print(f"  peer (raw openai SDK, same conversations, no tools run): {peer:.2f} s, ratio to "
          f"ideal {peer / ideal:.2f}; hubskills / peer = {wall / peer:.2f}")
    print(f"  the loop alone (commands answered instantly, no sandbox): {loop_wall:.2f} s, "
          f"ratio {loop_wall / ideal:.2f}; loop / peer = {loop_wall / peer:.2f}")
    mean_ms = statistics.mean(COMMANDS) * 1000
    print(f"  sandbox: {len(SESSION_STARTS)} sessions started in the background "
          f"({statistics.median(SESSION_STARTS) * 1000:.0f} ms each, median), {len(COMMANDS)} "
          f"commands waited on {mean_ms:.0f} ms each on average (the first of a sample also "
          f"for its session's start); {sandbox:.2f} s of {agent_wall:.2f} s summed sample wall "
          f"time in commands and session ends = share {sandbox / agent_wall:.2f}; wall with it "
          f"/ without = {wall / loop_wall:.2f}")
    direct_ms = statistics.mean(DIRECT_SECONDS) * 1000
    print(f"  the same commands as plain subprocesses (no isolation, one each): {direct_ms:.0f} "
          f"ms each, wall {direct_wall:.2f} s; the bwrap sessions' wall / theirs = "
          f"{wall / direct_wall:.2f}")

if __name__ == "__main__":
    main()
