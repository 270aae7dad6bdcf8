"""Every command's `--help` fits 80 columns (issue 38): click wraps the prose, but an example
block (`\\b`) is printed as written, and 23 example lines ran to 81-94 columns. A docs page's
address is the one exception: it is never cut into pieces (click cut `eval --help`'s three in
three), so one longer than the room left is a line of its own, as wide as it must be."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from registry.cli import cli
from registry.cli._help import ADDRESS


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
    wide = [line for line in done.output.splitlines() if cell_len(line) > 80
            and not ADDRESS.fullmatch(line.strip().strip("().,;:"))]  # a whole address
    assert not wide, "\n".join(f"{cell_len(line)}: {line}" for line in wide)


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        command = command.get_command(click.Context(command), name)
    return command


def _addresses(command: click.Command) -> set[str]:
    texts = [command.help or "", command.epilog or "",
             *(getattr(p, "help", None) or "" for p in command.params)]
    return {address for text in texts for address in ADDRESS.findall(text)}


WITH_ADDRESSES = [path for path in COMMANDS if _addresses(_command(path))]


def test_commands_whose_help_names_a_docs_page_are_walked():
    assert ("eval",) in WITH_ADDRESSES and ("mcp",) in WITH_ADDRESSES


@pytest.mark.parametrize("path", WITH_ADDRESSES, ids=" ".join)
@pytest.mark.parametrize("columns", ["60", "80", "200"])
def test_a_docs_address_in_help_is_printed_whole(path: tuple[str, ...], columns: str):
    done = CliRunner().invoke(cli, [*path, "--help"], env={"COLUMNS": columns})
    assert done.exit_code == 0, done.output
    assert _addresses(_command(path)) <= set(ADDRESS.findall(done.output)), done.output
