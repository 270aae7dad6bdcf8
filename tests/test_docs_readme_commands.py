"""The README's table of commands by task is the one `hubskills --help` prints: every command,
each under its task (a command added to the CLI and not to the table fails here)."""

from __future__ import annotations

import re
from pathlib import Path

from cli_process import hubskills

README = Path(__file__).resolve().parent.parent / "README.md"


def _readme_tasks() -> dict[str, list[str]]:
    """task -> commands, from the table after "`hubskills --help` lists every command by task"."""
    text = README.read_text(encoding="utf-8")
    table = text.split("`hubskills --help` lists every command by task", 1)[1].split("\n\n")[1]
    rows = [line.split("|")[1:3] for line in table.splitlines()[2:]]
    return {task.strip(): re.findall(r"`([^`]+)`", commands) for task, commands in rows}


def _help_tasks() -> dict[str, list[str]]:
    """task -> commands, from `hubskills --help`'s "<Task> commands:" sections."""
    done = hubskills("--help")
    assert done.returncode == 0, done.stderr
    tasks: dict[str, list[str]] = {}
    for section in re.split(r"\n(?=\w+ commands:\n)", done.stdout)[1:]:
        head, *lines = section.strip().splitlines()
        tasks[head.split()[0].lower()] = [line.split()[0] for line in lines
                                          if re.match(r"  \S", line)]
    return tasks


def test_the_readme_lists_every_command_under_the_task_help_gives_it():
    help_tasks = _help_tasks()
    assert "space" in help_tasks["other"] and "eval" in help_tasks["evaluate"]
    assert _readme_tasks() == help_tasks
