"""The MCP read bench's floor (issue 40): the smallest server the official `mcp` SDK allows that
answers a skill's `skills/get` and `resources/read`, with no hubskills code on its path while it
serves. `bench/mcp.py` reads the same skill from it and from `hubskills mcp` in the same run.
"""

from __future__ import annotations

import base64
from typing import Any

import mcp_types as types

TTL_MS = 86_400_000  # what `hubskills mcp` says of a file of an immutable revision: the floor
# answers the very same results (`bench/mcp.py` checks it), so it costs no less for saying less


def _content(uri: str, data: bytes, mime: str) -> Any:
    """A file's `resources/read` content: text when it is UTF-8, else base64."""
    try:
        return types.TextResourceContents(uri=uri, mime_type=mime, text=data.decode("utf-8"))
    except UnicodeDecodeError:
        return types.BlobResourceContents(uri=uri, mime_type=mime,
                                          blob=base64.b64encode(data).decode("ascii"))


def floor_server(entries: dict[str, dict[str, Any]],
                 files: dict[str, tuple[bytes, str]], reads: Any = None) -> Any:
    """The smallest server the official SDK allows that answers `skills/get` and
    `resources/read` for `entries` and `files`: every answer built before the first request,
    each request a dictionary lookup (no hubskills code runs while it serves), its results
    those `hubskills mcp` gives, caching fields included. With `reads`
    (store, skill URI -> (repo, sha), file URI -> (skill URI, path)): its `skills/get` also
    reads the revision with the store's `read_files` (the bytes and the checks any first
    read needs), and each `resources/read` answers from those bytes, as a first read must."""
    from mcp.server.lowlevel import Server

    class UriParams(types.RequestParams):
        uri: str

    contents = {uri: _content(uri, data, mime) for uri, (data, mime) in files.items()}
    answers = {uri: {"skill": entry, "ttlMs": TTL_MS, "cacheScope": "public"}
               for uri, entry in entries.items()}
    fresh: dict[str, dict[str, bytes]] = {}

    async def get_skill(_ctx: Any, params: UriParams) -> dict[str, Any]:
        if reads is not None:
            fresh[params.uri], _ = reads[0].read_files(*reads[1][params.uri])
        return answers[params.uri]

    async def read_resource(_ctx: Any,
                            params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if reads is None:
            return types.ReadResourceResult(contents=[contents[uri]], ttl_ms=TTL_MS,
                                            cache_scope="public")
        skill, path = reads[2][uri]
        return types.ReadResourceResult(
            contents=[_content(uri, fresh[skill][path], files[uri][1])], ttl_ms=TTL_MS,
            cache_scope="public")

    server: Any = Server("floor", on_read_resource=read_resource)
    server.add_request_handler("skills/get", UriParams, get_skill)
    return server
