"""`hubskills keys`: key pairs for signing skills."""

from __future__ import annotations

import shlex
from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.signing import new_key_pair
from registry.signing.verify import key_hint


@click.group("keys")
def keys_group() -> None:
    """Key pairs for `hubskills sign`: `keys new PATH`.

    \b
    Examples:
      hubskills keys new ~/.config/hubskills/acme.key
    """


@keys_group.command("new")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--force", is_flag=True, help="Replace a key at PATH.")
def keys_new(path: Path, force: bool) -> None:
    """Make an ECDSA P-256 key pair: PATH (private, mode 600) and PATH.pub (to share)."""
    pair = new_key_pair(path, force=force)
    out.result(f"Private key: {escape(str(pair.private))} (keep it secret)")
    out.result(f"Public key:  {escape(str(pair.public))} ({pair.fingerprint})")
    out.result(f"  (where nobody trusts it yet, `hubskills info` names it by its PEM's hash: "
               f"pem-sha256:{key_hint(pair.public)})")
    out.command("  sign with:", f"hubskills sign FOLDER --key {shlex.quote(str(pair.private))}",
                indent="    ")
