"""`hubskills mcp`: serve the registry's skills over MCP (the Skills extension, SEP-2640)."""

from __future__ import annotations

import importlib.util

import click

from registry._install import add_extra
from registry.cli import _output as out
from registry.cli import _store as shared
from registry.errors import HubskillsError


def _host_port(value: str | None) -> tuple[str, int] | None:
    if value is None:
        return None
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise click.BadParameter(f"{value!r} is not HOST:PORT (e.g. 127.0.0.1:8765)")
    return host.strip("[]"), int(port)


@click.command("mcp")
@click.option("--http", "http", default=None, metavar="HOST:PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (PORT 0: a "
                   "free port, named in the line saying where it serves).")
@click.option("--listing", type=click.Choice(["latest", "verified"]), default="latest",
              show_default=True,
              help="Which version of each skill skills/list lists: the latest, or the newest "
                   "whose lift is replayed or spot-checked (others stay readable by URI) "
                   "[env: HUBSKILLS_MCP_LISTING].")
@shared.registry_option
def mcp_command(http: str | None, listing: str, registry: str | None) -> None:
    """Serve the registry's skills to MCP hosts (stdio by default), with a search tool.

    Every file is a skill:// resource pinned to an immutable revision; each skill's entry
    carries its version, verification badge and measured lift (https://huggingface.co/spaces/hubskills/hubskills/blob/main/docs/mcp.md).

    \b
    Examples:
      hubskills mcp                          # stdio: what a host launches
      hubskills mcp --http 127.0.0.1:8765    # http://127.0.0.1:8765/mcp
      hubskills mcp --registry hub --listing verified
    """
    address = _host_port(http)
    if importlib.util.find_spec("mcp") is None:
        raise HubskillsError("hubskills mcp needs the MCP SDK, which this install does not "
                             "have", hint=add_extra("mcp"))
    from registry.mcp import Catalog, build_server, serve_http, serve_stdio
    from registry.stores.revision_facts import cache_dir

    settings, store = shared.open_store(registry)
    server = build_server(Catalog(store, listing=listing, facts=cache_dir(settings.home)))
    if address:
        serve_http(server, *address,
                   ready=lambda url: out.info(f"serving MCP at {url} (Ctrl-C stops)"))
    else:
        serve_stdio(server)
