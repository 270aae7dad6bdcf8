"""`hubskills eval`: run an A/B evaluation (saved runs are read by `hubskills runs`)."""

from __future__ import annotations

import shlex
from dataclasses import fields
from pathlib import Path
from typing import Literal

import click
from rich.markup import escape

from registry._docs import doc
from registry.agent import Budget
from registry.cli import _output as out
from registry.cli._dependencies import EvalDependencyLoader, refuse_on_jobs
from registry.cli._design_options import design_options as _design_options
from registry.cli._progress import eval_progress
from registry.cli._push_target import push_target
from registry.cli._signals import exit_now, interrupts
from registry.cli._skill_ref import SkillSource, skill_folder
from registry.cli._trigger_eval import trigger_mode
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.results.runs import RunManifest, read_manifest
from registry.sandbox import BACKENDS

_BUDGET = Budget()  # agent mode's defaults, shown in --help and docs/evaluating.md


@trigger_mode  # --mode trigger and --distractors: registry/cli/_trigger_eval.py
@click.command("eval", epilog="\b\nDocs (the designs, their parameters):\n"
               "  the adaptive design:\n"
               f"    {doc('evaluating', 'adaptive-evaluation-the-default')}\n"
               "  trigger evals:\n"
               f"    {doc('triggers')}")
@click.argument("skill", type=SkillSource(exists=False), metavar="PATH|NS/NAME[@VERSION]|GIT")
@click.option("--model", "-m", "models", multiple=True,
              help="Student model reference (repeatable). Default: embedded/smollm2-135m.")
@click.option("--runs", type=click.IntRange(min=1), default=3, show_default=True,
              help="Independent repeats per case.")
@click.option("--mode", type=click.Choice(["inline", "tool", "agent", "trigger"]),
              default="inline", show_default=True, help="inline: SKILL.md in context; tool: "
              "load_skill tool; agent: a coding agent with file and shell tools in a workspace.")
@click.option("--placement", type=click.Choice(["user", "system"]), default="user",
              show_default=True, help="Where inline mode puts the skill.")
@click.option("--judge", default=None,
              help="Model that grades judge and pairwise checks and assertions.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None,
              help="Parallel calls per provider.")
@click.option("--max-cost", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Never spend past this many USD: each call reserves its worst case "
                   "(catalogue price) first, and the run stops cleanly when none fits.")
@click.option("--max-calls", type=click.IntRange(min=1), default=None, metavar="N",
              help="At most N model calls (the judge's too): what --max-cost needs for a "
                   "model without a known price.")
@click.option("--design", type=click.Choice(["adaptive", "fixed"]), default=None,
              help="adaptive: ask in rounds and stop once the verdict is decided, never more "
                   "than the fixed plan; fixed: every case x run x arm. Default: adaptive for "
                   "a suite of 10 cases or more with --runs 2 or more (trigger mode: 10 "
                   "queries, --runs 3), else fixed; a resumed run keeps its own (docs "
                   "below).")
@click.option("--design-option", "design_option", multiple=True, metavar="KEY=VALUE",
              help="A parameter of the adaptive design, repeatable: alpha (default 0.05), "
                   "spending (linear, pocock, obrien-fleming or haybittle-peto; default "
                   "linear), settle_after (4), futility (0.15), futility_from (2), "
                   "early_futility (0.01), splits (2), batches (8), levels (chained or "
                   "bonferroni). Trigger mode: alpha, spending, settle_after, width (docs "
                   "below).")
@click.option("--cases", default=None, help="Comma-separated case ids to run.")
@click.option("--tests", type=click.Path(path_type=Path), default=None,
              help="Suite file in any supported format (default: SKILL/evals/evals.json).")
@click.option("--temperature", type=click.FloatRange(0, 2), default=0.7, show_default=True)
@click.option("--max-tokens", type=click.IntRange(min=1), default=512, show_default=True)
@click.option("--base-url", default=None, help="Server for local/<model> references.")
@click.option("--resume", default=None, metavar="RUN_ID", help="Finish an interrupted run.")
@click.option("--no-cache", is_flag=True, help="Call the models even for cached requests.")
@click.option("--push", is_flag=True, help="Append the run to the registry's results dataset.")
@click.option("--repo", metavar="NS/NAME", default=None,
              help="The published skill this folder is (default: found from a pulled folder's "
                   "marker or a published revision with the same content).")
@click.option("--registry", "registry_kind", default=None, help="local or hub (with --push).")
@click.option("--sandbox", type=click.Choice(["auto", *BACKENDS]), default="auto",
              show_default=True, envvar="HUBSKILLS_SANDBOX",
              help="Where python/exec checks run: auto (bwrap where it works), bwrap, or none "
                   "(no isolation; only for a folder of your own that was not pulled).")
