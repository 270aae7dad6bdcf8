"""The Space under MCP clients (issue 40; run: `python bench/mcp_space.py`).

The Space's leaderboard read p95 alone, then while 50 MCP clients walk `skills/list` on its
`/mcp` at once (the small seeded registry), in 4 rounds of each in turn; the clients run in
a process of their own (on a small machine their CPU is taken from the Space's too: a harsher
test than hosts elsewhere; the walks they made are printed). Goal: ratio <= 1.2.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

ROOT = Path(__file__).resolve().parents[1]
# this file's own folder out of the path: `import mcp` must import the SDK
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench" / "peers")]

import anyio  # noqa: E402
from mcp_walk import p95, walk  # noqa: E402

from registry.config import Settings  # noqa: E402

SPACE_GOAL = 1.2


def bench_space(clients: int = 50, reads: int = 30, rounds: int = 4) -> bool:
    from gradio_client import Client as GradioClient
    from test_space import seeded_space

    import space  # noqa: F401

    tmp = Path(tempfile.mkdtemp(prefix="hubskills-bench-mcp-space-"))
    os.environ["HUBSKILLS_HOME"] = str(tmp / "home")
    os.environ["HUBSKILLS_SPACE_MCP_BURST"] = "100000"  # the clients are one address here
    demo, url = seeded_space(Settings.from_env())
    board = GradioClient(url, verbose=False)

    def leaderboard_reads(n: int) -> list[float]:
        times = []
        for i in range(n):
            start = time.perf_counter()
            board.predict(f"skill {i % 7}", "All", "All", "All", api_name="/leaderboard")
            times.append(time.perf_counter() - start)
        return times

    ctx = multiprocessing.get_context("spawn")
    go, stop, walks = ctx.Event(), ctx.Event(), ctx.Value("i", 0)
    alone: list[float] = []
    loaded: list[float] = []
    loads = [os.getloadavg()[0]]
    try:
        leaderboard_reads(5)  # warm
        crowd = ctx.Process(target=_crowd, args=(url.rstrip("/") + "/mcp", clients, go, stop,
                                                 walks))
        crowd.start()  # the clients in a process of their own: only the server's work is here
        for _ in range(rounds):  # alone and crowded in turn: the machine's load drifts
            alone += leaderboard_reads(reads)
            before = walks.value
            go.set()
            while walks.value < before + clients:  # every client is walking
                assert crowd.is_alive(), "the MCP clients' process ended"
                time.sleep(0.05)
            loaded += leaderboard_reads(reads)
            go.clear()
            loads.append(os.getloadavg()[0])
        stop.set()
        go.set()
        crowd.join(timeout=120)
    finally:
        demo.close()
    ratio = p95(loaded) / p95(alone)
    print(f"Space leaderboard reads ({rounds} rounds of {reads} alone, then {reads} with {clients} "
          f"MCP clients listing; load average {min(loads):.1f}-{max(loads):.1f}), p95: alone "
          f"{p95(alone) * 1000:.0f} ms, with the clients ({walks.value} walks) "
          f"{p95(loaded) * 1000:.0f} ms: ratio {ratio:.2f} (goal <= {SPACE_GOAL}: "
          f"{'met' if ratio <= SPACE_GOAL else 'MISSED'}); medians "
          f"{statistics.median(alone) * 1000:.0f} and {statistics.median(loaded) * 1000:.0f} ms")
    return ratio <= SPACE_GOAL


def _crowd(url: str, clients: int, go: Any, stop: Any, walks: Any) -> None:
    """`clients` MCP clients walking `skills/list` on `url` while `go` is set, until `stop`
    (a process's body)."""
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client


    async def client() -> None:
        async with streamable_http_client(url) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            while not stop.is_set():
                if not go.is_set():
                    await anyio.sleep(0.02)
                    continue
                await walk(session)
                with walks.get_lock():
                    walks.value += 1

    async def run() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(clients):
                group.start_soon(client)

    anyio.run(run)


if __name__ == "__main__":
    sys.exit(0 if bench_space() else 1)
