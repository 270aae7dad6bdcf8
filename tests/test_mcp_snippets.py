"""The host config snippets docs/mcp.md (and README, where it shows any) gives for hosts the
tests cannot drive (Cursor, VS Code: no command line to add or check a server; docs/mcp.md says
"not run"), and the Claude Code `.mcp.json` one: each parses as JSON of the shape its host
documents, and each stdio entry's command line, run as written (the installed `hubskills`
console script), starts `hubskills mcp` and answers `initialize` through the official SDK's
stdio client, declaring the Skills extension. An HTTP entry's URL is `hubskills mcp --http`'s
(its host, the `/mcp` path), answered by one started on a free port.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Literal

import anyio
import pytest

pytest.importorskip("mcp")

from pydantic import BaseModel, ConfigDict, TypeAdapter  # noqa: E402

from tests.test_mcp_clients import _env, _http_server  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "mcp.md"
README = ROOT / "README.md"
EXTENSION = "io.modelcontextprotocol/skills"
pytestmark = pytest.mark.timeout(300)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Stdio(_Strict):  # Cursor's and Claude Code's `mcpServers` entry for a command
    command: str
    args: list[str] = []
    env: dict[str, str] = {}


class Url(_Strict):  # Cursor's entry for a running server
    url: str


class McpServers(_Strict):  # `.cursor/mcp.json`, `.mcp.json`
    mcpServers: dict[str, Stdio | Url]


class VsStdio(Stdio):  # `.vscode/mcp.json`
    type: Literal["stdio"]


class VsHttp(_Strict):
    type: Literal["http"]
    url: str


class VsServers(_Strict):
    servers: dict[str, VsStdio | VsHttp]


SHAPES = TypeAdapter(McpServers | VsServers)


def snippets(text: str) -> list[str]:
    """Every JSON config snippet of a markdown text: ```json blocks, and inline code spans that
    hold a `mcpServers` or `servers` object."""
    blocks = re.findall(r"```json\n(.*?)```", text, flags=re.S)
    inline = re.findall(r"`(\{\"(?:mcpServers|servers)\".*?\})`", text)
    return [s for s in blocks if re.search(r"\"(mcpServers|servers)\"", s)] + inline


def host_snippets(text: str, host: str) -> list[str]:
    """The snippets of the paragraph `**host**` opens (up to the next bold heading)."""
    section = text.split(f"**{host}**", 1)[1].split("\n**", 1)[0]
    return snippets(section)


def entries(snippet: str) -> list[Stdio | Url | VsStdio | VsHttp]:
    config = SHAPES.validate_python(json.loads(snippet))
    servers = config.mcpServers if isinstance(config, McpServers) else config.servers
    return list(servers.values())


def test_every_snippet_is_json_of_its_hosts_shape() -> None:
    found = snippets(DOCS.read_text(encoding="utf-8"))
    found += snippets(README.read_text(encoding="utf-8"))
    assert len(found) >= 5, found  # Claude Code's .mcp.json, Cursor x2, VS Code x2
    for snippet in found:
        for entry in entries(snippet):
            if isinstance(entry, Stdio):
                assert [entry.command, *entry.args][:2] == ["hubskills", "mcp"], snippet
            else:
                assert re.fullmatch(r"https?://[^/]+/mcp", entry.url), snippet
    text = DOCS.read_text(encoding="utf-8")
    cursor, vscode = host_snippets(text, "Cursor"), host_snippets(text, "VS Code")
    assert {type(e) for s in cursor for e in entries(s)} == {Stdio, Url}
    assert {type(e) for s in vscode for e in entries(s)} == {VsStdio, VsHttp}


def _hubskills() -> str:
    """The installed `hubskills` command, as a host finds it (this interpreter's scripts first)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which("hubskills", path=path)
    assert found, "the `hubskills` console script is not installed (pip install -e .)"
    return found


async def _initialize_stdio(command: list[str], env: dict[str, str]) -> tuple[object, object]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        result = await session.initialize()
        return result, session.server_capabilities


async def _initialize_http(url: str) -> tuple[object, object]:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(url) as (read, write), \
            ClientSession(read, write) as session:
        result = await session.initialize()
        return result, session.server_capabilities


def _declares_skills(answer: tuple[object, object]) -> None:
    result, capabilities = answer
    info = getattr(result, "server_info", None) or getattr(result, "serverInfo", None)
    assert info is not None and info.name == "hubskills", result
    declared = {**(getattr(capabilities, "extensions", None) or {}),
                **(getattr(capabilities, "experimental", None) or {})}
    assert EXTENSION in declared, capabilities


@pytest.mark.parametrize("host", ["Cursor", "VS Code"])
def test_the_snippets_command_answers_initialize(host: str, tmp_path: Path) -> None:
    text = DOCS.read_text(encoding="utf-8")
    stdio = [e for s in host_snippets(text, host) for e in entries(s) if isinstance(e, Stdio)]
    urls = [e.url for s in host_snippets(text, host) for e in entries(s)
            if not isinstance(e, Stdio)]
    assert stdio and urls
    env = {**os.environ, **_env(tmp_path / "hubskills-home")}
    for entry in stdio:
        command = [_hubskills() if entry.command == "hubskills" else entry.command, *entry.args]
        _declares_skills(anyio.run(_initialize_stdio, command, {**env, **entry.env}))
    with _http_server(tmp_path / "hubskills-home") as served:
        for url in urls:  # the documented address, on the port this run was given
            host_part = re.match(r"https?://([^:/]+)", url)
            assert host_part is not None and host_part[1] == "127.0.0.1", url
            _declares_skills(anyio.run(_initialize_http,
                                       re.sub(r"//[^/]+/", "//" + served.split("/")[2] + "/",
                                              url)))