@click.option("--skip-code-checks", is_flag=True,
              help="Leave python and exec checks out (the report and the run say so).")
@click.option("--max-turns", type=click.IntRange(min=1), default=_BUDGET.max_turns,
              show_default=True, help="Agent mode: model calls per sample.")
@click.option("--max-tool-calls", type=click.IntRange(min=1), default=_BUDGET.max_tool_calls,
              show_default=True, help="Agent mode: tool calls per sample.")
@click.option("--max-agent-tokens", type=click.IntRange(min=1), default=_BUDGET.max_tokens,
              show_default=True, help="Agent mode: input + output tokens per sample.")
@click.option("--agent-wall-time", type=click.FloatRange(min=1), default=_BUDGET.wall_s,
              show_default=True, help="Agent mode: seconds per sample.")
@click.option("--command-timeout", type=click.FloatRange(min=1),
              default=_BUDGET.command_timeout_s, show_default=True,
              help="Agent mode: seconds per `run` tool call.")
@click.option("--harness", type=click.Choice(["claude-code", "codex", "opencode", "gemini"]),
              default=None, help="Agent mode: run this agent CLI instead of hubskills' loop.")
@click.option("--on", "on", type=click.Choice(["local", "jobs"]), default="local",
              show_default=True, help="Where the models are called: here, or as Hugging Face "
                                      "Jobs on your account (see `hubskills jobs`).")
@click.option("--flavor", default="cpu-basic", show_default=True, help="Jobs hardware (--on jobs).")
@click.option("--image", default=None, help="The Jobs' Docker image (--on jobs; default "
                                            "python:3.12, bubblewrap installed when needed).")
@click.option("--shards", type=click.IntRange(min=1), default=3, show_default=True,
              help="Jobs to split the run into (--on jobs).")
@click.option("--detach", is_flag=True, help="Start the Jobs and return (--on jobs); "
                                             "`hubskills runs show RUN_ID` collects.")
