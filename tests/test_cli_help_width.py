"""Every command's `--help` fits 80 columns (issue 38): click wraps the prose, but an example
block (`\\b`) is printed as written, and 23 example lines ran to 81-94 columns."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from registry.cli import cli


def _commands(group: click.Group, before: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    context = click.Context(group)
    found = []
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        found.append((*before, name))
        if isinstance(command, click.Group):
            found += _commands(command, (*before, name))
    return found


COMMANDS = _commands(cli)


def test_every_command_is_walked():
    assert len(COMMANDS) > 40 and ("trace", "show") in COMMANDS


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_fits_80_columns(path: tuple[str, ...]):
    done = CliRunner().invoke(cli, [*path, "--help"], env={"COLUMNS": "80"})
    assert done.exit_code == 0, done.output
    wide = [line for line in done.output.splitlines() if cell_len(line) > 80]
    assert not wide, "\n".join(f"{cell_len(line)}: {line}" for line in wide)
