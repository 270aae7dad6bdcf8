"""The next-step line `pull` prints pastes into a shell as it is, whatever the source.

A folder with a space in its path and an `mcp+stdio:` command are one argument each; the line
`hubskills pull SOURCE --agent claude` printed after a pull is split here as a shell splits it
and run: it must add Claude Code's link, not fail on an unexpected extra argument.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.cli_process import hubskills

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(300)


def next_step(stdout: str) -> list[str]:
    """The command printed after 'add one with', its ` \\` continuations joined, as argv."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "add one with" in line) + 1
    command = ""
    for line in lines[start:]:
        command += line.strip().removesuffix("\\")
        if not line.endswith("\\"):
            break
    return shlex.split(command)


def pulled_again(source: str, project: Path, name: str, *extra: str) -> None:
    done = hubskills("pull", source, *extra, "--project", project, COLUMNS="80")
    assert done.returncode == 0, done.stderr
    argv = next_step(done.stdout)
    assert argv[:3] == ["hubskills", "pull", f"{source}#{name}" if extra else source], argv
    assert argv[3:] == ["--agent", "claude"]
    again = hubskills(*argv[1:], "--project", project)
    assert again.returncode == 0, again.stderr
    assert (project / ".claude/skills" / name / "SKILL.md").is_file()


def test_a_folder_with_a_space_pastes_as_one_argument(tmp_path: Path) -> None:
    folder = tmp_path / "my skills" / "agent-skill-md"
    shutil.copytree(ROOT / "skills" / "agent-skill-md", folder)
    project = tmp_path / "proj"
    project.mkdir()
    pulled_again(str(folder), project, "agent-skill-md")


def test_an_mcp_stdio_command_pastes_as_one_argument(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    source = f"mcp+stdio:{sys.executable} -m registry.cli mcp"
    pulled_again(source, project, "agent-skill-md", "--skill", "agent-skill-md")
