"""`hubskills mcp` through the official `mcp` SDK's client, over stdio and streamable HTTP.

The server runs as users run it (`python -m registry.cli mcp`, a fresh HUBSKILLS_HOME: the local
registry seeds itself with the three example skills); the oracle for every byte is the
registry's own `fetch`. Hostile URIs must come back as MCP errors, never as a file.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp_types.jsonrpc import INVALID_PARAMS  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.mcp import EXTENSION, META_KEY, parse  # noqa: E402
from registry.registries import get_store  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ANY = TypeAdapter(dict[str, Any])
pytestmark = pytest.mark.timeout(180)


def _env(home: Path) -> dict[str, str]:
    return {"HUBSKILLS_HOME": str(home), "HF_HUB_OFFLINE": "1", "NO_COLOR": "1",
            "PYTHONPATH": str(ROOT), "HUBSKILLS_REGISTRY": "local"}


async def _open(session: ClientSession, modern: bool) -> None:
    """`server/discover` at 2026-07-28 (what the extension targets), or the legacy
    `initialize` handshake, where capabilities have no `extensions` field."""
    if modern:
        await session.discover()
    else:
        await session.initialize()


@asynccontextmanager
async def _stdio(home: Path, *, modern: bool = True) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "registry.cli", "mcp"],
                                   env=_env(home), cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await _open(session, modern)
        yield session


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def _http(home: Path) -> AsyncIterator[ClientSession]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "registry.cli", "mcp", "--http",
                             f"127.0.0.1:{port}"], cwd=ROOT, env={**os.environ, **_env(home)})
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "server never came up"
                await anyio.sleep(0.2)
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write), \
                ClientSession(read, write) as session:
            await _open(session, True)
            yield session
    finally:
        proc.terminate()
        proc.wait(timeout=20)


async def _call(session: ClientSession, method: str, **params: Any) -> dict[str, Any]:
    request = types.Request[dict[str, Any], str](method=method, params=params)
    return await session.send_request(request, ANY)


async def _list_all(session: ClientSession) -> list[dict[str, Any]]:
    skills, cursor = [], None
    for _ in range(100):
        page = await _call(session, "skills/list", **({"cursor": cursor} if cursor else {}))
        assert page["ttlMs"] >= 0 and page["cacheScope"] in ("public", "private")
        skills += page["skills"]
        cursor = page.get("nextCursor")
        if not cursor:
            return skills
    raise AssertionError("endless pagination")


async def _read(session: ClientSession, uri: str) -> bytes:
    result = await session.read_resource(uri)
    (content,) = result.contents
    if isinstance(content, types.TextResourceContents):
        return content.text.encode("utf-8")
    return base64.b64decode(content.blob)


def _fetched(home: Path, tmp: Path, repo: str, sha: str) -> dict[str, bytes]:
    """The registry's own bytes of `repo` at `sha`: the oracle."""
    os.environ["HUBSKILLS_HOME"] = str(home)
    store = get_store(Settings.from_env())
    dest = tmp / f"{repo.replace('/', '--')}-{sha}"
    fetched = store.fetch(repo, sha, dest, count=False)
    return {rel: (dest / rel).read_bytes() for rel in fetched.files}


async def _check_everything(session: ClientSession, home: Path, tmp: Path) -> None:
    """List, get and read every file of every skill, each byte against the registry's fetch."""
    skills = await _list_all(session)
    assert len(skills) == 3
    for skill in skills:
        uri = parse(skill["uri"])
        assert uri.path == "SKILL.md" and uri.name == skill["frontmatter"]["name"]
        meta = skill["_meta"][META_KEY]
        assert meta["revision"] == uri.revision and meta["version"] and meta["license"]
        assert meta["verification"] and meta["lift"] and meta["scan"]["findings"] >= 0
        assert {"model", "mode", "lift", "lift_lo", "lift_hi", "verdict"} <= set(meta["lift"][0])
        got = await _call(session, "skills/get", uri=skill["uri"])
        assert got["skill"] == skill
        oracle = _fetched(home, tmp, uri.repo, uri.revision)
        listed = {parse(r["uri"]).path: r for r in skill["resources"]}
        assert set(listed) == set(oracle)
        for path, data in oracle.items():
            entry = listed[path]
            assert entry["digest"] == "sha256:" + hashlib.sha256(data).hexdigest()
            assert entry["size"] == len(data)
            assert await _read(session, entry["uri"]) == data
        root = await _call(session, "resources/directory/read", uri=uri.root)
        names = {r["name"]: r["mimeType"] for r in root["resources"]}
        assert names["SKILL.md"] == "text/markdown" and names["evals"] == "inode/directory"


