"""The Space's `/mcp`: the registry as an MCP server (the Skills extension, SEP-2640, and the
`search_skills` tool), beside its pages.

It is `registry.mcp`'s server, mounted on the Space's own app (Gradio's FastAPI) as the official
`mcp` SDK's streamable HTTP endpoint: Gradio's own MCP support (`launch(mcp_server=True)`)
serves the app's functions as tools only, with no way to declare an extension or answer its
methods (`skills/list`, `skills/get`, `resources/directory/read`).

- Read-only and anonymous-safe: the server has no method that writes, asks for no sign-in and
  reads nothing a visitor of the leaderboard cannot; every request is stateless (no session
  kept per client) and answered as JSON.
- The same cached reads as the leaderboard: the listing and the figures come from the Space's
  snapshot (its skill list and its `Board`, refreshed in the background; `registry.mcp.snapshot`)
  and the files from the folders the skill pages already fetched (`SpaceState.skill_folder`);
  each revision's frontmatter and scan summary are kept under the Space's home, so a restarted
  Space does not parse and scan every skill again (memory alone where the home is read-only).
- Rate limited per client (`RateLimit`: a token bucket per address; on a Space, the address
  the Space's proxy appended to X-Forwarded-For, its LAST one: the addresses before it are
  whatever the client sent and cost nothing to change; else the socket peer's), answered 429
  with Retry-After past it; and all clients together get `WORKERS` threads for store reads,
  apart from the pool the leaderboard's events use, `IN_FLIGHT` requests answered at once and
  10% of the process's CPU time (`CpuShare`), so a crowd of MCP clients queues behind
  itself, not in front of the pages: a per-client limit alone let 50 clients take all of it
  (bench/mcp.py: the leaderboard's p95 1.4-2.6x its p95 alone; with a 15% share 0.7-1.4x,
  its median +10-30%; with 10%, 0.53-1.22x, the median +0-10%, 70 walks a second).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from typing import Any

from registry import mcp_limit_body, mcp_server, mcp_snapshot_catalog

from .state import SpaceState

log = logging.getLogger(__name__)
PATH = "/mcp"
RATE = 20.0  # requests per second a client may keep up
BURST = 60  # requests a client may make at once
CLIENTS = 10_000  # clients whose buckets are kept (least recently seen dropped)
WORKERS = 2  # threads all MCP requests share for store reads and entries
IN_FLIGHT = 4  # MCP requests answered at once (the rest wait their turn, off the pages' pool)
SHARE = 0.10  # of the process's CPU time all MCP requests together may take
SHARE_BURST = 0.05  # CPU seconds MCP may take at once after a quiet spell


class RateLimit:
    """A token bucket per client key (thread-safe; `CLIENTS` buckets at most)."""

    def __init__(self, rate: float = RATE, burst: int = BURST, clients: int = CLIENTS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.clients, self.clock = rate, burst, clients, clock
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def wait(self, key: str) -> float:
        """0 when `key` may make a request now (and take one token), else the seconds until
        it may."""
        now = self.clock()
        with self._lock:
            tokens, then = self._buckets.pop(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - then) * self.rate)
            allowed = tokens >= 1.0
            self._buckets[key] = (tokens - 1.0 if allowed else tokens, now)
            while len(self._buckets) > self.clients:
                self._buckets.popitem(last=False)
        return 0.0 if allowed else (1.0 - tokens) / self.rate


class CpuShare:
    """All MCP requests together held to `share` of the process's CPU time: a token bucket of
    CPU seconds, refilled at `share` per second (at most `burst`); a request starts while the
    bucket holds any, and the process's CPU time while one or more are in flight is taken
    from it (the pages' work meanwhile too: MCP yields more while the pages are busy, but
    never waits more than a second). Not thread-safe: the endpoint uses it from the event
    loop alone."""

    def __init__(self, share: float = SHARE, burst: float = SHARE_BURST,
                 clock: Callable[[], float] = time.monotonic,
                 cpu: Callable[[], float] = time.process_time) -> None:
        if not 0 < share <= 1:
            raise ValueError(f"share must be in (0, 1], not {share}")
        self.share, self.burst, self.clock, self.cpu = share, burst, clock, cpu
        self._tokens, self._at = burst, clock()
        self._busy, self._mark = 0, 0.0

    def wait(self) -> float:
        """0 when a request may start now (it is then in flight until `done`), else the
        seconds until the bucket refills."""
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.share)
        self._at = now
        if self._tokens <= 0:
            return -self._tokens / self.share + 1e-3
        if self._busy == 0:
            self._mark = self.cpu()
        self._busy += 1
        return 0.0

    def done(self) -> None:
        """A request that `wait` let start has ended: the CPU time since the last charge is
        taken from the bucket."""
        now = self.cpu()
        used, self._mark = now - self._mark, now
        self._tokens = max(self._tokens - used, -self.share)  # a wait of 1 s at most
        self._busy -= 1


def client_key(scope: dict[str, Any], *, behind_proxy: bool) -> str:
    """Who is asking: behind the Space's proxy the last X-Forwarded-For address (the one the
    proxy appended; a client writes the others itself, a new one per request if it likes),
    else, or with no such header, the socket peer's address."""
    if behind_proxy:
        forwarded = [value for name, value in scope.get("headers") or []
                     if name == b"x-forwarded-for"]
        if forwarded:  # several header lines read as one list, in order
            last = forwarded[-1].decode("latin-1").split(",")[-1].strip()
            if last:
                return last
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def lifespan(state: SpaceState, *, limits: RateLimit | None = None,
             behind_proxy: bool | None = None, share: CpuShare | None = None
             ) -> Callable[[Any], Any]:
    """The lifespan that mounts `/mcp` on the Space's app and runs its session manager (pass
    it to `launch` as `app_kwargs={"lifespan": ...}`)."""
    import anyio
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.routing import Route

    rate = limits or RateLimit()
    proxied = state.on_space if behind_proxy is None else behind_proxy

    def load() -> tuple[list[Any], Any]:
        snapshot = state.snapshot()
        return list(snapshot.skills), snapshot.board

    catalog = mcp_snapshot_catalog(
        state.store, token=lambda: state.snapshot().key, load=load, folder=state.skill_folder,
        listing=os.environ.get("HUBSKILLS_SPACE_MCP_LISTING", "latest"),
        home=state.settings.home)
    server = mcp_server(catalog, limiter=anyio.CapacityLimiter(WORKERS))
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
    handle = mcp_limit_body(manager.handle_request)  # the SDK reads a body whole, uncapped
    in_flight = anyio.Semaphore(IN_FLIGHT)
    cpu = share or CpuShare()

    class Endpoint:  # an ASGI app (Starlette calls a plain function with a Request)
        async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
            wait = rate.wait(client_key(scope, behind_proxy=proxied))
            if wait > 0:
                await _too_many(send, wait)
                return
            async with in_flight:
                while (rest := cpu.wait()) > 0:
                    await anyio.sleep(rest)
                try:
                    await handle(scope, receive, send)
                finally:
                    cpu.done()

    @contextlib.asynccontextmanager
    async def run(app: Any) -> AsyncIterator[None]:
        app.router.routes.insert(0, Route(PATH, endpoint=Endpoint(),
                                          methods=["GET", "POST", "DELETE"]))
        async with manager.run():
            yield

    return run


