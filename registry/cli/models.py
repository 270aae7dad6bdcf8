"""`hubskills models`: which model references work here, why, and their prices."""

from __future__ import annotations

import click

from registry.cli import _output as out
from registry.config import Settings
from registry.providers import known_models, prices_as_of


@click.command("models")
@click.option("--base-url", default=None, help="OpenAI-compatible server to probe for local/.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable list on stdout.")
def models_command(base_url: str | None, as_json: bool) -> None:
    """List model references, whether each is usable here, why, and its price.

    The tools column says which call tools: agent mode, trigger evals and tune need one.

    \b
    Examples:
      hubskills models
      hubskills models --base-url http://127.0.0.1:8080/v1 --json
    """
    rows = known_models(Settings.from_env(), base_url=base_url)
    if as_json:
        out.as_json({"prices_as_of": prices_as_of(), "models": [r.to_dict() for r in rows]})
        return
    out.table(["model", "alias", "usable", "tools", "why", "price"],
              [(r.ref, r.alias or "", "yes" if r.usable else "no", "yes" if r.tools else "no",
                r.why, _short(r.price)) for r in rows], drop=("alias",),
              wrap=["why"],  # what to set to use a model: cut, `set --base-url URL or…`
              title=f"Model references (price: $ per million tokens in / out, as of "
                    f"{prices_as_of()})")


def _short(price: str) -> str:
    """`$4 / $20` for `$4 in / $20 out per Mtok` (the title says the unit): whole at 80
    columns, where the long form was cut to `$4 in / $2…`."""
    return price.replace(" in / ", " / ").removesuffix(" out per Mtok").replace(
        "free (runs locally)", "free (local)")