@click.option("--poll", type=click.FloatRange(min=0.05), default=5.0, hidden=True)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary on stdout.")
@click.option("-v", "--verbose", is_flag=True, help="Also print the per-case table.")
def eval_command(skill: Path, models: tuple[str, ...], runs: int,
                 mode: Literal["inline", "tool", "agent", "trigger"],  # click.Choice's values
                 placement: Literal["user", "system"], judge: str | None,
                 concurrency: int | None, max_cost: float | None,
                 max_calls: int | None, design: str | None, design_option: tuple[str, ...],
                 cases: str | None, tests: Path | None,
                 temperature: float, max_tokens: int, base_url: str | None,
                 resume: str | None, no_cache: bool, push: bool,
                 repo: str | None, registry_kind: str | None, sandbox: str,
                 skip_code_checks: bool, max_turns: int, max_tool_calls: int,
                 max_agent_tokens: int, agent_wall_time: float, command_timeout: float,
                 harness: str | None, on: str, flavor: str, image: str | None, shards: int,
                 detach: bool, poll: float, as_json: bool, verbose: bool) -> None:
    """Evaluate a skill: each case with and without the skill, on each model.

    Options, keys and the --push destination are checked before the first model call. Ctrl-C
    (or SIGTERM) stops cleanly: finished answers are kept, the run is marked interrupted and
    the command to resume it is printed (exit 130; 143 for SIGTERM).

    \b
    Example:
      hubskills eval hubskills/kernel-builder-cuda-kernels --runs 3
      hubskills eval ./my-skill -m sonnet -m openai/gpt-5-mini --max-cost 2
      hubskills eval ./my-skill -m sonnet --judge opus
      hubskills eval ./pulled-skill --skip-code-checks   # no bubblewrap here
      hubskills eval ./my-skill --mode agent -m sonnet --max-turns 30
      hubskills eval .agents/skills/csv --push   # a pulled skill: results join it
    """
    from registry.providers import default_model_ref

    if harness and mode != "agent":
        raise HubskillsError("--harness runs an agent CLI, which only --mode agent does",
                             hint=f"hubskills eval {skill} --mode agent --harness {harness}")
    skill = click.get_current_context().with_resource(skill_folder(skill, command="eval"))
    settings = Settings.from_env()
    _check_resume(settings, resume, runs)
    if registry_kind is not None and not push:
        out.warn(f"--registry {registry_kind} is used only with --push: nothing will be pushed")
    store, published = push_target(settings, skill, repo, registry_kind, push=push)
    if on == "jobs" and design == "adaptive":
        raise HubskillsError("--design adaptive runs here only: Jobs' shards ask the fixed plan",
                             hint=f"hubskills eval {skill} --on jobs --design fixed")
    config = EvalConfig(
        models=list(models) or [default_model_ref(settings)], runs=runs, mode=mode,
        placement=placement, judge=judge, concurrency=concurrency, max_cost=max_cost,
        max_calls=max_calls, design=design or (None if resume or on == "jobs" else "auto"),
        design_options=_design_options(design_option, skill),
        case_ids=[c.strip() for c in cases.split(",") if c.strip()] if cases else [],
        temperature=temperature, max_tokens=max_tokens, use_cache=not no_cache,
        base_url=base_url, sandbox=sandbox,
        code_checks="skip" if skip_code_checks else "require", harness=harness,
        dependencies=EvalDependencyLoader(settings),
        budget=Budget(max_turns=max_turns, max_tool_calls=max_tool_calls,
                      max_tokens=max_agent_tokens, wall_s=agent_wall_time,
                      command_timeout_s=command_timeout))
    if on == "jobs":
        from registry.cli.jobs import eval_on_jobs

        _cap_on_jobs(config, skill)
        refuse_on_jobs(skill)
        run = eval_on_jobs(skill, config, settings, tests=tests, shards=shards, flavor=flavor,
                           image=image, detach=detach, resume=resume, poll=poll,
                           published=published)
        if run is not None:
            from registry.cli._render import report_run

            _answered(run.manifest, report_run(run.manifest, run.rows, as_json=as_json,
                                               verbose=verbose))
            if store is not None and not run.manifest.is_partial:
                _push(store, skill, run.manifest, run.rows, quiet=as_json, settings=settings)
        return
    with eval_progress() as progress, interrupts() as caught:
        waiting: list[str] | None = []  # round lines said before the run's own first line

        def started(manifest: RunManifest, total: int, cached: int) -> None:
            nonlocal waiting
            progress.start(manifest, total, "" if resume else _estimate(skill, tests, config,
                                                                        total, cached))
            for line in waiting or []:
                out.info(escape(line))
            waiting = None

        def on_round(line: str) -> None:
            if waiting is None:
                out.info(escape(line))
            else:  # the design's round 1 comes before the run says what it is (a walk)
                waiting.append(line)

        result = run_evaluation(skill, config, settings, tests=tests, progress=progress.update,
                                started=started, resume=resume, warn=out.warn,
                                stop=caught.stop, published=published, on_round=on_round)
        for line in waiting or []:  # a run that never said it started: its rounds still said
            out.info(escape(line))
    if result.manifest.status == "interrupted":
        _interrupted(result, as_json=as_json, push=push)
        exit_now(caught.exit_code or 130)
    # The report (numpy, the statistics) loaded while the run first waited on the network:
    # registry.cli.AFTER_FIRST_WAIT.
    from registry.cli._render import report_run

    _answered(result.manifest, report_run(result.manifest, result.rows, as_json=as_json,
                                          verbose=verbose))
    from registry.evaluation.adaptive import saved_line

    if saved := saved_line(result.manifest, result.rows):
        out.info(escape(saved))
    if store is not None:
        _push(store, skill, result.manifest, result.rows, quiet=as_json, settings=settings)


def _cap_on_jobs(config: EvalConfig, skill: Path) -> None:
    """Before any Job starts, what the cost cap refuses: Jobs' shards each hold --max-cost
    (`jobs.plan` does not carry --max-calls yet), so a model without a known price cannot run
    under --max-cost there."""
    from registry.providers import CostCap

    if config.max_calls is not None:
        raise HubskillsError("--max-calls does not reach the shards on Jobs yet",
                             hint=f"hubskills eval {skill} --max-calls {config.max_calls}  "
                                  "# here, without --on jobs")
    CostCap(config.max_cost).refuse_unpriced([*config.models, *filter(None, [config.judge])],
                                             f"hubskills eval {skill}")


# The `EvalConfig` field each option sets, where the names differ (the others share theirs).
_FIELD_OF = {"cases": "case_ids", "no_cache": "use_cache", "skip_code_checks": "code_checks",
             "design_option": "design_options",
             "max_turns": "budget", "max_tool_calls": "budget", "max_agent_tokens": "budget",
             "agent_wall_time": "budget", "command_timeout": "budget"}
# Options outside `EvalConfig` that a resumed run needs again: the resume hint repeats them
# (and the ones that set a field the manifest does not restore; RESTORED_ON_RESUME).
_OUTSIDE_CONFIG_REPEATED = ("tests", "push", "repo", "registry_kind", "as_json", "verbose",
                            "on", "flavor", "image")



