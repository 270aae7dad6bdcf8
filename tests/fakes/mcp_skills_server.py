"""A Skills-extension (SEP-2640) server that lies on demand, on the official `mcp` SDK's
low-level `Server`, over streamable HTTP on a free local port (uvicorn in a thread).

It serves one skill, `honest-skill` (a SKILL.md, an executable script, a binary asset), and,
by `mode`, lies about it:

- "honest": nothing;
- "digest": SKILL.md's bytes are not those its digest names;
- "outside": the manifest names a file `../escape.md` beside the skill's root;
- "foreign": the manifest names a file under another skill's root;
- "huge": the manifest says SKILL.md is 10 GB;
- "flood": a file is read back as 4 MB, whatever the manifest says;
- "endless": every skills/list page has a new nextCursor;
- "bloat": skills/list pages `BLOAT_PAGES` times, each page a junk entry of `BLOAT_BYTES`
  (under any one response's cap) beside the honest one: the listing as a whole is the flood;
- "drip": resources/read never ends, a log line every 50 ms keeps the stream busy;
- "changed": after `change()`, SKILL.md's bytes (and digest) are new ones;
- "dynamic": the entry's manifest is "dynamic" (no files listed);
- "failing": skills/list answers a JSON-RPC error, as a server that cannot reach its own
  registry does (not a lie: the server's own failure);
- "gone": URIs name a revision (`skill://fake/v1/...`); after `change()` the server serves v2
  only, and `skills/get` of the v1 URI answers -32002, "resource not found" (older MCP
  protocol versions' code, still sent by servers built on them);
- "claims": `_meta` names the repo `evil/honest-skill`, another namespace than the URI's;
- "flat": URIs name no repo before the skill (`skill://honest-skill/SKILL.md`), as servers
  serving one collection do (not a lie: only a signed skill is refused, having no publisher).

`files` may be replaced (a signed copy of the skill) before the first request. With `password`
every HTTP request must carry it, as Basic auth's password or as `?token=`; any other gets 401
(`credentials`: what each request carried, `None` for none).
"""

from __future__ import annotations

import base64
import hashlib
import socket
import threading
import time
import warnings
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs

import anyio
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS

NAME = "honest-skill"
ROOT = f"skill://fake/{NAME}"
MODES = ("honest", "digest", "outside", "foreign", "huge", "flood", "endless", "drip", "changed",
         "dynamic", "failing", "gone", "claims", "flat", "bloat")
BLOAT_PAGES, BLOAT_BYTES = 40, 512 * 1024
RESOURCE_NOT_FOUND = -32002  # retired by the 2026-07-28 protocol; older servers send it
UNREACHABLE = "cannot reach https://huggingface.co: the Hub is unreachable (ConnectError)"


class _Uri(types.RequestParams):
    uri: str


def skill_files(version: str = "1") -> dict[str, bytes]:
    """The honest skill's files, by path."""
    return {
        "SKILL.md": (f"---\nname: {NAME}\ndescription: An honest skill, version {version}. "
                     "Use when testing pulls over MCP.\n---\n\nRun `scripts/run.sh`.\n").encode(),
        "scripts/run.sh": b"#!/bin/sh\necho ok\n",
        "assets/blob.bin": bytes(range(256)) * 3,
    }


