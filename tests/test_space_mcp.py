"""The Space's `/mcp` (space/mcp_endpoint.py) through the official `mcp` SDK's client and the
real MCP clients, against the launched Space: every skill listed with the same `_meta` as
`hubskills mcp` gives from the store, every file byte for byte, hostile URIs refused, the
search tool; a client past its rate limit is answered 429 while another is served.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from registry import Settings  # noqa: E402
from registry.mcp import META_KEY, Catalog, parse  # noqa: E402
from space.mcp_endpoint import CpuShare, RateLimit, client_key  # noqa: E402
from tests.mcp_clients import inspector  # noqa: E402
from tests.test_mcp import _list_all, _read  # noqa: E402
from tests.test_space import seeded_space  # noqa: E402

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str]]:
    demo, url = seeded_space(Settings.from_env())
    try:
        yield demo, url.rstrip("/") + "/mcp"
    finally:
        demo.close()


def _session(url: str):
    @__import__("contextlib").asynccontextmanager
    async def opened():
        async with streamable_http_client(url) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session
    return opened()


def test_space_serves_every_skill_and_file_as_the_store_does(space, tmp_path: Path) -> None:
    demo, url = space
    store = demo.hubskills_state.store
    own = Catalog(store)  # what `hubskills mcp` serves from the same store

    async def main() -> None:
        async with _session(url) as session:
            skills = await _list_all(session)
            assert len(skills) == len(store.search("", limit=100)) == len(own.listed())
            expected = {rev.uri(): own.entry(rev) for rev in own.listed()}
            for skill in skills:
                assert skill["_meta"][META_KEY] == expected[skill["uri"]]["_meta"][META_KEY]
                assert skill["resources"] == expected[skill["uri"]]["resources"]
                uri = parse(skill["uri"])
                rev = own.revision(uri.repo, uri.revision)
                for resource in skill["resources"]:
                    data = await _read(session, resource["uri"])
                    assert data == rev.files[parse(resource["uri"]).path]
            ranked = [s["_meta"][META_KEY] for s in skills]
            assert any(meta["lift"] for meta in ranked)  # the seeded runs' figures
            root = parse(skills[0]["uri"]).root
            with pytest.raises(MCPError):
                await _read(session, f"{root}/../../../../etc/passwd")
            found = await session.call_tool("search_skills", {"query": "CUDA kernel H100"})
            hits = json.loads(found.content[0].text)["skills"]
            assert hits[0]["repo"] == "hubskills/kernel-builder-cuda-kernels"

    anyio.run(main)


def test_inspector_verifies_the_spaces_skills(space) -> None:
    _, url = space
    done = subprocess.run([str(inspector()), "--cli", "-q", "--protocol-era", "auto",
                           "--method", "skills/list", "--verify", "--require-digests", url],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr + done.stdout
    reports = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert len(reports) == 3 and all(r["ok"] and r["outcome"] == "verified" for r in reports)
    assert all(r["conformance"] == [] for r in reports)


def test_fast_agent_installs_the_spaces_skills(space, tmp_path: Path) -> None:
    from tests.test_mcp_clients import _fast_agent

    demo, url = space
    installed = _fast_agent({"transport": "http", "url": url}, tmp_path / "home", tmp_path)
    store = demo.hubskills_state.store
    assert sorted(installed) == sorted(i.name for i in store.search("", limit=100))
    for name, files in installed.items():
        repo = f"hubskills/{name}"
        dest = tmp_path / "oracle" / name
        fetched = store.fetch(repo, store.resolve(repo).sha, dest, count=False)
        assert files == {rel: hashlib.sha256((dest / rel).read_bytes()).hexdigest()
                         for rel in fetched.files}


def test_a_client_past_its_limit_is_told_to_wait(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUBSKILLS_SPACE_MCP_BURST", "4")
    monkeypatch.setenv("HUBSKILLS_SPACE_MCP_RATE", "0.001")
    demo, url = seeded_space(Settings.from_env())
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-11-25"}
    try:
        codes = [httpx.post(url.rstrip("/") + "/mcp", json=body, headers=headers).status_code
                 for _ in range(6)]
    finally:
        demo.close()
    assert codes[:4] != [429] * 4 and codes[4:] == [429, 429], codes


def test_rate_limit_buckets_are_per_client_and_refill() -> None:
    now = [0.0]
    limits = RateLimit(rate=2.0, burst=3, clients=2, clock=lambda: now[0])
    assert [limits.wait("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limits.wait("a") == pytest.approx(0.5)
    assert limits.wait("b") == 0.0  # another client is not held back
    now[0] += 0.5  # one token back for "a"
    assert limits.wait("a") == 0.0 and limits.wait("a") > 0
    limits.wait("c")  # a third client: the least recently seen bucket ("b") is dropped
    assert limits.wait("b") == 0.0


def test_cpu_share_holds_a_crowd_to_its_share() -> None:
    """Requests of 4 ms CPU each, back to back for 100 s, 4 in flight: MCP gets a quarter of
    the CPU time (the rest of each second is the pages'), whatever the overlap."""
    now, cpu = [0.0], [0.0]
    share = CpuShare(0.25, burst=0.05, clock=lambda: now[0], cpu=lambda: cpu[0])
    mcp = 0.0
    while now[0] < 100.0:
        rest = share.wait()
        if rest > 0:
            now[0] += rest  # idle: no CPU spent by MCP meanwhile
            continue
        assert share.wait() == 0.0  # more in flight at once: the CPU meanwhile counts once
        now[0] += 0.004
        cpu[0] += 0.004
        mcp += 0.004
        share.done()
        share.done()
    assert mcp / now[0] == pytest.approx(0.25, abs=0.01)


def test_cpu_share_waits_a_second_at_most() -> None:
    now, cpu = [0.0], [0.0]
    share = CpuShare(0.25, clock=lambda: now[0], cpu=lambda: cpu[0])
    assert share.wait() == 0.0
    cpu[0] += 30.0  # a long page event ran while one MCP request was in flight
    share.done()
    assert share.wait() == pytest.approx(1.0, abs=0.01)
    now[0] += 1.01
    assert share.wait() == 0.0
    with pytest.raises(ValueError):
        CpuShare(0.0)


def test_client_key_behind_the_proxy() -> None:
    scope = {"client": ("10.0.0.1", 5), "headers": [(b"x-forwarded-for", b"1.2.3.4, 10.0.0.9")]}
    assert client_key(scope, behind_proxy=True) == "10.0.0.9"  # what the proxy appended
    assert client_key(scope, behind_proxy=False) == "10.0.0.1"
    lines = {"client": ("10.0.0.1", 5), "headers": [(b"x-forwarded-for", b"6.6.6.6"),
                                                    (b"x-forwarded-for", b"7.7.7.7, 5.5.5.5")]}
    assert client_key(lines, behind_proxy=True) == "5.5.5.5"
    assert client_key({"client": ("10.0.0.1", 5), "headers": []}, behind_proxy=True) == "10.0.0.1"