def _estimate(skill_dir: Path, tests: Path | None, config: EvalConfig, answers: int,
              cached: int) -> str:
    """`about 54 s at a typical pace; free`: the time and cost of the run's `answers` but the
    `cached` ones, which the response cache answers at once and for nothing (a chat run's: an
    agent's turns are not known before it works). Called once the run's checks passed, so its
    skill and suite load."""
    if config.mode == "agent":
        return ""
    if cached >= answers:
        return "all of them cached: nothing to ask, free"
    from registry.evaluation.estimate import cost_text, plan, time_text
    from registry.format.skill import load_skill
    from registry.format.suite import load_suite, suite_path

    skill = load_skill(skill_dir)
    suite = load_suite(tests or suite_path(skill.path), skill_dir=skill.path)
    cases = suite.select(config.case_ids).cases if config.case_ids else suite.cases
    p = plan(skill, cases, config).share(answers - cached)
    held = f"{cached} of them cached; the rest " if cached else ""
    return f"{held}{time_text(p, config.max_tokens)}; {cost_text(p)}"

def _answered(manifest, summaries) -> None:
    """A run where no model got a sample graded measured nothing: it fails (exit 1), with the
    first cause, and nothing is pushed."""
    if not summaries or not all(s.failed for s in summaries):
        return
    first = next(e.first_transport or e.first_check for e in (s.errors for s in summaries))
    raise HubskillsError(f"no model answered: every sample of run {manifest.run_id} was lost to "
                         f"an error ({first})",
                         hint=f"hubskills runs show {manifest.run_id} -v   # each sample's "
                              "reason; once fixed, " + _resume_command(manifest.run_id))


def _interrupted(result, *, as_json: bool, push: bool) -> None:
    from registry.results.report import summarize

    manifest = result.manifest
    if as_json:
        out.as_json({"manifest": manifest.model_dump(),
                     "summaries": [s.to_dict() for s in summarize(result.rows, manifest)]})
    out.info(f"stopped: run {manifest.run_id} is marked interrupted; {len(result.rows)} of "
             f"{manifest.samples_planned} answers are kept"
             + ("; nothing was pushed" if push else ""))
    out.hint(_resume_command(manifest.run_id) + "  # finish it; no answer is asked twice")


def _resume_command(run_id: str) -> str:
    """This command line with `--resume RUN_ID`, minus what the run's manifest restores."""
    ctx = click.get_current_context()
    words = ["hubskills", "eval", str(ctx.params["skill"])]
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if (not _repeated_on_resume(param.name or "") or value in (None, False)
                or value == param.default or not isinstance(param, click.Option)):
            continue
        flag = max(param.opts, key=len)
        words += [flag] if value is True else [flag, str(value)]
    return shlex.join([*words, "--resume", run_id])


def _repeated_on_resume(name: str) -> bool:
    """Whether the command that resumes a run repeats option `name` (when it was given)."""
    from registry.evaluation.run_manifest import RESTORED_ON_RESUME

    field = _FIELD_OF.get(name, name)
    if field in ("design", "design_options"):  # a resumed run keeps its design
        return False
    if field in {f.name for f in fields(EvalConfig)}:
        return field not in RESTORED_ON_RESUME
    return name in _OUTSIDE_CONFIG_REPEATED


def _check_resume(settings, resume: str | None, runs: int) -> None:
    """Refuse `--resume ID --runs N` when N is not the run's own count: a resumed run finishes
    the repeats it started with (silently ignoring `--runs` would misreport what ran)."""
    given = click.get_current_context().get_parameter_source("runs")
    if resume is None or given is click.core.ParameterSource.DEFAULT:
        return
    started = read_manifest(settings.runs_dir, resume).runs
    if runs != started:
        raise HubskillsError(f"--runs {runs} cannot change run {resume}: it was started with "
                             f"--runs {started}, and a resumed run finishes those",
                             hint=_resume_command(resume) + "  # or start a new run with "
                                                            f"--runs {runs}")


def _push(store, skill: Path, manifest, rows, *, quiet: bool, settings) -> None:
    from registry.publishing.push import push_run

    pushed = push_run(store, manifest, rows, skill_dir=skill, via="cli", settings=settings)
    where, card_note = pushed.path, pushed.card_note
    if pushed.pending:  # said even with --json: the rows are not in the dataset yet
        out.warn(f"you ({pushed.produced_by}) cannot write the results dataset, so run "
                 f"{manifest.run_id} was proposed for review as a pull request: "
                 f"{pushed.pr_url} (unreviewed until its owner merges it; `hubskills "
                 "leaderboard --pending` shows it)")
    elif not quiet:
        subset = f" (a subset run: {len(manifest.case_ids)} of {manifest.suite_cases} cases, " \
                 "listed unranked)" if manifest.subset else ""
        out.result(f"Pushed {pushed.rows} rows of {manifest.skill_repo} v{manifest.skill_version}"
                   f" to {where}{subset}"
                   + (f"; replayed: {pushed.verification}" if pushed.verification else ""))
    if card_note:
        out.warn(f"the card of {manifest.skill_repo} was not updated: {escape(card_note)}")
