"""The registry as an MCP server, on the official `mcp` SDK's low-level `Server`.

It declares the Skills extension (`io.modelcontextprotocol/skills`, SEP-2640, final text in
modelcontextprotocol/ext-skills `specification/stable/skills.mdx`) under
`capabilities.extensions` (and, for SDKs that keep only `experimental`, there too) with
`directoryRead: true`, and serves:

- `skills/list` (paginated by an opaque cursor; `ttlMs`/`cacheScope` set) and `skills/get`:
  registered with `Server.add_request_handler`, the SDK's way to serve methods it has no type
  for; each entry is the extension's `Skill` plus hubskills' `_meta` (`catalog.META_KEY`);
- `resources/read` of every file, `resources/directory/read` of every directory, and
  `resources/list` (each listed skill's `SKILL.md`, for hosts that know no extension);
- one tool, `search_skills`: a task in words -> ranked skills with badges and their URI.

Errors a client caused (a bad URI, an unknown skill, revision or file, a bad cursor) are
JSON-RPC `-32602`, as the extension says. Store calls block, so they run in worker threads.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS
from pydantic import Field

from registry._version import __version__
from registry.mcp.catalog import Catalog, NotServed
from registry.mcp.search import SEARCH_TOOL, search_result
from registry.mcp.uris import BadSkillUri, SkillUri, parse

EXTENSION = "io.modelcontextprotocol/skills"
PAGE = 50  # skills per skills/list page
LIST_TTL_MS = 60_000  # a new version may be published at any time
FILE_TTL_MS = 86_400_000  # a file URI names an immutable revision
T = TypeVar("T")


class UriParams(types.RequestParams):
    """`skills/get` params: the URI of a skill's SKILL.md."""

    uri: str


class DirectoryParams(types.RequestParams):
    """`resources/directory/read` params."""

    uri: str
    cursor: str | None = None


class _Search(types.RequestParams):
    query: str = ""
    limit: int = Field(default=5, ge=1, le=50)


async def _served(call: Callable[[], T], limiter: anyio.CapacityLimiter | None = None) -> T:
    """Run a blocking catalog call in a worker (of `limiter`'s, when given); what the client
    named badly is -32602."""
    try:
        return await anyio.to_thread.run_sync(call, limiter=limiter)
    except (BadSkillUri, NotServed) as err:
        raise MCPError(INVALID_PARAMS, str(err)) from err


class SkillsServer(Server[Any]):
    """The SDK's low-level `Server`, whose initialization options carry its extensions under
    `capabilities.experimental` too (all a legacy `initialize` handshake can carry) on every
    transport: stdio passes them itself, but streamable HTTP's session manager asks for the
    defaults, which leave `experimental` empty."""

    def create_initialization_options(self, notification_options: Any = None,
                                      experimental_capabilities: dict[str, dict[str, Any]]
                                      | None = None,
                                      extensions: dict[str, dict[str, Any]] | None = None
                                      ) -> Any:
        """The SDK's options, `experimental` defaulting to the extensions map."""
        if experimental_capabilities is None:
            experimental_capabilities = dict(self.extensions)
        return super().create_initialization_options(notification_options,
                                                     experimental_capabilities, extensions)