class FakeSkillsServer:
    """`with FakeSkillsServer("digest") as fake: fake.url` is `http://127.0.0.1:PORT/mcp`."""

    def __init__(self, mode: str = "honest", *, password: str | None = None) -> None:
        assert mode in MODES, mode
        self.password, self.credentials = password, list[str | None]()
        self.mode, self.files = mode, skill_files()
        self.root = {"gone": f"skill://fake/v1/{NAME}", "flat": f"skill://{NAME}"}.get(mode, ROOT)
        self.reads, self.pages, self.stopping = 0, 0, False
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def change(self) -> None:
        """Serve new bytes for SKILL.md from now on (an honest new version)."""
        self.files = skill_files("2")
        if self.mode == "gone":
            self.root = f"skill://fake/v2/{NAME}"

    def entry(self) -> dict[str, Any]:
        resources = [{"uri": f"{self.root}/{path}", "digest": "sha256:" + hashlib.sha256(data)
                      .hexdigest(), "size": len(data)} for path, data in sorted(self.files.items())]
        if self.mode == "outside":
            resources.append({"uri": f"{self.root}/../escape.md", "digest": "sha256:" + "0" * 64,
                              "size": 3})
        if self.mode == "foreign":
            resources.append({"uri": "skill://fake/other-skill/SKILL.md",
                              "digest": "sha256:" + "0" * 64, "size": 3})
        if self.mode == "huge":
            resources[0]["size"] = 10 * 1024 ** 3
        ours: dict[str, Any] = {"executable": ["scripts/run.sh"], "version": "1.0.0"}
        if self.mode == "claims":
            ours["repo"] = f"evil/{NAME}"
        return {"uri": f"{self.root}/SKILL.md",
                "frontmatter": {"name": NAME, "description": "An honest skill."},
                "resources": "dynamic" if self.mode == "dynamic" else resources,
                "_meta": {"io.hubskills/registry": ours}}

    def build(self) -> Server[Any]:
        pages = {"count": 0}

        async def list_skills(_ctx: Any, params: types.PaginatedRequestParams) -> dict[str, Any]:
            if self.mode == "failing":
                raise MCPError(INTERNAL_ERROR, UNREACHABLE)
            self.pages += 1
            result: dict[str, Any] = {"skills": [self.entry()], "ttlMs": 0, "cacheScope": "public"}
            if self.mode == "bloat":
                junk = {"uri": f"skill://fake/junk-{self.pages}/junk-{self.pages}/SKILL.md",
                        "frontmatter": {"description": "x" * BLOAT_BYTES}, "resources": []}
                result["skills"] = [junk] if self.pages < BLOAT_PAGES else [self.entry()]
                if self.pages < BLOAT_PAGES:
                    result["nextCursor"] = f"page-{self.pages}"
            if self.mode == "endless":
                pages["count"] += 1
                result["nextCursor"] = f"page-{pages['count']}"
                result["skills"] = [] if params.cursor else result["skills"]
            return result

        async def get_skill(_ctx: Any, params: _Uri) -> dict[str, Any]:
            entry = self.entry()
            if self.mode == "gone" and params.uri != entry["uri"]:
                raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {params.uri}")
            return {"skill": entry}

        async def read(ctx: Any, params: types.ReadResourceRequestParams
                       ) -> types.ReadResourceResult:
            self.reads += 1
            uri = str(params.uri)
            path = uri.removeprefix(f"{self.root}/")
            if path not in self.files:
                raise MCPError(INVALID_PARAMS, f"no such file {uri}")
            data = self.files[path]
            if self.mode == "digest" and path == "SKILL.md":
                data = data.replace(b"honest", b"HONEST")
            if self.mode == "flood" and path == "SKILL.md":
                data = b"x" * (4 * 1024 * 1024)
            if self.mode == "drip":
                while not self.stopping:
                    with warnings.catch_warnings():  # logging is deprecated on 2026-07-28
                        warnings.simplefilter("ignore")
                        await ctx.session.send_log_message(level="info", data=".")
                    await anyio.sleep(0.05)
            return types.ReadResourceResult(contents=[types.BlobResourceContents(
                uri=uri, mime_type="application/octet-stream",
                blob=base64.b64encode(data).decode("ascii"))])

        server: Server[Any] = Server("lying-skills", on_read_resource=read)
        server.add_request_handler("skills/list", types.PaginatedRequestParams, list_skills)
        server.add_request_handler("skills/get", _Uri, get_skill)
        server.extensions["io.modelcontextprotocol/skills"] = {}
        return server

    def __enter__(self) -> FakeSkillsServer:
        app = self.build().streamable_http_app(host="127.0.0.1")
        if self.password is not None:
            app = _Guarded(app, self)
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="error",
                                lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        while not self._server.started:
            assert self._thread.is_alive(), "the fake MCP server did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        assert self._server is not None and self._thread is not None
        self.stopping = self._server.should_exit = True
        self._thread.join()


class _Guarded:
    """An ASGI app answering 401 to a request without the server's password."""

    def __init__(self, app: Any, fake: FakeSkillsServer) -> None:
        self.app, self.fake = app, fake

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        given = parse_qs(scope.get("query_string", b"").decode()).get("token", [None])[0]
        basic = headers.get(b"authorization", b"").decode()
        if basic.startswith("Basic "):
            given = base64.b64decode(basic[6:]).decode().partition(":")[2]
        self.fake.credentials.append(given)
        if given == self.fake.password:
            return await self.app(scope, receive, send)
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"text/plain"),
                                (b"www-authenticate", b'Basic realm="skills"')]})
        await send({"type": "http.response.body", "body": b"unauthorized"})
        return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
