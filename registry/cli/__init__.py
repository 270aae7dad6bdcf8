"""The `hubskills` command: assembles the commands and maps errors at the edge."""

from __future__ import annotations

import os
import sys

import click

from registry import __version__
from registry.cli import _output as out
from registry.cli.doctor import doctor_command
from registry.cli.eval import eval_command, runs_group
from registry.cli.generate import generate_command, tests_group
from registry.cli.leaderboard import leaderboard_command
from registry.cli.models import ask_command, models_command
from registry.cli.pull import (
    install_command,
    list_command,
    pull_command,
    remove_command,
    update_command,
)
from registry.cli.registry_cmds import (
    info_command,
    publish_command,
    registry_group,
    search_command,
    versions_command,
)
from registry.cli.scan import scan_command
from registry.cli.trace import trace_group
from registry.cli.validate import new_command, suite_group, validate_command
from registry.errors import HubskillsError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="hubskills")
def cli() -> None:
    """hubskills: generate, evaluate, publish and pull Agent Skills, with honest lift numbers.

    \b
    Start here:
      hubskills validate skills/*
      hubskills eval skills/kernel-builder-cuda-kernels --runs 3
      hubskills leaderboard
      hubskills pull hubskills/kernel-builder-cuda-kernels
    """


for command in (
    validate_command, new_command, suite_group, eval_command, runs_group, models_command,
    ask_command, scan_command, publish_command, search_command, info_command, versions_command,
    registry_group, generate_command, tests_group, pull_command, install_command,
    update_command, remove_command, list_command, leaderboard_command, trace_group,
    doctor_command,
):
    cli.add_command(command)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a `HubskillsError` becomes `Error:`/`Hint:` on stderr and exit code 1."""
    from registry.secrets import scrub_logs

    scrub_logs()
    try:
        cli.main(args=argv, prog_name="hubskills", standalone_mode=False,
                 auto_envvar_prefix="HUBSKILLS")
    except HubskillsError as exc:
        if os.environ.get("HUBSKILLS_DEBUG"):
            raise
        out.error(exc.message)
        if exc.hint:
            out.hint(exc.hint)
        sys.exit(1)
    except click.exceptions.Abort:
        out.error("Aborted.")
        sys.exit(130)
    except KeyboardInterrupt:
        out.error("Interrupted.")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