def test_stdio_lists_gets_and_reads_every_file_byte_for_byte(tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def main() -> None:
        async with _stdio(home) as session:
            await _check_everything(session, home, tmp_path)

    anyio.run(main)


def test_http_lists_gets_and_reads_every_file_byte_for_byte(tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def main() -> None:
        async with _http(home) as session:
            await _check_everything(session, home, tmp_path)

    anyio.run(main)


def test_capability_search_tool_and_hostile_uris(tmp_path: Path) -> None:
    home = tmp_path / "home"

    async def main() -> None:
        async with _stdio(home) as session:
            caps = session.server_capabilities
            assert caps is not None and caps.resources is not None
            assert (caps.extensions or {})[EXTENSION] == {"directoryRead": True}
            tools = await session.list_tools()
            assert [t.name for t in tools.tools] == ["search_skills"]
            found = await session.call_tool("search_skills",
                                            {"query": "build a CUDA kernel for an H100"})
            hits = json.loads(found.content[0].text)["skills"]
            assert hits[0]["repo"] == "hubskills/kernel-builder-cuda-kernels"
            assert hits[0]["verification"] and hits[0]["lift"]
            assert await _read(session, hits[0]["uri"])  # the URI it returns is readable
            skills = await _list_all(session)
            await _refuses_hostile(session, skills)

    anyio.run(main)


def test_legacy_handshake_sees_the_extension_under_experimental(tmp_path: Path) -> None:
    async def main() -> None:
        async with _stdio(tmp_path / "home", modern=False) as session:
            caps = session.server_capabilities
            assert caps is not None
            assert (caps.experimental or {})[EXTENSION] == {"directoryRead": True}
            assert len(await _list_all(session)) == 3

    anyio.run(main)


def _hostile(skills: list[dict[str, Any]]) -> list[tuple[str, Callable[[str], str]]]:
    """Each URI that must be refused, by what it tries."""
    a, b = (parse(s["uri"]) for s in skills[:2])
    root = a.root
    return [
        ("dotdot", lambda _: f"{root}/../../../../etc/passwd"),
        ("dotdot inside", lambda _: f"{root}/references/../SKILL.md"),
        ("dot", lambda _: f"{root}/./SKILL.md"),
        ("encoded slash", lambda _: f"{root}/references%2F..%2F..%2FSKILL.md"),
        ("encoded dotdot", lambda _: f"{root}/%2e%2e/%2e%2e/SKILL.md"),
        ("backslash", lambda _: f"{root}/..\\..\\SKILL.md"),
        ("absolute", lambda _: f"{root}//etc/passwd"),
        ("other skill's name", lambda _: f"skill://{a.repo}@{a.revision}/{b.name}/SKILL.md"),
        ("other skill's file", lambda _: f"{root}/references/dataset-card.md"),
        ("unknown revision", lambda _: f"skill://{a.repo}@{'0' * 40}/{a.name}/SKILL.md"),
        ("short revision", lambda _: f"skill://{a.repo}@{a.revision[:7]}/{a.name}/SKILL.md"),
        ("no revision", lambda _: f"skill://{a.repo}/{a.name}/SKILL.md"),
        ("unknown repo", lambda _: f"skill://nobody/nothing@{a.revision}/nothing/SKILL.md"),
        ("another scheme", lambda _: "file:///etc/passwd"),
        ("query", lambda _: f"{root}/SKILL.md?x=1"),
    ]


async def _refuses_hostile(session: ClientSession, skills: list[dict[str, Any]]) -> None:
    for label, make in _hostile(skills):
        uri = make("")
        with pytest.raises(MCPError) as err:
            await _read(session, uri)
        assert err.value.code == INVALID_PARAMS, label
        with pytest.raises(MCPError):
            await _call(session, "skills/get", uri=uri)
        with pytest.raises(MCPError):
            await _call(session, "resources/directory/read", uri=uri)
    with pytest.raises(MCPError):  # a file is not a directory
        await _call(session, "resources/directory/read", uri=skills[0]["uri"])
    with pytest.raises(MCPError):  # a cursor we never made
        await _call(session, "skills/list", cursor="not-ours")


def test_listing_latest_or_newest_verified(skills_dir: Path, tmp_path: Path) -> None:
    """A new version with no runs is listed by "latest" without figures; "verified" keeps
    listing the replayed one, and the new one is still served by URI."""
    from registry.mcp import Catalog
    from registry.mcp.catalog import META_KEY as KEY

    store = get_store(Settings.from_env())
    repo = "hubskills/agent-skill-md"
    old = store.resolve(repo)
    new = store.publish(skills_dir / "agent-skill-md", repo=repo, version="9.0.0")
    latest = {rev.repo: rev for rev in Catalog(store).listed()}
    assert (latest[repo].sha, latest[repo].version) == (new.sha, "9.0.0")
    meta = Catalog(store).entry(latest[repo])["_meta"][KEY]
    assert meta["verification"] is None and meta["lift"] == [] and meta["version"] == "9.0.0"
    verified = Catalog(store, listing="verified")
    listed = {rev.repo: rev for rev in verified.listed()}
    assert (listed[repo].sha, listed[repo].version) == (old.sha, old.version)
    assert verified.entry(listed[repo])["_meta"][KEY]["verification"] in ("replayed",
                                                                          "spot-checked")
    assert verified.lookup(parse(latest[repo].uri())).sha == new.sha


def test_http_option_needs_host_and_port() -> None:
    from click.testing import CliRunner

    from registry.cli import cli

    result = CliRunner().invoke(cli, ["mcp", "--http", "8765"])
    assert result.exit_code == 2 and "HOST:PORT" in result.output


def test_pages_binary_files_and_nested_folders_in_process(tmp_path: Path) -> None:
    """One skill a page through every page; a binary file comes back as a blob, byte for byte;
    a directory read pages too and descends into subfolders."""
    from mcp import Client

    from registry.mcp import Catalog, build_server

    folder = tmp_path / "odd-bytes"
    (folder / "assets" / "img").mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(b"---\nname: odd-bytes\ndescription: Bytes of every "
                                      b"kind. Use when testing.\n---\r\nCRLF body\r\n")
    binary = bytes(range(256)) * 4
    (folder / "assets" / "img" / "all.bin").write_bytes(binary)
    (folder / "assets" / "notes.txt").write_bytes("caf\u00e9 \u2603\n".encode())
    store = get_store(Settings.from_env())
    published = store.publish(folder, repo="hubskills/odd-bytes", version="1.0.0")
    server = build_server(Catalog(store), page=1)

    async def main() -> None:
        async with Client(server, mode="2026-07-28") as client:
            session = client.session
            pages, skills, cursor = 0, [], None
            while True:
                page = await _call(session, "skills/list", **({"cursor": cursor} if cursor else {}))
                pages += 1
                skills += page["skills"]
                cursor = page.get("nextCursor")
                if not cursor:
                    break
            assert pages == len(skills) == 4
            (odd,) = [s for s in skills if s["frontmatter"]["name"] == "odd-bytes"]
            root = parse(odd["uri"])
            assert root.revision == published.sha
            oracle = _fetched(Path(os.environ["HUBSKILLS_HOME"]), tmp_path, root.repo,
                              root.revision)
            for resource in odd["resources"]:
                assert await _read(session, resource["uri"]) == oracle[parse(resource["uri"]).path]
            blob = await session.read_resource(f"{root.root}/assets/img/all.bin")
            assert isinstance(blob.contents[0], types.BlobResourceContents)
            first = await _call(session, "resources/directory/read", uri=root.root)
            assert len(first["resources"]) == 1 and first["nextCursor"]
            second = await _call(session, "resources/directory/read", uri=root.root,
                                 cursor=first["nextCursor"])
            assert {first["resources"][0]["name"], second["resources"][0]["name"]} == {
                "SKILL.md", "assets"}
            sub = await _call(session, "resources/directory/read", uri=f"{root.root}/assets/img")
            assert [(r["name"], r["mimeType"]) for r in sub["resources"]] == [
                ("all.bin", "application/octet-stream")]

    anyio.run(main)
