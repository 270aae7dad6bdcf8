"""`hubskills ci`: re-evaluate the skills a change touched; exit 1 when one regressed."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._progress import eval_progress
from registry.config import Settings

if TYPE_CHECKING:
    from registry.jobs.launches import Undone


@click.command("ci")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--base", default=None, metavar="REF",
              help="Git ref to compare with (default: origin/main, else HEAD~1).")
@click.option("--min-lift", type=click.FloatRange(-100, 100), default=None, metavar="POINTS",
              help="Fail unless a lift's lower bound exceeds this many points (e.g. 0).")
@click.option("--model", "-m", "models", multiple=True,
              help="Student model reference (repeatable). Default: embedded/smollm2-135m.")
@click.option("--runs", type=click.IntRange(min=1), default=3, show_default=True,
              help="Independent repeats per case.")
@click.option("--judge", default=None,
              help="Model that grades judge and pairwise checks and assertions.")
@click.option("--base-url", default=None, help="Server for local/<model> references.")
@click.option("--registry", "registry_kind", default=None,
              help="Where published versions are looked up: local or hub.")
@click.option("--namespace", default=None, metavar="NS",
              help="Compare each skill with NS/<name> only (default: yours, hubskills, then "
                   "the one skill of that name).")
@click.option("--skip-code-checks", is_flag=True, help="Leave python and exec checks out.")
@click.option("--on", "where", type=click.Choice(["local", "jobs"]), default="local",
              show_default=True, help="Run the evaluations here or as Hugging Face Jobs.")
@click.option("--summary", type=click.Path(path_type=Path), default=None,
              help="Write the Markdown summary here.")
@click.option("--step-summary", type=click.Path(path_type=Path), default=None, hidden=True,
              envvar="GITHUB_STEP_SUMMARY", help="GitHub's step summary file (appended).")
@click.option("--junit", type=click.Path(path_type=Path), default=None,
              help="Write a JUnit XML report here (one testcase per skill x model).")
def ci_command(paths: tuple[Path, ...], base: str | None, min_lift: float | None,
               models: tuple[str, ...], runs: int, judge: str | None, base_url: str | None,
               registry_kind: str | None, namespace: str | None, skip_code_checks: bool,
               where: str, summary: Path | None, step_summary: Path | None,
               junit: Path | None) -> None:
    """Re-evaluate the skills changed since a git ref; exit 1 when one regressed.

    Each changed skill (a folder with SKILL.md under PATHS, default the whole checkout) is
    evaluated against its baseline and against its newest published version, on the same suite.
    That version is NS/<name> with --namespace; else <your namespace>/<name>, hubskills/<name>,
    then the one skill of that name a search finds (several are not guessed between); none found
    is said, with where it was looked for. It fails when its verdict is "hurts", its lift's
    lower bound is not above --min-lift, or it is significantly worse than the published
    version; one that `hubskills validate` rejects or whose signature is stale fails before any
    model call, and the others are still evaluated. Unchanged skills make no model call. The
    Markdown summary goes to $GITHUB_STEP_SUMMARY when set (and --summary).
    Ctrl-C or SIGTERM stops it without a verdict (exit 130; 143): with --on jobs, the Jobs
    being started are cancelled, those already started go on (the command to collect them is
    printed).

    \b
    Example:
      hubskills ci --base origin/main -m openai/gpt-5-mini --junit ci.xml
      hubskills ci skills/ --min-lift 0 --summary ci.md
      hubskills ci skills/ --namespace acme --junit ci.xml
    """
    from registry.cli._signals import exit_now, interrupts
    from registry.gate.changes import find_changes
    from registry.gate.published import check_namespace
    from registry.gate.report import headline
    from registry.gate.run import run_gate

    if namespace is not None:
        check_namespace(namespace)
    settings = Settings.from_env()
    changes = find_changes(list(paths), base, cwd=Path.cwd())
    config = _config(settings, changes.changed, models=list(models), runs=runs, judge=judge,
                     base_url=base_url, skip_code_checks=skip_code_checks)
    store = _store(settings, registry_kind) if changes.changed else None
    with interrupts() as caught:
        evaluate = _jobs_evaluate(caught) if where == "jobs" else _local_evaluate(caught.stop)
        try:
            result = run_gate(changes, config, settings, store,
                              min_lift=None if min_lift is None else min_lift / 100,
                              evaluate=evaluate, announce=lambda line: out.info(f"ci: {line}"),
                              namespace=namespace)
        except _Stopped as stopped:
            _say_stopped(stopped, caught.stop.reason or "a signal")
            exit_now(caught.exit_code or 130)
    _write_reports(result, summary=summary, step_summary=step_summary, junit=junit)
    _render(result)
    if not result.passed:
        out.error(headline(result))
        raise SystemExit(1)


def _config(settings: Settings, changed: list[Path], *, models: list[str], runs: int,
            judge: str | None, base_url: str | None, skip_code_checks: bool) -> Any:
    """The evaluation settings (None when nothing changed: the engine is not even loaded)."""
    if not changed:
        return None
    from registry.evaluation.config import EvalConfig
    from registry.providers import default_model_ref

    return EvalConfig(models=models or [default_model_ref(settings)], runs=runs, judge=judge,
                      base_url=base_url, via="cli",
                      code_checks="skip" if skip_code_checks else "require")


def _store(settings: Settings, registry_kind: str | None) -> Any:
    from registry.registries import get_store

    return get_store(settings, registry_kind)


class _Stopped(Exception):  # noqa: N818 - control flow: a signal ended an evaluation
    """What a signal left: ``said`` ends the error line, ``hint`` is the next command;
    ``undone`` what the clean-up of Jobs being started did."""

    def __init__(self, said: str, hint: str | None = None, undone: Undone | None = None) -> None:
        super().__init__(said)
        self.said, self.hint, self.undone = said, hint, undone


def _say_stopped(stopped: _Stopped, reason: str) -> None:
    from registry.cli._jobs_progress import say_undone

    out.error(f"ci stopped by {reason}: no verdict; {stopped.said}")
    if stopped.undone is not None:
        say_undone(stopped.undone, by=reason)
    if stopped.hint:
        out.hint(stopped.hint)


def _local_evaluate(stop: Any) -> Any:
    """`run_evaluation` with the CLI's progress display (one per evaluated skill version),
    stopped by `stop` (Ctrl-C, SIGTERM): then no further skill is evaluated."""

    def evaluate(skill_dir: Path, config: Any, settings: Settings, **kw: Any) -> Any:
        from dataclasses import replace

        from registry.cli._dependencies import EvalDependencyLoader
        from registry.evaluation.engine import run_evaluation

        config = replace(config, dependencies=EvalDependencyLoader(settings))  # their skill arm
        with eval_progress() as progress:
            run = run_evaluation(skill_dir, config, settings, progress=progress.update,
                                 started=lambda manifest, total, _cached: progress.start(
                                     manifest, total), warn=out.warn, stop=stop, **kw)
        if run.manifest.status == "interrupted":
            run_id = run.manifest.run_id
            raise _Stopped(f"run {run_id} is kept as interrupted",
                           f"hubskills runs show {run_id}  # what it answered; run "
                           "`hubskills ci` again for the verdict")
        return run

    return evaluate


def _jobs_evaluate(caught: Any) -> Any:
    """Each evaluation as Hugging Face Jobs (`registry.jobs`), the same `EvalRun` back.

    While its Jobs are started and followed, SIGINT and SIGTERM raise `KeyboardInterrupt` (as
    Python's own Ctrl-C does; `_raising`), so the launch's guard cancels the Jobs being
    started, the one whose create is in flight too (`jobs.launches`), a second signal cutting
    that clean-up short is said, and once they are all started they go on (as for `eval --on
    jobs`), the command that collects them said. A signal before, say between two skills,
    starts no further Job.
    """
    from registry.jobs import run_on_jobs
    from registry.jobs.launches import LaunchInterrupted

    def on_jobs(skill_dir: Path, config: Any, settings: Settings, **kw: Any) -> Any:
        if caught.stop.is_set():
            raise _Stopped("no further Job was started")
        runs: list[str] = []

        def started(manifest: Any, total: int) -> None:
            runs.append(manifest.run_id)
            out.info(f"ci: run {manifest.run_id}: {total} answers to get on Hugging Face Jobs")

        try:
            with _raising(caught):
                return run_on_jobs(skill_dir, config, settings, started=started, **kw)
        except LaunchInterrupted as stopped:
            raise _Stopped("its Jobs were being started", undone=stopped.undone) from None
        except KeyboardInterrupt:
            if not runs:  # before the launch guard (the uploads): no Job was created
                raise _Stopped("no Job was started") from None
            raise _Stopped(f"the Jobs of run {runs[0]} go on",
                           f"hubskills runs show {runs[0]}  # collect it; or: hubskills jobs "
                           f"cancel {runs[0]}") from None

    return on_jobs


@contextmanager
def _raising(caught: Any) -> Iterator[None]:
    """SIGINT and SIGTERM raise `KeyboardInterrupt` while the block runs (the first one also
    requests ``caught``'s stop and sets its exit code: 130, or 143 for SIGTERM); main thread
    only, like `interrupts`."""
    from registry.cli._signals import EXIT_CODES

    def handle(signum: int, _frame: FrameType | None) -> None:
        caught.exit_code = caught.exit_code or EXIT_CODES[signal.Signals(signum)]
        caught.stop.request(signal.Signals(signum).name)
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, handle) for sig in EXIT_CODES}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _write_reports(result: Any, *, summary: Path | None, step_summary: Path | None,
                   junit: Path | None) -> None:
    from registry._io import atomic_write_text
    from registry.gate.report import junit as junit_xml
    from registry.gate.report import markdown

    text = markdown(result)
    if step_summary is not None:
        with step_summary.open("a", encoding="utf-8") as handle:
            handle.write(text)
    if summary is not None:
        atomic_write_text(summary, text)
    if junit is not None:
        atomic_write_text(junit, junit_xml(result))


def _render(result: Any) -> None:
    from registry.gate.report import NOT_EVALUATED, headline, versus_text
    from registry.results.display import lift_interval, pct

    if result.checks or result.refused:
        out.table(["skill", "model", "baseline", "with skill", "lift [95% CI]", "verdict",
                   "vs published", "gate"],
                  [*((escape(r.folder), "-", "-", "-", "-", NOT_EVALUATED, "-", "FAIL")
                     for r in result.refused),
                   *((escape(c.folder), escape(c.model), pct(c.lift.baseline.pass_rate),
                      pct(c.lift.skill.pass_rate), lift_interval(c.lift.lift, c.lift.lo,
                                                                 c.lift.hi),
                      c.lift.verdict, escape(versus_text(c)), "pass" if c.passed else "FAIL")
                     for c in result.checks)], whole="a wider terminal or --summary FILE")
    for folder, note in dict.fromkeys((c.folder, n) for c in result.checks for n in c.notes):
        out.result(f"NOTE {escape(folder)}: {escape(note)}")
    if result.checks or result.refused:  # said in the headline when nothing else changed
        for folder in result.removed:
            out.result(f"NOTE {escape(folder)}: the change removes this skill")
    for refused in result.refused:
        for why in refused.reasons:
            out.result(f"FAIL {escape(refused.folder)} ({NOT_EVALUATED}): {escape(why)}")
    for check in result.failed():
        for why in check.failures:
            out.result(f"FAIL {escape(check.folder)} on {escape(check.model)}: {escape(why)}")
    if result.refused:
        out.hint(f"{result.refused[0].hint}  # why, locally; nothing was asked of a model for it")
    if result.passed:
        out.result(headline(result))
