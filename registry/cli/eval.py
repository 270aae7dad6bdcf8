"""`hubskills eval` and `hubskills runs`: run an A/B evaluation and read saved runs."""

from __future__ import annotations

import shlex
from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._render import render_summaries
from registry.cli._signals import exit_now, interrupts
from registry.config import Settings
from registry.evaluation.compare import compare_runs
from registry.evaluation.engine import EvalConfig, latest_rows, run_evaluation
from registry.evaluation.report import per_case_table, summarize
from registry.evaluation.results import list_runs, read_manifest, read_rows
from registry.sandbox import BACKENDS


@click.command("eval")
@click.argument("skill", type=click.Path(path_type=Path))
@click.option("--model", "-m", "models", multiple=True,
              help="Student model reference (repeatable). Default: embedded/smollm2-135m.")
@click.option("--runs", type=click.IntRange(min=1), default=3, show_default=True,
              help="Independent repeats per case.")
@click.option("--mode", type=click.Choice(["inline", "tool"]), default="inline",
              show_default=True, help="inline: SKILL.md in context; tool: load_skill tool.")
@click.option("--placement", type=click.Choice(["user", "system"]), default="user",
              show_default=True, help="Where inline mode puts the skill.")
@click.option("--judge", default=None, help="Model that grades judge checks and assertions.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None,
              help="Parallel calls per provider.")
