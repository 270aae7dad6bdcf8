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


def _allowed_hosts(ctx: click.Context, param: click.Parameter,
                   value: tuple[str, ...]) -> tuple[str, ...]:
    if not value or importlib.util.find_spec("mcp") is None:  # the command says what to add
        return value
    from registry.mcp.transport import check_allowed_host

    try:
        return tuple(check_allowed_host(v) for v in value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from err


@click.command("mcp")
@click.option("--http", "http", default=None, metavar="HOST:PORT",
              help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (PORT 0: a "
                   "free port, named in the line saying where it serves).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="HOST[:PORT]",
              callback=_allowed_hosts,
              help="With --http: also answer requests naming this Host (a reverse proxy's "
                   "name, another of this machine's; repeatable). Others than the address "
                   "bound and loopback names are refused (DNS-rebinding protection).")
@click.option("--listing", type=click.Choice(["latest", "verified"]), default="latest",
              show_default=True,
              help="Which version of each skill skills/list lists: the latest, or the newest "
                   "whose lift is replayed or spot-checked (others stay readable by URI) "
                   "[env: HUBSKILLS_MCP_LISTING].")
@shared.registry_option
def mcp_command(http: str | None, allow_hosts: tuple[str, ...], listing: str,
                registry: str | None) -> None:
    """Serve the registry's skills to MCP hosts (stdio by default), with a search tool.

    Every file is a skill:// resource pinned to an immutable revision; each skill's entry
    carries its version, verification badge and measured lift (https://huggingface.co/spaces/hubskills/hubskills/blob/main/docs/mcp.md).

    \b
    Examples:
      hubskills mcp                          # stdio: what a host launches
      hubskills mcp --http 127.0.0.1:8765    # http://127.0.0.1:8765/mcp
      hubskills mcp --http 127.0.0.1:8765 --allow-host mcp.example.org  # proxied
      hubskills mcp --registry hub --listing verified
    """
    address = _host_port(http)
    if allow_hosts and not address:
        raise click.UsageError("--allow-host names hosts an --http server answers; stdio has "
                               "none")
    if importlib.util.find_spec("mcp") is None:
        raise HubskillsError("hubskills mcp needs the MCP SDK, which this install does not "
                             "have", hint=add_extra("mcp"))
    from registry.mcp import Catalog, build_server, serve_http, serve_stdio
    from registry.stores.revision_facts import cache_dir

    settings, store = shared.open_store(registry)
    server = build_server(Catalog(store, listing=listing, facts=cache_dir(settings.home)))
    if address:
        serve_http(server, *address, allow_hosts=allow_hosts,
                   ready=lambda url: out.info(f"serving MCP at {url} (Ctrl-C stops)"))
    else:
        serve_stdio(server)
