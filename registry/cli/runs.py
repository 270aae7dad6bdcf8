"""`hubskills runs`: list saved evaluation runs, show one (a sample's agent transcript too),
compare two."""

from __future__ import annotations

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._render import manifest_json, render_transcript, report_run
from registry.cli._trigger_eval import trigger_report
from registry.config import Settings
from registry.errors import HubskillsError, RunNotFound
from registry.results import display
from registry.results.compare import compare_runs
from registry.results.runs import (
    RunManifest,
    latest_rows,
    list_runs,
    read_manifest,
    read_rows,
    read_transcripts,
)


@click.group("runs", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Every run's manifest as JSON.")
@click.pass_context
def runs_group(ctx: click.Context, as_json: bool) -> None:
    """List saved evaluation runs; `runs show ID`, `runs compare A B`."""
    if ctx.invoked_subcommand:
        return
    manifests = list_runs(Settings.from_env().runs_dir)
    if as_json:
        out.as_json([manifest_json(m) for m in manifests])
        return
    if not manifests:
        out.result("No evaluation runs yet.")
        out.hint("hubskills eval hubskills/agent-skill-md --runs 1 --cases allowed-keys")
        return
    out.table(["run", "skill", "version", "models", "cases × runs", "status", "started"],
              [(m.run_id, m.skill_repo or m.skill_name, m.skill_version or "",
                ", ".join(m.models), f"{len(m.case_ids)}"
                + (f" of {m.suite_cases}" if m.subset else "")
                + (f" × ≤{m.runs}" if m.adaptive else f" × {m.runs}"),
                escape(m.label), m.started_at) for m in manifests], title="Evaluation runs",
              drop=("started", "version", "cases × runs"))


@trigger_report
@runs_group.command("show")
@click.argument("run_id")
@click.option("--case", "case_id", default=None,
              help="Print this case's answer and its checks (agent mode: its transcript: "
                   "messages, tool calls, diff).")
@click.option("--arm", type=click.Choice(["baseline", "skill"]), default="skill",
              show_default=True, help="With --case: which arm's transcript.")
@click.option("--repeat", type=click.IntRange(min=0), default=0, show_default=True,
              help="With --case: which repeat.")
@click.option("--json", "as_json", is_flag=True, help="The manifest and summaries as JSON.")
@click.option("-v", "--verbose", is_flag=True, help="Also print the per-case table.")
@click.option("--poll", type=click.FloatRange(min=0.05), default=5.0, hidden=True)
def runs_show_command(run_id: str, case_id: str | None, arm: str, repeat: int, as_json: bool,
                      verbose: bool, poll: float) -> None:
    """Show a saved run's summary (a run on Hugging Face Jobs: once its shards end), or with
    --case one sample's agent transcript.

    \b
    Example:
      hubskills runs show 20261122-103000-a1b2c3 --case gelu-h100 --arm baseline
    """
    from registry.cli.jobs import collect_if_remote

    settings = Settings.from_env()
    collect_if_remote(settings, run_id, poll)
    manifest = saved_manifest(settings, run_id)
    if case_id is not None:
        _show_transcripts(run_id, manifest, case_id, arm, repeat, as_json=as_json)
        return
    rows = latest_rows(read_rows(settings.runs_dir, run_id))
    report_run(manifest, rows, as_json=as_json, verbose=verbose)
    from registry.evaluation.adaptive import saved_line

    if not as_json and (saved := saved_line(manifest, rows)):  # as eval said it (a walk)
        out.info(escape(saved))


def saved_manifest(settings: Settings, run_id: str) -> RunManifest:
    """The manifest of this machine's run `run_id`.

    Raises:
        RunNotFound: no such run here; when the registry's results hold it (`info` and
            `leaderboard` name such runs), the hint is the command that reads it from there.
    """
    try:
        return read_manifest(settings.runs_dir, run_id)
    except RunNotFound as err:
        skill = _registry_skill(settings, run_id)
        if skill is None:
            raise
        raise RunNotFound(f"{err.message}: it is a run of {skill} in the {settings.registry} "
                          "registry's results, not one made on this machine",
                          hint=f"hubskills verify {skill} --run {run_id}  # reads and replays "
                               "it from there") from err


def _registry_skill(settings: Settings, run_id: str) -> str | None:
    """The skill whose results in the configured registry hold run `run_id` (None: none, or
    the registry cannot be read)."""
    from registry.registries import get_store

    try:
        frame = get_store(settings).results_frame()
    except HubskillsError:
        return None
    if "run_id" not in frame or "skill_repo" not in frame:
        return None
    found = frame.loc[frame["run_id"] == run_id, "skill_repo"].dropna()
    return str(found.iloc[0]) if len(found) else None


def _show_answers(run_id: str, case_id: str, arm: str, repeat: int, *, as_json: bool) -> None:
    """A chat or tool run's stored answers to one case, arm and repeat, with their checks (an
    author's walk: only the review page or rows.jsonl showed them)."""
    rows = [r for r in latest_rows(read_rows(Settings.from_env().runs_dir, run_id))
            if r.case_id == case_id and r.arm == arm and r.repeat == repeat]
    if not rows:
        raise HubskillsError(f"run {run_id}: no {arm} answer to case {case_id!r}, repeat "
                             f"{repeat}", hint=f"hubskills runs show {run_id} -v   # lists its "
                                               "cases")
    if as_json:
        out.as_json([r.model_dump(include={"model", "case_id", "arm", "repeat", "passed",
                                           "error", "output", "checks"}) for r in rows])
        return
    for row in sorted(rows, key=lambda r: r.model):
        state = "error" if row.is_error else "passed" if row.passed else "failed"
        out.result(f"[bold]{escape(row.model)}[/] · case {escape(case_id)} · {arm} arm · "
                   f"repeat {repeat}: {state}")
        out.result(escape(row.output or row.error or "(no answer)"))
        for check in row.checks:
            mark = "skipped" if check.skipped else "✓" if check.passed else \
                "error" if check.passed is None else "✗"
            out.result(f"  {mark} {escape(check.label)}"
                       + (f": {escape(check.reason)}" if check.reason else ""))


def _show_transcripts(run_id: str, manifest, case_id: str, arm: str, repeat: int, *,
                      as_json: bool) -> None:
    if manifest.mode != "agent":  # no transcript: the answer is the whole of it
        _show_answers(run_id, case_id, arm, repeat, as_json=as_json)
        return
    found = [t for t in read_transcripts(Settings.from_env().runs_dir, run_id)
             if t.get("case_id") == case_id and t.get("arm") == arm
             and t.get("repeat") == repeat]
    if not found:
        where = f"no {arm} transcript of case {case_id!r}, repeat {repeat}"
        raise HubskillsError(f"run {run_id}: {where}",
                             hint=f"hubskills runs show {run_id} -v   # lists its cases")
    if as_json:
        out.as_json(found)
        return
    for record in sorted(found, key=lambda t: str(t.get("model"))):
        render_transcript(record)


@runs_group.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--json", "as_json", is_flag=True,
              help="Both runs' summaries, skill versions and per-case changes as JSON.")
