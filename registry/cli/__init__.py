"""The `hubskills` command: assembles the commands and maps errors at the edge.

Commands are loaded lazily: `COMMANDS` maps each name to the module attribute that defines it
and to its one-line help, so `hubskills --help` imports no command module and `hubskills eval`
imports only `registry.cli.eval` (and what it needs). `hubskills X` (and `hubskills X SUB`) is
written in `registry/cli/X.py`; what commands share is in `_` modules. `tests/test_cli.py`
checks that every entry resolves, that its stored help matches the command's own, and that
each command lives in the module named after it.
"""

from __future__ import annotations

import difflib
import os
import sys
from typing import Any, NoReturn

import click

from registry import __version__
from registry._gc import import_kept, pause_for_imports
from registry._lazy import import_during_first_wait
from registry.cli._help import HelpContext, use_help_formatter
from registry.errors import HubskillsError

#: name -> ("module:attribute", the command's short help as `hubskills --help` lists it)
COMMANDS: dict[str, tuple[str, str]] = {
    "ask": ("registry.cli.ask:ask_command",
            "Ask one model one question: the answer, then tokens, cost and latency."),
    "ci": ("registry.cli.ci:ci_command",
           "Re-evaluate the skills changed since a git ref; exit 1 when one regressed."),
    "eval": ("registry.cli.eval:eval_command",
             "Evaluate a skill: each case with and without the skill, on each model."),
    "generate": ("registry.cli.generate:generate_command",
                 "Generate a skill and a test suite with a teacher model, measure it on "
                 "students, refine."),
    "help": ("registry.cli.help:help_command",
             "Show a command's help, as --help does: `help eval`."),
    "info": ("registry.cli.info:info_command",
             "Show a skill: description, versions, signature, latest eval results, the "
             "publisher's own claims (skill-card.md, BENCHMARK.md), the pull command."),
    "install": ("registry.cli.install:install_command",
                "Install exactly what skills.lock pins (by sha)."),
    "jobs": ("registry.cli.jobs:jobs_group",
             "Sharded runs on Hugging Face Jobs: `jobs list`, `jobs logs RUN_ID`, `jobs cancel "
             "RUN_ID`."),
    "leaderboard": ("registry.cli.leaderboard:leaderboard_command",
                    "Rank skills by measured lift (one row per skill version x model x mode x "
                    "suite)."),
    "list": ("registry.cli.list:list_command",
             "List skills in every agent folder (project and user): ours, hf skills', and "
             "others."),
    "mcp": ("registry.cli.mcp:mcp_command",
            "Serve the registry's skills to MCP hosts (stdio by default), with a search tool."),
    "models": ("registry.cli.models:models_command",
               "List model references, whether each is usable here, why, and its price."),
    "new": ("registry.cli.new:new_command",
            "Scaffold a valid skill with an example test case in evals/evals.json."),
    "publish": ("registry.cli.publish:publish_command",
                "Validate, scan and publish a skill folder as a new immutable version."),
    "pull": ("registry.cli.pull:pull_command",
             "Install a skill into .agents/skills and your agents' folders, pinned in "
             "skills.lock."),
    "registry": ("registry.cli.registry:registry_group",
                 "Manage the embedded local registry."),
    "remove": ("registry.cli.remove:remove_command",
               "Remove a skill hubskills installed: its folder, links, copies and lock entry, "
               "and the dependencies only it needed."),
    "review": ("registry.cli.review:review_group",
               "Review, comment on and admit the runs submitted as pull requests."),
    "review-outputs": ("registry.cli.review_outputs:review_outputs_command",
                       "Review a saved run's answers blind, side by side: A, B, tie or both "
                       "bad."),
    "runs": ("registry.cli.runs:runs_group",
             "List saved evaluation runs; `runs show ID`, `runs compare A B`."),
    "scan": ("registry.cli.scan:scan_command",
             "Scan a skill folder for hidden instructions, download-and-run, secrets and more."),
    "search": ("registry.cli.search:search_command",
               "Find skills by name or description (--json: each with its signature "
               "status)."),
    "space": ("registry.cli.space:space_command",
              "Serve the hubskills Space on this machine, on the configured registry."),
    "suite": ("registry.cli.suite:suite_group",
              "A skill's test suite (evals/evals.json): show, import, generate."),
    "tests": ("registry.cli.suite:tests_group",
              "Grow a skill's test suite with verified, discriminating cases."),
    "agents": ("registry.cli.agents:agents_command",
               "List the coding agents hubskills installs for, and which are detected here."),
    "update": ("registry.cli.update:update_command",
               "Move installed skills (or NAME) to their newest version and show what changed."),
    "validate": ("registry.cli.validate:validate_command",
                 "Check skill folders and their test suites; exit 1 on any error."),
    "verify": ("registry.cli.verify:verify_command",
               "Replay a saved or pushed run without calling any model; exit 1 unless it is "
               "verified."),
    "verify-install": ("registry.cli.verify_install:verify_install_command",
                       "Re-check every installed skill against skills.lock: its files' "
                       "digests, its signature and signer, its copies and links."),
    "versions": ("registry.cli.versions:versions_command",
                 "List a skill's published versions, newest first."),
    "doctor": ("registry.cli.doctor:doctor_command",
               "Say what works here: sandbox, embedded model, API keys (names only), registry, "
               "Space."),
    "tune": ("registry.cli.tune:tune_command",
             "Rewrite a skill's description so agents open it when they should."),
    "trace": ("registry.cli.trace:trace_group",
              "Inspect agent traces (Claude Code, Codex, OpenCode, Gemini CLI, markdown, "
              "notes)."),
    "sign": ("registry.cli.sign:sign_command",
             "Sign every file of a skill folder into FOLDER/skill.oms.sig, offline."),
    "keys": ("registry.cli.keys:keys_group",
             "Key pairs for `hubskills sign`: `keys new PATH`."),
    "trust": ("registry.cli.trust:trust_group",
              "Trust anchors for signed skills: `trust add NAME FILE`, `trust list`, `trust "
              "remove`."),
}


