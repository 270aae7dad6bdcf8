"""An MCP client's requests as the MCP benches make them (`bench/mcp.py`, `bench/mcp_space.py`):
any request by method name through the official SDK's session, a whole `skills/list` walk, and
the p95 they report."""

from __future__ import annotations

import time
from typing import Any

import mcp_types as types
from pydantic import TypeAdapter

ANY = TypeAdapter(dict[str, Any])


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


async def call(session: Any, method: str, **params: Any) -> dict[str, Any]:
    """`method` with `params` through `session`, its result as a plain dict."""
    return await session.send_request(types.Request[dict[str, Any], str](
        method=method, params=params), ANY)


async def walk(session: Any, cpu: list[float] | None = None) -> tuple[list[float], int]:
    """Seconds per skills/list page (wall; this process's CPU into `cpu`), and the skills
    listed."""
    times, cursor, listed = [], None, 0
    while True:
        start, used = time.perf_counter(), time.process_time()
        page = await call(session, "skills/list", **({"cursor": cursor} if cursor else {}))
        times.append(time.perf_counter() - start)
        if cpu is not None:
            cpu.append(time.process_time() - used)
        listed += len(page["skills"])
        cursor = page.get("nextCursor")
        if not cursor:
            return times, listed