def runs_compare_command(run_a: str, run_b: str, as_json: bool) -> None:
    """Per-case improvements and regressions from run A to run B (e.g. two skill versions):
    first every setting that differs; a single case's change is noisy, the intervals are not."""
    settings = Settings.from_env()
    for run_id in (run_a, run_b):  # a run of the registry's results: where to read it
        saved_manifest(settings, run_id)
    comparison = compare_runs(settings.runs_dir, run_a, run_b)
    if as_json:
        out.as_json(comparison)
        return
    for line in comparison["differences"]:  # before any number: what else changed
        out.result(f"differs: {escape(line)}")
    out.table(["run", "skill", "model", "baseline", "with skill", "lift pts [95% CI]",
               "p (exact)", "verdict"],
              [(run_id, escape(f"{run['skill']}@{run['version']}" if run["version"]
                               else run["skill"]), escape(s["model"]),
                display.pct(st["baseline"]["pass_rate"]),
                display.pct(st["skill"]["pass_rate"]),
                display.lift_interval(st["lift"], st["lo"], st["hi"]),
                display.p_value(st["p_value"]), escape(st["verdict"]))
               for run_id, run in comparison["runs"].items() for s in run["summaries"]
               for st in [s["stats"]]], drop=("p (exact)", "baseline"))
    out.result(f"{run_a} → {run_b}: {comparison['summary']}")
    out.result(f"  note: {comparison['note']}")
    changed = [(c["model"], c["case"], display.pct(c["a"]), display.pct(c["b"]), c["change"])
               for c in comparison["cases"] if c["change"] != "same"]
    if changed:  # none: the summary line said so, an empty table would say it again
        out.table(["model", "case", "A (skill)", "B (skill)", "change"], changed)