def build_server(catalog: Catalog, *, page: int = PAGE,
                 limiter: anyio.CapacityLimiter | None = None) -> Server[Any]:
    """The low-level `Server` serving `catalog` (run it with `serve_stdio` / `http_app`);
    `page` is how many skills (or directory children) one page holds; `limiter` bounds the
    worker threads its store reads take (the Space keeps them off its own pool)."""
    inline = catalog.reads_inline  # a revision's first read too: see `Catalog.reads_inline`
    served = catalog.served

    async def list_skills(_ctx: Any, params: types.PaginatedRequestParams) -> dict[str, Any]:
        start = _cursor(params.cursor)

        def listed() -> tuple[list[dict[str, Any]], int]:
            shown = catalog.listed(start, start + page)
            return [catalog.entry(rev) for rev in shown], catalog.count()
        skills, total = await _served(listed, limiter)
        result: dict[str, Any] = {"skills": skills, "ttlMs": LIST_TTL_MS, "cacheScope": "public"}
        if start + page < total:
            result["nextCursor"] = _encode(start + page)
        return result

    async def get_skill(_ctx: Any, params: UriParams) -> dict[str, Any]:
        uri = _parsed(params.uri)
        if uri.path != "SKILL.md":
            raise MCPError(INVALID_PARAMS, f"{params.uri} is not the URI of a skill's SKILL.md")
        try:  # where the request is (no coroutine, no thread hop) when read inline
            entry = (catalog.answer(uri) if inline or catalog.in_memory(uri) else
                     await anyio.to_thread.run_sync(catalog.answer, uri, limiter=limiter))
        except (BadSkillUri, NotServed) as err:
            raise MCPError(INVALID_PARAMS, str(err)) from err
        return {"skill": entry, "ttlMs": FILE_TTL_MS, "cacheScope": "public"}

    async def read_resource(_ctx: Any,
                            params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        hit = served.get(params.uri)  # a file of a revision in memory, by its exact URI
        if hit is None:
            uri = _parsed(params.uri)
            try:
                hit = (catalog.read(uri) if inline or catalog.in_memory(uri) else
                       await anyio.to_thread.run_sync(catalog.read, uri, limiter=limiter))
            except (BadSkillUri, NotServed) as err:
                raise MCPError(INVALID_PARAMS, str(err)) from err
        data, mime = hit
        contents: types.TextResourceContents | types.BlobResourceContents
        try:
            contents = types.TextResourceContents(uri=params.uri, mime_type=mime,
                                                  text=data.decode("utf-8"))
        except UnicodeDecodeError:
            contents = types.BlobResourceContents(uri=params.uri, mime_type=mime,
                                                  blob=base64.b64encode(data).decode("ascii"))
        return types.ReadResourceResult(contents=[contents], ttl_ms=FILE_TTL_MS,
                                        cache_scope="public")

    async def read_directory(_ctx: Any, params: DirectoryParams) -> dict[str, Any]:
        children = await _served(lambda: catalog.directory(parse(params.uri)), limiter)
        start = _cursor(params.cursor)
        result: dict[str, Any] = {"resources": [
            {"uri": uri, "name": name, "mimeType": mime}
            for uri, name, mime in children[start:start + page]]}
        if start + page < len(children):
            result["nextCursor"] = _encode(start + page)
        return result

    async def list_resources(_ctx: Any,
                             params: types.PaginatedRequestParams | None
                             ) -> types.ListResourcesResult:
        start = _cursor(params.cursor if params else None)
        revs, total = await _served(lambda: (catalog.listed(start, start + page),
                                             catalog.count()), limiter)
        return types.ListResourcesResult(resources=[
            types.Resource(uri=rev.uri(), name=rev.name, mime_type="text/markdown",
                           description=str(rev.frontmatter.get("description", "")))
            for rev in revs], ttl_ms=LIST_TTL_MS, cache_scope="public",
            next_cursor=_encode(start + page) if start + page < total else None)

    async def list_tools(_ctx: Any,
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[SEARCH_TOOL], ttl_ms=LIST_TTL_MS,
                                     cache_scope="public")

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != SEARCH_TOOL.name:
            raise MCPError(INVALID_PARAMS, f"unknown tool {params.name!r}")
        args = _Search.model_validate(params.arguments or {})
        found = await _served(lambda: search_result(catalog, args.query, args.limit), limiter)
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(found, indent=1))],
            structured_content=found)

    server: Server[Any] = SkillsServer(
        "hubskills", version=__version__,
        instructions="Skills of the hubskills registry, each measured: call search_skills "
                     "with the task in words, then read the skill:// URI it returns.",
        on_read_resource=read_resource, on_list_resources=list_resources,
        on_list_tools=list_tools, on_call_tool=call_tool)
    server.add_request_handler("skills/list", types.PaginatedRequestParams, list_skills)
    server.add_request_handler("skills/get", UriParams, get_skill)
    server.add_request_handler("resources/directory/read", DirectoryParams, read_directory)
    server.extensions[EXTENSION] = {"directoryRead": True}
    return server


def _parsed(uri: str) -> SkillUri:
    """`uri` parsed once per request; a bad one is -32602."""
    try:
        return parse(uri)
    except BadSkillUri as err:
        raise MCPError(INVALID_PARAMS, str(err)) from err


def _encode(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode("ascii")


def _cursor(cursor: str | None) -> int:
    """The offset an opaque cursor of ours holds (0 for none).

    Raises:
        MCPError: a cursor this server did not make.
    """
    if not cursor:
        return 0
    try:
        tag, _, offset = base64.urlsafe_b64decode(cursor.encode("ascii")).decode().partition(":")
        if tag == "o" and offset.isdigit():
            return int(offset)
    except (ValueError, UnicodeError):
        pass
    raise MCPError(INVALID_PARAMS, f"invalid cursor {cursor!r}")