#: `hubskills --help` lists the commands by task, in this order (the rest under "Other").
TASKS: dict[str, tuple[str, ...]] = {
    "Author": ("new", "validate", "suite", "generate", "tune", "scan"),
    "Evaluate": ("eval", "runs", "review-outputs", "verify", "leaderboard", "models", "ask",
                 "trace"),
    "Share": ("publish", "search", "info", "versions", "registry", "review", "mcp"),
    "Install": ("pull", "install", "update", "list", "remove", "verify-install", "agents",
                "trust"),
}
#: How close a mistyped option must be to one of its command's to be offered (difflib's ratio:
#: `--limt`/`--limit` 0.91, `--sort`/`--json` 0.67, click's own cutoff 0.6).
CLOSE_OPTION = 0.75
#: Old spellings that still work but are not listed: `tests generate` is `suite generate`.
HIDDEN = frozenset({"tests"})
#: What a command needs only after its first answers, imported while it first waits on the
#: network instead of before its first request: an eval's report (numpy, the statistics).
AFTER_FIRST_WAIT: dict[str, tuple[str, ...]] = {"eval": ("registry.cli._render",)}


class LazyGroup(click.Group):
    """A group whose commands are imported when they run, listed in help from `lazy`."""

    context_class = HelpContext  # `--help` keeps a docs page's address whole

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, loaded or not, sorted."""
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, importing its module on first use."""
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, _, attr = self.lazy[cmd_name][0].partition(":")
            self.add_command(use_help_formatter(getattr(import_kept(module), attr)), cmd_name)
            if cmd_name in AFTER_FIRST_WAIT:
                import_during_first_wait(*AFTER_FIRST_WAIT[cmd_name])
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        """The command named first in `args`; an unknown name gets "did you mean" (`evl`)."""
        name = click.utils.make_str(args[0])
        if self.get_command(ctx, name) is None and not name.startswith("-"):
            subs = self._subcommands_named(ctx, name)  # `compare`: `runs compare` first
            close = [c for c in subs if c.endswith(f" {name}")] or difflib.get_close_matches(
                name, [n for n in self.list_commands(ctx) if n not in HIDDEN], n=3,
                cutoff=0.6) or subs
            ctx.fail(f"No such command '{name}'."
                     + (f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else "")
)
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """The command; a mistyped option gets "did you mean" only for a close one (click
        offered `leaderboard --sort` '--json' and `runs --model` '--help'), else the commands
        that have it (`--sort`: search)."""
        try:
            return super().invoke(ctx)
        except click.NoSuchOption as exc:
            typed, message = exc.option_name, f"No such option '{exc.option_name}'."
            close = [option for option in exc.possibilities or ()
                     if difflib.SequenceMatcher(None, typed, option).ratio() >= CLOSE_OPTION]
            owners = [] if close else self._commands_with(ctx, typed)
            if close:
                message += f" Did you mean {' or '.join(repr(option) for option in close)}?"
            elif owners:
                more = f" and {len(owners) - 3} more" if len(owners) > 3 else ""
                message += f" It is an option of {', '.join(owners[:3])}{more}."
            raise click.UsageError(message, exc.ctx) from None

    def _commands_with(self, ctx: click.Context, option: str) -> list[str]:
        """`hubskills search` for `--sort`: the commands (and subcommands) that have `option`.
        Only a mistyped option gets here, so importing every command costs nothing that works."""
        found = []
        for name in (n for n in self.list_commands(ctx) if n not in HIDDEN):
            command = self.get_command(ctx, name)
            subs = [(f"{name} {sub}", command.get_command(ctx, sub))
                    for sub in command.list_commands(ctx)] \
                if isinstance(command, click.Group) else [(name, command)]
            found += [f"hubskills {path}" for path, sub in subs if sub is not None and any(
                option in param.opts for param in sub.params)]
        return found

    def _subcommands_named(self, ctx: click.Context, name: str) -> list[str]:
        """`runs compare` for `compare`: the groups' subcommands of that name (or close to it).
        Only an unknown name gets here, so importing every group costs nothing that works."""
        found: dict[str, float] = {}
        for group in sorted(n for n, (path, _) in self.lazy.items()
                            if path.endswith("_group") and n not in HIDDEN):
            command = self.get_command(ctx, group)
            for sub in command.list_commands(ctx) if isinstance(command, click.Group) else ():
                score = difflib.SequenceMatcher(None, name, sub).ratio()
                if score >= 0.8:
                    found[f"{group} {sub}"] = score
        return sorted(found, key=lambda c: -found[c])[:3]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands grouped by task (`TASKS`), from the stored short help, so `--help`
        imports no command."""
        names = [name for name in self.list_commands(ctx) if name not in HIDDEN]
        limit = formatter.width - 6 - max(len(name) for name in names)
        grouped = {task: [n for n in listed if n in names] for task, listed in TASKS.items()}
        grouped["Other"] = [n for n in names if all(n not in g for g in TASKS.values())]
        for task, listed in grouped.items():
            if listed:
                with formatter.section(f"{task} commands"):
                    formatter.write_dl([(n, self._short_help(ctx, n, limit)) for n in listed])

    def _short_help(self, ctx: click.Context, name: str, limit: int) -> str:
        if name in self.commands or name not in self.lazy:
            command = self.get_command(ctx, name)
            return command.get_short_help_str(limit) if command else ""
        return click.Command(name, help=self.lazy[name][1]).get_short_help_str(limit)


@click.group(cls=LazyGroup, lazy=COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="hubskills")
def cli() -> None:
    """hubskills: generate, evaluate, publish and pull Agent Skills, with honest lift numbers.

    \b
    Start here (the seeded registry works offline, from any folder):
      hubskills leaderboard
      hubskills info hubskills/kernel-builder-cuda-kernels
      hubskills suite show hubskills/kernel-builder-cuda-kernels
      hubskills eval hubskills/agent-skill-md --runs 1 --cases allowed-keys
      hubskills pull hubskills/kernel-builder-cuda-kernels
      hubskills new my-skill && hubskills validate my-skill

    `eval` with no --model and no API key runs the embedded model (the `local` extra:
    `hubskills doctor` names the command that adds it to this install).
    """


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a `HubskillsError` becomes `Error:`/`Hint:` on stderr and exit code 1, a
    usage error (a bad option value, a missing argument, an unknown command) the same lines
    and exit code 2; a group named alone (`hubskills`) prints its help, as `--help` does."""
    from registry.secrets import scrub_logs

    pause_for_imports()
    scrub_logs()
    try:
        cli.main(args=argv, prog_name="hubskills", standalone_mode=False,
                 auto_envvar_prefix="HUBSKILLS")
    except HubskillsError as exc:
        if os.environ.get("HUBSKILLS_DEBUG"):
            raise
        _fail(1, exc.message, exc.hint)
    except click.exceptions.Abort:
        _fail(130, "Aborted.")
    except KeyboardInterrupt:
        _fail(130, "Interrupted.")
    except _NO_ARGS as exc:  # `hubskills` or `hubskills suite` alone: the help, as --help
        click.echo(exc.format_message())  # gives it (it was "Error: Usage: ..." and exit 2)
    except click.UsageError as exc:
        _fail(2, exc.format_message(), _usage_hint(exc))
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)


#: What click (8.2 on) raises for a group named alone: it prints its help (click 8.1 too).
_NO_ARGS: type[click.UsageError] | tuple[()] = getattr(click.exceptions, "NoArgsIsHelpError", ())
#: Where a missing argument's values are listed (`runs show` with no run id).
LISTED_BY = dict.fromkeys(("run_id", "run_a", "run_b"), "hubskills runs  # the run ids")


def _usage_hint(exc: click.UsageError) -> str:
    """A usage error's next command: where a missing argument's values are listed, else the
    command's `--help` (click's usage block and "Try ..." lines, said as one hint)."""
    param = getattr(exc, "param", None)
    if isinstance(exc, click.MissingParameter) and param is not None and \
            param.name in LISTED_BY:
        return LISTED_BY[param.name]
    return f"{exc.ctx.command_path if exc.ctx else 'hubskills'} --help"


def _fail(code: int, message: str, hint: str | None = None) -> NoReturn:
    from registry.cli import _output as out  # rich loads only when there is an error to print
    from registry.cli._skill_ref import as_typed  # a fetched temp folder reads as its ns/name

    message, hint = as_typed(message), hint and as_typed(hint)
    out.error(message)
    if hint:
        out.hint(hint)
    sys.exit(code)