async def _too_many(send: Any, wait: float) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32000, "message": f"rate limited: retry in {wait:.1f} s"}}).encode()
    await send({"type": "http.response.start", "status": 429, "headers": [
        (b"content-type", b"application/json"), (b"retry-after", str(max(1, round(wait))).encode()),
        (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def attach(demo: Any, launch_kwargs: dict[str, Any]) -> bool:
    """Serve `/mcp` beside the pages of `demo` (built by `ui.build_demo`) once launched: sets
    the lifespan in `launch_kwargs["app_kwargs"]`. Not when HUBSKILLS_SPACE_MCP=0 or the `mcp`
    package is missing (it is in the `space` extra); returns whether it will.
    HUBSKILLS_SPACE_MCP_RATE and HUBSKILLS_SPACE_MCP_BURST set the per-client limit,
    HUBSKILLS_SPACE_MCP_SHARE the share of the CPU all clients together may take."""
    state = getattr(demo, "hubskills_state", None)
    if state is None or os.environ.get("HUBSKILLS_SPACE_MCP", "1") == "0":
        return False
    if importlib.util.find_spec("mcp") is None:
        log.warning("the mcp package is not installed: the Space serves no /mcp")
        return False
    app_kwargs = dict(launch_kwargs.get("app_kwargs") or {})
    limits = RateLimit(float(os.environ.get("HUBSKILLS_SPACE_MCP_RATE", RATE)),
                       int(os.environ.get("HUBSKILLS_SPACE_MCP_BURST", BURST)))
    share = CpuShare(float(os.environ.get("HUBSKILLS_SPACE_MCP_SHARE", SHARE)))
    app_kwargs["lifespan"] = lifespan(state, limits=limits, share=share)
    launch_kwargs["app_kwargs"] = app_kwargs
    return True


def mcp_url(base: str) -> str:
    """The MCP endpoint of a Space served at `base`."""
    return base.rstrip("/") + PATH
