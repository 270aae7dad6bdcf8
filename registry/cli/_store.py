"""What the registry commands (`publish`, `search`, `info`, `versions`) share: the
`--registry` and `--json` options, the store they open, a skill's info as JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from registry.config import Settings
from registry.registries import get_store
from registry.stores import SkillInfo, SkillStore

registry_option = click.option(
    "--registry", type=click.Choice(["local", "hub"]), default=None,
    help="The embedded local registry (default) or the Hugging Face Hub "
         "[env: HUBSKILLS_REGISTRY].")
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


def open_store(registry: str | None) -> tuple[Settings, SkillStore]:
    """The settings from the environment and the store `--registry` names."""
    settings = Settings.from_env()
    return settings, get_store(settings, registry)


def info_json(info: SkillInfo, *, card: bool) -> dict[str, Any]:
    """A skill's info as JSON; without `card` (as `search` lists it), no card
    and no versions."""
    data = asdict(info)
    if not card:
        data.pop("card")
        data.pop("versions")
    return data
