"""The flagship agent-skill-md skill and `hubskills agents` agree on where agents read skills
(issue 38, item 10): every project folder the skill names is one the tool knows, as the folder it
installs into or as an agent's own folder that it says the agent also reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from registry.cli import cli
from registry.install.agents import AGENTS

SKILL = Path(__file__).resolve().parent.parent / "skills" / "agent-skill-md" / "SKILL.md"


def test_every_project_folder_the_flagship_skill_names_is_one_the_tool_knows():
    named = set(re.findall(r"(?<![~/\w])(\.[a-z]+/skills)", SKILL.read_text(encoding="utf-8")))
    known = {a.project for a in AGENTS.values()} | {a.own for a in AGENTS.values() if a.own}
    assert {".cursor/skills", ".gemini/skills", ".github/skills"} <= named
    assert named <= known, sorted(named - known)


def test_agents_says_which_agents_also_read_a_folder_of_their_own(tmp_path):
    env = {"HUBSKILLS_HOME": str(tmp_path / "home"), "HOME": str(tmp_path), "COLUMNS": "80"}
    shown = CliRunner().invoke(cli, ["agents", "--project", str(tmp_path)], env=env)
    assert shown.exit_code == 0
    assert "Cursor .cursor/skills" in " ".join(shown.output.split())
    assert "\n  hubskills pull NS/NAME --agent claude" in shown.output  # whole, on its own line
    rows = json.loads(CliRunner().invoke(cli, ["agents", "--project", str(tmp_path), "--json"],
                                         env=env).output)
    cursor = next(r for r in rows if r["name"] == "cursor")
    assert cursor["project_folder"] == ".agents/skills"
    assert cursor["own_folder"] == ".cursor/skills"
