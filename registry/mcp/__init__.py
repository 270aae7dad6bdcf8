"""The registry as an MCP server: the Skills extension (SEP-2640) and a search tool.

`Catalog` reads one store into skill entries and files; `build_server` serves it on the
official `mcp` SDK's low-level `Server`; `serve_stdio` / `serve_http` / `http_app` run it.
URIs are `skill://NS/REPO@REVISION/NAME/PATH` (`uris`). See docs/mcp.md.
"""

from registry.mcp.catalog import META_KEY, Catalog, NotServed
from registry.mcp.server import EXTENSION, build_server
from registry.mcp.transport import http_app, serve_http, serve_stdio
from registry.mcp.uris import BadSkillUri, SkillUri, file_uri, parse

__all__ = ["EXTENSION", "META_KEY", "BadSkillUri", "Catalog", "NotServed", "SkillUri",
           "build_server", "file_uri", "http_app", "parse", "serve_http", "serve_stdio"]
