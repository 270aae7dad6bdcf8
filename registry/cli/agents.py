"""`hubskills agents`: the coding agents hubskills installs for, and which are detected here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.install.agents import AGENTS, SKILLS_DIR, why_detected


@click.command("agents")
@click.option("--project", type=click.Path(path_type=Path, file_okay=False), default=".",
              show_default=True, help="Project root to look for agents in.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def agents_command(project: Path, as_json: bool) -> None:
    """List the coding agents hubskills installs for, and which are detected here.

    An agent is detected in the project by its folder or file (`.claude`, `CLAUDE.md`), and
    for `--global` pulls by its folder in HOME or its command on PATH. `pull` serves the
    detected ones; `--agent NAME` serves any other.

    \b
    Examples:
      hubskills agents
      hubskills agents --json
    """
    home = Path.home()
    rows: list[dict[str, Any]] = [  # JSON-ready
        {"name": a.name, "title": a.title, "project_folder": str(a.folder(Path(), global_=False)),
         "user_folder": _home_relative(a.folder(home, global_=True), home),
         "reads_agents_skills": a.is_native(global_=False), "own_folder": a.own or None,
         "project": why_detected(a, project), "global": why_detected(a, home, global_=True)}
        for a in AGENTS.values()]
    if as_json:
        out.as_json(rows)
        return
    out.table(["name", "agent", "project folder", "user folder", "detected"],
              [(r["name"], escape(r["title"]), r["project_folder"], escape(r["user_folder"]),
                escape(_detected(r))) for r in rows], drop=("user folder", "agent"))
    own = [f"{a.title} {a.own}" for a in AGENTS.values() if a.own]
    # one that a plain pull leaves out: not detected here, and with a folder of its own (a
    # walk: it named claude, the one agent detected)
    other = next((a.name for a, r in zip(AGENTS.values(), rows, strict=True)
                  if not r["project"] and not r["reads_agents_skills"]), None)
    serve = (" Serve one that is not detected:\n  hubskills pull NS/NAME --agent " + other
             if other else "")
    out.result(f"Agents reading {SKILLS_DIR} see every pull; the others get a link. Some also "
               f"read a folder of their own ({', '.join(own)}): a skill there works as well, "
               f"but one copy in .agents/skills serves them all.{serve}")


def _home_relative(folder: Path, home: Path) -> str:
    return f"~/{folder.relative_to(home)}" if folder.is_relative_to(home) else str(folder)


def _detected(row: dict) -> str:
    found = [f"project ({row['project']})" if row["project"] else "",
             f"global ({row['global']})" if row["global"] else ""]
    return ", ".join(f for f in found if f) or "no"  # said once: `detected: no`