@click.option("--max-cost", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop cleanly past this many USD.")
@click.option("--cases", default=None, help="Comma-separated case ids to run.")
@click.option("--tests", type=click.Path(path_type=Path), default=None,
              help="Suite file in any supported format (default: SKILL/evals/evals.json).")
@click.option("--temperature", type=click.FloatRange(0, 2), default=0.7, show_default=True)
@click.option("--max-tokens", type=click.IntRange(min=1), default=512, show_default=True)
@click.option("--base-url", default=None, help="Server for local/<model> references.")
@click.option("--resume", default=None, metavar="RUN_ID", help="Finish an interrupted run.")
@click.option("--no-cache", is_flag=True, help="Call the models even for cached requests.")
@click.option("--push", is_flag=True, help="Append the run to the registry's results dataset.")
@click.option("--registry", "registry_kind", default=None, help="local or hub (with --push).")
@click.option("--sandbox", type=click.Choice(["auto", *BACKENDS]), default="auto",
              show_default=True, envvar="HUBSKILLS_SANDBOX",
              help="Where python/exec checks run: auto (bwrap where it works), bwrap, or none "
                   "(no isolation; only for a folder of your own that was not pulled).")
@click.option("--skip-code-checks", is_flag=True,
              help="Leave python and exec checks out (the report and the run say so).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary on stdout.")
@click.option("-v", "--verbose", is_flag=True, help="Also print the per-case table.")
def eval_command(skill: Path, models: tuple[str, ...], runs: int, mode: str, placement: str,
                 judge: str | None, concurrency: int | None, max_cost: float | None,
                 cases: str | None, tests: Path | None, temperature: float, max_tokens: int,
                 base_url: str | None, resume: str | None, no_cache: bool, push: bool,
                 registry_kind: str | None, sandbox: str, skip_code_checks: bool,
                 as_json: bool, verbose: bool) -> None:
    """Evaluate a skill: each case with and without the skill, on each model.

    Options, keys and the --push destination are checked before the first model call. Ctrl-C
    (or SIGTERM) stops cleanly: finished answers are kept, the run is marked interrupted and
    the command to resume it is printed (exit 130; 143 for SIGTERM).

    \b
    Example:
      hubskills eval skills/kernel-builder-cuda-kernels --runs 3
      hubskills eval ./my-skill -m sonnet -m openai/gpt-5-mini --judge opus --max-cost 2
      hubskills eval ./pulled-skill --skip-code-checks   # no bubblewrap here
    """
    from registry.providers import default_model_ref

    settings = Settings.from_env()
    config = EvalConfig(
        models=list(models) or [default_model_ref(settings)], runs=runs, mode=mode,
        placement=placement, judge=judge, concurrency=concurrency, max_cost=max_cost,
        case_ids=[c.strip() for c in cases.split(",") if c.strip()] if cases else [],
        temperature=temperature, max_tokens=max_tokens, use_cache=not no_cache,
        base_url=base_url, sandbox=sandbox,
        code_checks="skip" if skip_code_checks else "require")
    store = _push_store(settings, registry_kind, push=push)  # before any model call
    with out.eval_progress() as progress, interrupts() as caught:
        result = run_evaluation(skill, config, settings, tests=tests, progress=progress.update,
                                started=progress.start, resume=resume, warn=out.warn,
                                stop=caught.stop)
    if result.manifest.status == "interrupted":
        _interrupted(result, as_json=as_json, push=push)
        exit_now(caught.exit_code or 130)
    _report(result.manifest, result.rows, as_json=as_json, verbose=verbose)
    if store is not None:
        _push(store, result.manifest, result.rows, quiet=as_json)


# Options a resumed run does not take from its manifest: the resume hint repeats them.
_KEPT_ON_RESUME = ("tests", "base_url", "concurrency", "max_cost", "no_cache", "push",
                   "registry_kind", "sandbox", "skip_code_checks", "as_json", "verbose")


def _interrupted(result, *, as_json: bool, push: bool) -> None:
    manifest = result.manifest
    if as_json:
        out.as_json({"manifest": manifest.model_dump(),
                     "summaries": [s.to_dict() for s in summarize(result.rows)]})
    expected = len(manifest.case_ids) * 2 * len(manifest.models) * manifest.runs
    out.info(f"stopped: run {manifest.run_id} is marked interrupted; {len(result.rows)} of "
             f"{expected} answers are kept" + ("; nothing was pushed" if push else ""))
    out.hint(_resume_command(manifest.run_id) + "  # finish it; no answer is asked twice")


def _resume_command(run_id: str) -> str:
    """This command line with `--resume RUN_ID`, minus what the run's manifest restores."""
    ctx = click.get_current_context()
    words = ["hubskills", "eval", str(ctx.params["skill"])]
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if (param.name not in _KEPT_ON_RESUME or value in (None, False)
                or value == param.default or not isinstance(param, click.Option)):
            continue
        flag = max(param.opts, key=len)
        words += [flag] if value is True else [flag, str(value)]
    return shlex.join([*words, "--resume", run_id])


def _push_store(settings, registry_kind: str | None, *, push: bool):
    """The store `--push` will write to, checked now: an unknown registry, a missing token or
    an unwritable folder fails before any model is called, not after the run."""
    from registry.stores import get_store

    if registry_kind is None and not push:
        return None
    store = get_store(settings, registry_kind)
    if not push:
        out.warn(f"--registry {registry_kind} is used only with --push: nothing will be pushed")
        return None
    store.check_writable()
    return store


def _report(manifest, rows, *, as_json: bool, verbose: bool) -> None:
    summaries = summarize(rows)
    if as_json:
        out.as_json({"manifest": manifest.model_dump(),
                     "summaries": [s.to_dict() for s in summaries]})
        return
    render_summaries(manifest, summaries)
    if (manifest.code_checks or "").startswith("skipped"):
        out.warn(f"code checks (python, exec) {manifest.code_checks}: they were left out "
                 "of every score above")
    if verbose:
        for summary in summaries:
            _case_table(rows, summary.model)


def _case_table(rows, model: str) -> None:
    def marks(values: list) -> str:
        return "".join("✓" if v else ("E" if v is None else "✗") for v in values)

    out.table(["case", "baseline", "with skill", "status (skill)", "why it failed"],
              [(escape(e["case"]), marks(e["baseline"]), marks(e["skill"]), e["skill_status"],
                escape((e["why"] or _error_text(rows, model, e["case"]))[:80]))
               for e in per_case_table(rows, model)],
              title=escape(model))


def _error_text(rows, model: str, case_id: str) -> str:
    """Why a case's row is an error (an `E` cell), when no failing check says why."""
    errors = sorted((r for r in rows if r.model == model and r.case_id == case_id and r.is_error),
                    key=lambda r: (r.arm != "skill", r.repeat))
    for row in errors:
        reason = row.error or next((c.reason for c in row.checks if c.passed is None), "")
        if reason:
            return reason if row.arm == "skill" else f"{row.arm}: {reason}"
    return ""


def _push(store, manifest, rows, *, quiet: bool) -> None:
    from registry.stores.push import push_run

    pushed = push_run(store, manifest, rows)
    if not quiet:
        out.result(f"Pushed {pushed.rows} rows to {pushed.path}")


@click.group("runs", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def runs_group(ctx: click.Context, as_json: bool) -> None:
    """List saved evaluation runs; `runs show ID`, `runs compare A B`."""
    if ctx.invoked_subcommand:
        return
    manifests = list_runs(Settings.from_env().runs_dir)
    if as_json:
        out.as_json([m.model_dump() for m in manifests])
        return
    out.table(["run", "skill", "version", "models", "runs", "status", "started"],
              [(m.run_id, m.skill_name, m.skill_version or "", ", ".join(m.models), m.runs,
                m.status, m.started_at) for m in manifests], title="Evaluation runs")


@runs_group.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
@click.option("-v", "--verbose", is_flag=True, help="Also print the per-case table.")
def runs_show_command(run_id: str, as_json: bool, verbose: bool) -> None:
    """Show a saved run's summary."""
    settings = Settings.from_env()
    manifest = read_manifest(settings.runs_dir, run_id)
    rows = latest_rows(read_rows(settings.runs_dir, run_id))
    _report(manifest, rows, as_json=as_json, verbose=verbose)


@runs_group.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--json", "as_json", is_flag=True)
def runs_compare_command(run_a: str, run_b: str, as_json: bool) -> None:
    """Per-case improvements and regressions from run A to run B (e.g. two skill versions)."""
    comparison = compare_runs(Settings.from_env().runs_dir, run_a, run_b)
    if as_json:
        out.as_json(comparison)
        return
    out.result(f"{run_a} → {run_b}: {comparison['summary']}")
    out.table(["model", "case", "A (skill)", "B (skill)", "change"],
              [(c["model"], c["case"], f"{c['a']:.0%}", f"{c['b']:.0%}", c["change"])
               for c in comparison["cases"] if c["change"] != "same"])
