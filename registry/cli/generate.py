"""`hubskills generate`: a teacher writes a skill and its suite, students are measured."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._path_arg import AGENT_TRACES, ExistingPath
from registry.cli._progress import StepProgress
from registry.config import Settings
from registry.generate.report import GenerateReport
from registry.providers.pricing import is_free
from registry.results.display import count, lift_interval, pct, usd


@click.command("generate")
@click.argument("task", required=False)
@click.option("--improve", "improve", type=ExistingPath(
    "folder", retry="hubskills generate --improve {path}", otherwise="{new}"),
              default=None, help="A skill folder to improve (as --from FOLDER; TASK is then "
              "optional).")
@click.option("--feedback", default=None, metavar="RUN_ID",
              help="With --improve: give the teacher the reviewers' comments and marked cases "
              "of this reviewed run (hubskills review-outputs RUN_ID); the new version "
              "records it.")
@click.option("--from", "sources", multiple=True, type=ExistingPath(
    "path", retry="hubskills generate TASK --from {path}",
    otherwise="hubskills trace show --help  # the traces --from reads (or a skill folder)",
    look_in=AGENT_TRACES),
              help="Agent trace (Claude Code/Codex JSONL, markdown) or a skill folder to "
              "improve (repeatable).")
@click.option("--example", "examples", multiple=True, help="An example request (repeatable).")
@click.option("--teacher", default=None,
              help="Model that writes. Default: opus, else an hf/ model, else embedded.")
@click.option("--student", "students", multiple=True,
              help="Model measured with and without the skill (repeatable). Default: the "
              "teacher, plus the embedded model when installed.")
@click.option("--tests", "n_tests", default=12, show_default=True, help="Test cases to write.")
@click.option("--rounds", default=3, show_default=True, help="Refinement rounds at most.")
@click.option("--runs", default=2, show_default=True, help="Eval repeats per case and arm.")
@click.option("--mode", type=click.Choice(["inline", "tool"]), default="inline",
              show_default=True, help="How students get the skill in the eval.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("."),
              show_default=True, help="Folder to save <name>/ in.")
@click.option("--name", default=None,
              help="The skill's name (default: the teacher picks one). Given, <out>/<name> is "
              "checked before the teacher is called.")
@click.option("--force", is_flag=True, help="Replace an existing <out>/<name> folder.")
@click.option("--no-eval", is_flag=True, help="Draft and suite only: no verification, no eval.")
@click.option("--base-url", default=None, help="Server for local/<model> references.")
@click.option("--max-tokens", type=int, default=None, help="Longest teacher reply (tokens).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report on stdout.")
def generate_command(task: str | None, improve: Path | None, feedback: str | None,
                     sources: tuple[Path, ...], examples: tuple[str, ...],
                     teacher: str | None, students: tuple[str, ...], n_tests: int, rounds: int,
                     runs: int, mode: Literal["inline", "tool"],  # click.Choice's values
                     out_dir: Path, name: str | None, force: bool, no_eval: bool,
                     base_url: str | None, max_tokens: int | None, as_json: bool) -> None:
    """Generate a skill and a test suite with a teacher model, measure it on students, refine.

    The output folder, the students' keys and what --mode needs are checked before the
    teacher is called (and <out>/<name> too, with --name). Progress goes to stderr: a line
    per step, and a line every ten seconds while a step runs long.

    \b
    Example:
      hubskills generate "Clean messy CSV files" --student haiku --name csv-clean
      hubskills generate "Fix flaky fixtures" --from ~/.claude/projects/x/s.jsonl
      hubskills generate "Improve it" --from skills/my-skill --out skills --force
      hubskills generate "Parse CSV" --teacher embedded/smollm2-135m --no-eval
      hubskills generate --improve skills/x --feedback RUN_ID --out skills --force
    """
    from registry.errors import HubskillsError
    from registry.generate.pipeline import generate_skill

    if improve is not None:
        sources = (improve, *sources)
        task = task or (f"Improve the skill in {improve.name}"
                        + (" using the reviewers' feedback" if feedback else ""))
    if not task:
        raise HubskillsError("name what to teach (TASK), or a skill folder with --improve",
                             hint='hubskills generate "Clean messy CSV files with pandas"')

    with StepProgress() as steps:
        report = generate_skill(
            task, settings=Settings.from_env(), progress=steps.say, base_url=base_url,
            sources=list(sources), examples=list(examples), teacher=teacher,
            students=list(students), n_tests=n_tests, rounds=rounds, runs=runs, mode=mode,
            out_dir=out_dir, force=force, no_eval=no_eval, max_tokens=max_tokens, name=name,
            feedback=feedback)
    if as_json:
        out.as_json(report.to_dict())
    else:
        render_generate_report(report, said=steps.said)


def render_generate_report(report: GenerateReport, *, said: set[str] | None = None) -> None:
    """The final report: students' baseline → with skill, suite, costs, warnings, diff."""
    rounds = max(0, len(report.rounds) - 1)
    best_round = [] if report.best_round is None else [f"best: round {report.best_round}"]
    out.joined([f"[bold]{escape(report.name)}[/] saved to {escape(str(report.path))}",  # each
                f"teacher {escape(report.teacher)}", count(rounds, "refinement round"),  # whole
                *best_round])  # on a line: `· 0` ended one, `refinement rounds` began the next
    verified = "verified" if report.suite_verified else "NOT verified"
    out.result(f"suite: {count(report.cases, 'case')} ({verified}), {len(report.dropped)} dropped")
    for case_id, reason in report.dropped[:10]:
        out.result(f"  dropped {escape(case_id)}: {escape(reason)}")
    best = report.best()
    if best is not None:
        out.table(["student", "baseline [95% CI]", "with skill [95% CI]", "lift pts [95% CI]",
                   "verdict", "tokens in/out", "cost"], [_student_row(s) for s in best.students],
                  title=f"round {best.round} (run {best.run_id})")
    free = next((s for s in report.students if is_free(s)), None) \
        if all(is_free(s) for s in report.students) else None
    evals = usd(report.eval_cost_usd, free) if report.rounds else "none"
    out.joined([f"teacher: {report.teacher_input_tokens} in / {report.teacher_output_tokens} "
                f"out tokens, {usd(report.teacher_cost_usd, report.teacher)}"
                + (" with suite verification" if report.suite_verified else ""),
                f"evaluations: {evals}", f"runs: {', '.join(report.run_ids) or 'none'}"], "; ")
    for warning in report.warnings:  # each once: those said while it ran are not repeated
        if f"warning: {warning}" not in (said or ()):
            out.warn(escape(warning))
    if report.diff:
        out.result("[bold]changes[/]")
        out.out.print(out.visible(report.diff), markup=False, highlight=False)


def _student_row(s) -> tuple[str, ...]:
    ci = lambda lo, hi: f"[{pct(lo)}, {pct(hi)}]"  # noqa: E731
    return (s.model, f"{pct(s.baseline)} {ci(*s.baseline_ci)}", f"{pct(s.skill)} "
            f"{ci(*s.skill_ci)}", lift_interval(s.lift, s.lo, s.hi), s.verdict,
            f"{s.input_tokens}/{s.output_tokens}", usd(s.cost_usd, s.model))
