"""`hubskills trace show`: exactly what a teacher is given of an agent trace."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._path_arg import AGENT_TRACES, ExistingPath
from registry.config import Settings


@click.group("trace")
def trace_group() -> None:
    """Inspect agent traces (Claude Code, Codex, OpenCode, Gemini CLI, markdown, notes)."""


@trace_group.command("show")
@click.argument("file", type=ExistingPath(
    "file", retry="hubskills trace show {path}",
    otherwise="hubskills trace show --help  # the traces it reads, and where agents keep them",
    look_in=AGENT_TRACES))
@click.option("--budget", type=click.IntRange(min=200), default=None,
              help="Characters the teacher gets. Default: what generate gives a single trace "
              "(it splits that among several; a 135M teacher gets 4000).")
@click.option("--json", "as_json", is_flag=True, help="Counts and account as JSON.")
def trace_show_command(file: Path, budget: int | None, as_json: bool) -> None:
    """Print the account of FILE that `generate --from FILE` gives the teacher, with counts.

    \b
    Examples:
      hubskills trace show ~/.claude/projects/my-app/5f0c….jsonl
      hubskills trace show ~/.codex/sessions/…/rollout-….jsonl --budget 4000
    """
    from registry.generate.traces import DEFAULT_BUDGET, load_trace

    budget = budget or DEFAULT_BUDGET
    trace = load_trace(file, secrets=Settings.from_env().secrets())
    account = trace.render(budget)
    if as_json:
        out.as_json({**trace.counts(budget), "budget": budget, "account": account})
        return
    for line in trace.summary(budget):
        out.result(escape(line))
    if trace.damaged:
        out.warn(f"{len(trace.damaged)} damaged line(s) were skipped: what they held is "
                 "not in the account")
    out.result(f"[bold]── what the teacher sees ({len(account)} characters) ──[/]")
    out.out.print(out.visible(account), markup=False, highlight=False, end="")
