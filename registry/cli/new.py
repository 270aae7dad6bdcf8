"""`hubskills new`: scaffold a valid skill with an example test case."""

from __future__ import annotations

from pathlib import Path

import click

from registry.cli import _output as out
from registry.format.scaffold import scaffold_skill
from registry.format.skill import SKILL_FILE
from registry.format.suite import suite_path


@click.command("new")
@click.argument("name")
@click.option("--dir", "parent", type=click.Path(path_type=Path), default=Path("."),
              show_default=True, help="Folder to create the skill in.")
@click.option("--description", default=None, help="What the skill does and when to use it.")
@click.option("--json", "as_json", is_flag=True, help="The files created, as JSON.")
def new_command(name: str, parent: Path, description: str | None, as_json: bool) -> None:
    """Scaffold a valid skill with an example test case in evals/evals.json.

    \b
    Example:
      hubskills new csv-cleaning --description "Clean CSV files. Use when ..."
    """
    folder = scaffold_skill(parent, name, description)
    if as_json:
        out.as_json({"name": name, "path": str(folder),
                     "files": [str(folder / SKILL_FILE), str(suite_path(folder))],
                     "next": f"hubskills validate {folder}"})
        return
    out.result(f"Created {folder}/SKILL.md and {folder}/evals/evals.json")
    out.command("Next: edit them, then run", f"hubskills validate {folder}")
