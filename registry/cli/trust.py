"""`hubskills trust`: the certificates and keys a signed skill must chain to before a pull
installs it (stored under HUBSKILLS_HOME/trust)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._path_arg import closest_sibling
from registry.config import Settings
from registry.errors import HubskillsError
from registry.signing import add_anchor, anchors, remove_anchor
from registry.signing.trust import is_pinned


@click.group("trust")
def trust_group() -> None:
    """Trust anchors for signed skills: `trust add NAME FILE`, `trust list`, `trust remove`.

    \b
    Examples:
      hubskills trust add nvidia nv-agent-root-cert.pem
      hubskills trust add acme acme-signing.pub
      hubskills trust list --json
    """


@trust_group.command("add")
@click.argument("name")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
def trust_add(name: str, file: Path) -> None:
    """Trust a root certificate (PEM) or a public key (PEM) under NAME."""
    if not file.exists() and (close := closest_sibling(file, "file")) is not None:
        if Path(f"{close}.pub").is_file():  # `acme.ke`: acme.key's public half is the one
            close = Path(f"{close}.pub")
        raise HubskillsError(f"{file}: no such file",
                             hint=f"hubskills trust add {name} {close}  # the closest name there")
    anchor = add_anchor(Settings.from_env().home, name, file)
    out.result(f"Trusted {anchor.kind} {escape(anchor.name)}: {escape(anchor.identity)}")
    if is_pinned(anchor):
        out.result("  a self-signed certificate, not a CA: pinned, it vouches only for what "
                   "was signed with this certificate itself")
    out.result("  a signature it vouches for says who published the files, not that they "
               "are safe")


@trust_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable list.")
def trust_list(as_json: bool) -> None:
    """List the trusted certificates and keys."""
    found = anchors(Settings.from_env().home)
    if as_json:
        out.as_json([asdict(a) | {"path": str(a.path)} for a in found])
        return
    if not found:
        out.result("No trust anchors; add one with: hubskills trust add NAME CERT.pem")
    for anchor in found:
        out.result(f"{escape(anchor.name)}  {anchor.kind}  {escape(anchor.identity)}")


@trust_group.command("remove")
@click.argument("name")
def trust_remove(name: str) -> None:
    """Stop trusting NAME."""
    if not remove_anchor(Settings.from_env().home, name):
        raise HubskillsError(f"no trust anchor named '{name}'", hint="hubskills trust list")
    out.result(f"No longer trusted: {escape(name)}")
