"""The Space's `/mcp` mounted on an app of its own (space/mcp_endpoint.py's `lifespan`, served
by uvicorn over real HTTP, without Gradio): a client that writes a new X-Forwarded-For address
per request is still limited (the key is what the proxy appended), and a restarted Space reads
its revisions' facts from its home instead of computing them again.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

import uvicorn  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from starlette.applications import Starlette  # noqa: E402

from registry import Settings  # noqa: E402
from registry.mcp import META_KEY  # noqa: E402
from space.mcp_endpoint import RateLimit, lifespan  # noqa: E402
from space.state import SpaceState  # noqa: E402
from tests.fakes.mcp_skills_server import _free_port  # noqa: E402
from tests.test_mcp import _list_all  # noqa: E402

pytestmark = pytest.mark.timeout(300)
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}


@contextmanager
def endpoint(state: SpaceState, **options: Any) -> Iterator[str]:
    """The Space's `/mcp` on an app of its own, on a free port: yields its URL."""
    port = _free_port()
    app = Starlette(lifespan=lifespan(state, **options))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive(), "the endpoint did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=60)


def test_a_spoofed_forwarded_for_is_still_limited(tmp_path: Path) -> None:
    state = SpaceState(Settings.from_env(), on_space=True)
    limits = RateLimit(rate=0.001, burst=3)
    with endpoint(state, limits=limits, behind_proxy=True) as url:
        def post(forwarded: str | None) -> int:
            headers = {**HEADERS, **({"x-forwarded-for": forwarded} if forwarded else {})}
            return httpx.post(url, json=PING, headers=headers).status_code

        # a new made-up first address per request; the proxy appends the client's own
        spoofed = [post(f"203.0.113.{i}, 198.51.100.7") for i in range(5)]
        other = post("203.0.113.99, 198.51.100.8")  # another client behind the same proxy
        peer = [post(None) for _ in range(4)]  # no header: the socket peer's own bucket
    assert 429 not in spoofed[:3] and spoofed[3:] == [429, 429], spoofed
    assert other != 429
    assert 429 not in peer[:3] and peer[3] == 429, peer


def test_a_body_over_the_cap_is_refused_unread_and_a_long_uri_is_never_kept(
        tmp_path: Path) -> None:
    """The SDK reads a request body whole with no cap, and `parse` kept every well-formed
    URI it saw: a red-team client grew the server by about 5.7 MB a request, to 3 GB, with
    3 MB URIs. Bodies over `MAX_BODY` are answered 413 before the SDK sees them, declared
    (Content-Length) or streamed (chunked); a URI over `MAX_URI` is refused unread."""
    from registry.mcp.transport import MAX_BODY
    from registry.mcp.uris import MAX_URI, BadSkillUri, parse

    state = SpaceState(Settings.from_env(), on_space=True)
    huge = {**PING, "params": {"pad": "x" * MAX_BODY}}
    with endpoint(state) as url:
        assert httpx.post(url, json=huge, headers=HEADERS).status_code == 413
        chunked = httpx.post(url, content=iter([json.dumps(huge).encode()]), headers={
            **HEADERS, "content-type": "application/json"})
        assert chunked.status_code == 413 and "over" in chunked.json()["error"]["message"]
        assert httpx.post(url, json=PING, headers=HEADERS).status_code == 200  # still served
    sha = "0" * 40
    with pytest.raises(BadSkillUri, match=f"over {MAX_URI} characters"):
        parse(f"skill://ns/repo@{sha}/name/" + "a" * MAX_URI)
    assert parse(f"skill://ns/repo@{sha}/name/SKILL.md").path == "SKILL.md"


def test_a_restarted_space_reads_its_facts_from_its_home(tmp_path: Path) -> None:
    settings = Settings.from_env()
    facts = settings.home / "cache" / "revision-facts"

    async def listed(url: str) -> list[dict[str, Any]]:
        async with streamable_http_client(url) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            return await _list_all(session)

    with endpoint(SpaceState(settings, on_space=False)) as url:
        first = anyio.run(listed, url)
    kept = sorted(facts.glob("mcp-*.json"))
    assert first and len(kept) == len(first), "one file of facts per revision served"

    # what a restart must read back, not compute: a scan summary no scan would give
    planted = {"findings": 4242, "by_severity": {"info": 4242}}
    for path in kept:
        data = json.loads(path.read_text())
        path.write_text(json.dumps({**data, "scan": planted}))
    with endpoint(SpaceState(settings, on_space=False)) as url:  # a new process's state
        again = anyio.run(listed, url)
    assert [s["uri"] for s in again] == [s["uri"] for s in first]
    assert all(s["_meta"][META_KEY]["scan"] == planted for s in again)
    assert [s["resources"] for s in again] == [s["resources"] for s in first]
