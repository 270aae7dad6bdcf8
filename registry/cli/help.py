"""`hubskills help [COMMAND]...`: the help `--help` prints, as git and most CLIs answer it."""

from __future__ import annotations

import click


@click.command("help")
@click.argument("command", nargs=-1, metavar="[COMMAND]...")
@click.pass_context
def help_command(ctx: click.Context, command: tuple[str, ...]) -> None:
    """Show a command's help, as --help does: `help eval`.

    With no COMMAND, the list of commands (`hubskills --help`); with a group and one of its
    subcommands, that subcommand's help (`help runs compare` is `runs compare --help`).

    \b
    Example:
      hubskills help
      hubskills help eval
      hubskills help runs compare
    """
    shown = ctx.find_root()
    for name in command:  # an unknown name: "No such command", as `hubskills NAME` says it
        group = shown.command
        if not isinstance(group, click.Group):
            raise click.UsageError(f"'{shown.command_path}' has no subcommands.", shown)
        _, found, _ = group.resolve_command(shown, [name])
        assert found is not None  # resolve_command fails on an unknown name
        shown = found.context_class(found, info_name=name, parent=shown)
    click.echo(shown.get_help(), color=ctx.color)
