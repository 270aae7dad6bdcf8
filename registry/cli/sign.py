"""`hubskills sign`: write a skill.oms.sig (OpenSSF Model Signing) over a skill folder."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._path_arg import ExistingPath
from registry.errors import hint_command
from registry.signing import sign_folder


@click.command("sign")
@click.argument("folder", type=ExistingPath("folder", retry="hubskills sign {path} --key KEY",
                                            otherwise="{new}  # a new skill folder there"))
@click.option("--key", "key", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="The private key (PEM, ECDSA; `hubskills keys new` makes one).")
@click.option("--certificate", type=click.Path(path_type=Path, dir_okay=False),
              help="The signing certificate for KEY (certificate mode).")
@click.option("--chain", multiple=True, type=click.Path(path_type=Path, dir_okay=False),
              help="Certificates from the signing certificate up to the root (repeatable).")
def sign_command(folder: Path, key: Path, certificate: Path | None,
                 chain: tuple[Path, ...]) -> None:
    """Sign every file of a skill folder into FOLDER/skill.oms.sig, offline.

    \b
    Examples:
      hubskills keys new ~/.config/hubskills/acme.key
      hubskills sign ./skills/csv-cleaning --key ~/.config/hubskills/acme.key
      hubskills sign ./csv --key k.pem --certificate c.pem --chain root.pem
    """
    path = sign_folder(folder, key=key, certificate=certificate, chain=chain)
    out.result(f"Signed {escape(str(folder))}: {escape(str(path))}")
    public = Path(f"{key}.pub")  # `keys new KEY` wrote it beside KEY (a walk: "KEY.pub")
    anchor = str(chain[-1]) if chain else str(public) if certificate is None and \
        public.is_file() else "ROOT-CERT.pem" if certificate is not None else "KEY.pub"
    out.result("  any change to the folder after this voids it; users trust your public key"
               " (or your root certificate) with:")
    out.command("", hint_command("trust", "add", "NAME", anchor), indent="    ")  # pastes whole
