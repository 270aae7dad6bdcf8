"""`hubskills eval --mode trigger` and `runs show` of a trigger run.

`eval.py` takes two decorators from here: `trigger_mode` (on `eval`: adds `--distractors` and
sends `--mode trigger`, or a `--resume` of a trigger run, to `eval_triggers`) and
`trigger_report` (on `runs show`: a trigger run's own table). Everything else about the eval
command (its options, `--push`, Ctrl-C) works the same in this mode.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._design_options import design_options as _design_options
from registry.cli._progress import eval_progress
from registry.cli._push_target import push_target
from registry.cli._signals import exit_now, interrupts
from registry.cli._skill_ref import skill_folder
from registry.config import Settings
from registry.errors import HubskillsError, RunNotFound
from registry.results import display
from registry.results.runs import RunManifest, latest_rows, read_manifest, read_rows

if TYPE_CHECKING:
    from registry.evaluation.trigger_report import Rate

# registry.evaluation.trigger.MODE, spelled out: that module (imported by a trigger run only)
# loads the agent's tools, which a chat run does not need
MODE: Final = "trigger"
HELP = ("; trigger: whether an agent opens the skill listed among other skills, for each query "
        "of evals/triggers.json")
# Options a trigger run does not use: given, they are refused rather than ignored.
_UNUSED = {"placement": "user", "judge": None, "tests": None, "skip_code_checks": False,
           "on": "local"}


def trigger_mode(command: click.Command) -> click.Command:
    """Give `eval` its `--distractors` option and its trigger mode (module docstring)."""
    command.params.append(click.Option(
        ["--distractors"], type=click.Path(path_type=Path, file_okay=False), default=None,
        metavar="FOLDER", help="Trigger mode: list the skills installed in FOLDER beside the "
                               "skill (default: a bundled set of common agent skills)."))
    mode = next(p for p in command.params if p.name == "mode")
    mode.help = (mode.help or "").rstrip(".") + HELP + "."
    inner = command.callback
    assert inner is not None

    @functools.wraps(inner)
    def callback(**params: Any) -> Any:
        distractors = params.pop("distractors")
        if params["mode"] == MODE or _is_trigger_run(params["resume"]):
            return eval_triggers(params, distractors)
        if distractors is not None:
            raise HubskillsError("--distractors is used only with --mode trigger",
                                 hint=f"hubskills eval {params['skill']} --mode trigger "
                                      f"--distractors {distractors}")
        return inner(**params)

    command.callback = callback
    return command


def trigger_report(command: click.Command) -> click.Command:
    """`runs show RUN_ID` of a trigger run prints its trigger table."""
    inner = command.callback
    assert inner is not None

    @functools.wraps(inner)
    def callback(**params: Any) -> Any:
        if params["case_id"] is None and _is_trigger_run(params["run_id"]):
            runs_dir = Settings.from_env().runs_dir
            rows = latest_rows(read_rows(runs_dir, params["run_id"]))
            return report(read_manifest(runs_dir, params["run_id"]), rows,
                          as_json=params["as_json"], verbose=params["verbose"])
        return inner(**params)

    command.callback = callback
    return command


def _is_trigger_run(run_id: str | None) -> bool:
    if run_id is None:
        return False
    try:
        return read_manifest(Settings.from_env().runs_dir, run_id).mode == MODE
    except RunNotFound:  # `runs show` says where it is, if the registry holds it
        return False


def eval_triggers(params: dict[str, Any], distractors: Path | None) -> None:
    """The body of `eval --mode trigger`: check, run, report, push."""
    given = [f"--{k.replace('_', '-')}" for k, v in _UNUSED.items() if params[k] != v]
    if given:
        raise HubskillsError(f"{', '.join(given)} cannot be used with --mode trigger",
                             hint=f"hubskills eval {params['skill']} --mode trigger")
    from registry.evaluation.config import EvalConfig
    from registry.evaluation.trigger_run import run_trigger_eval
    from registry.providers import default_model_ref

    skill = click.get_current_context().with_resource(
        skill_folder(params["skill"], command="eval"))
    settings = Settings.from_env()
    store, published = push_target(settings, skill, params["repo"], params["registry_kind"],
                                   push=params["push"])
    config = EvalConfig(
        mode=MODE, models=list(params["models"]) or [default_model_ref(settings)],
        runs=params["runs"],
        temperature=params["temperature"], max_tokens=params["max_tokens"],
        concurrency=params["concurrency"], max_cost=params["max_cost"],
        max_calls=params["max_calls"],
        use_cache=not params["no_cache"], base_url=params["base_url"], distractors=distractors,
        harness=params["harness"], sandbox=params["sandbox"],
        design=params["design"] or (None if params["resume"] else "auto"),
        design_options=_design_options(params["design_option"], skill),
        case_ids=[c.strip() for c in (params["cases"] or "").split(",") if c.strip()])
    with eval_progress() as progress, interrupts() as caught:
        run = run_trigger_eval(skill, config, settings, progress=progress.update,
                               started=progress.start, resume=params["resume"],
                               stop=caught.stop, published=published,
                               on_round=lambda line: out.info(escape(line)))
    if run.manifest.status == "interrupted":
        out.info(f"stopped: run {run.manifest.run_id} is marked interrupted; "
                 f"{len(run.rows)} of {run.manifest.samples_planned} sessions are kept")
        out.hint(f"hubskills eval {params['skill']} --resume {run.manifest.run_id}")
        exit_now(caught.exit_code or 130)
    report(run.manifest, run.rows, as_json=params["as_json"], verbose=params["verbose"])
    from registry.evaluation.adaptive import saved_line

    if not params["as_json"] and (saved := saved_line(run.manifest, run.rows)):
        out.info(escape(saved.replace("answers", "sessions")))
    if store is not None:
        _push(store, skill, run, quiet=params["as_json"])


def _push(store: Any, skill: Path, run: Any, *, quiet: bool) -> None:
    from registry.publishing.push import push_run

    pushed = push_run(store, run.manifest, run.rows, skill_dir=skill, via="cli")
    if not pushed.pending:  # replayed from the dataset at once, as `eval --push` does
        from registry.verify.trigger import record_trigger_replay

        record_trigger_replay(store, run.manifest)
    if pushed.pending:
        out.warn(f"run {run.manifest.run_id} was proposed for review as a pull request: "
                 f"{pushed.pr_url}")
    elif not quiet:
        out.result(f"Pushed {len(run.rows)} trigger rows of {run.manifest.skill_repo} "
                   f"v{run.manifest.skill_version} to {pushed.path}")


def rate_text(rate: Rate) -> str:
    """`60% [23–88%]`, or `-` when no query of the kind was graded."""
    if rate.rate is None:
        return "-"
    return f"{display.pct(rate.rate)} [{(rate.lo or 0) * 100:.0f}–{display.pct(rate.hi)}]"


def report(manifest: RunManifest, rows: list, *, as_json: bool, verbose: bool) -> None:
    """A trigger run's figures per model (and, with `verbose`, each query's sessions)."""
    from registry.evaluation.trigger_report import INTERVAL, summarize_triggers
    from registry.evaluation.trigger_rounds import reporting_alphas

    summaries = summarize_triggers(rows, reporting_alphas(manifest, rows))
    if as_json:
        out.as_json({"manifest": {**manifest.model_dump(), "partial": manifest.is_partial,
                                  "label": manifest.label},
                     "summaries": [s.to_dict() for s in summaries]})
        return
    listed = getattr(manifest, "distractors", [])
    out.table(["model", "recall [95% CI]", "false triggers [95% CI]", "accuracy", "errors",
               "opened instead", "cost"],
              [(escape(s.model), rate_text(s.recall), rate_text(s.false_triggers),
                display.pct(s.accuracy.rate), str(s.errors),
                escape(", ".join(f"{k} ×{v}" for k, v in list(s.opened_instead.items())[:3])),
                display.usd(s.cost_usd, s.model)) for s in summaries],
              title=f"{escape(manifest.skill_name)} — trigger eval, run {manifest.run_id}, "
                    f"{display.count(len(manifest.case_ids), 'query', 'queries')} × "
                    f"{display.count(manifest.runs, 'run')} among "
                    f"{display.count(len(listed), 'distractor')} ({escape(manifest.label)})")
    out.result(f"  recall: should-trigger queries where the agent read this SKILL.md; false "
               f"triggers: should-not queries where it did. Intervals: {INTERVAL}; errors "
               "are failed sessions, in no denominator")
    levels = {s.model: s.level for s in summaries if s.level is not None}
    if levels:  # an adaptive run: its figures at its stopping look's level
        out.result("  intervals at the level of the look the adaptive design stopped at: "
                   + ", ".join(f"{escape(m)} {level:.2%}" for m, level in levels.items()))
    if verbose:
        _query_table(rows)


def _query_table(rows: list) -> None:
    def mark(row: Any) -> str:
        return "E" if row.is_error else ("✓" if row.activated else "·")

    by_query: dict[tuple[str, str], list] = {}
    for row in sorted(rows, key=lambda r: (r.model, r.case_id, r.repeat)):
        by_query.setdefault((row.model, row.case_id), []).append(row)
    out.table(["model", "query", "should", "opened", "opened instead"],
              [(escape(model), escape(qid), "yes" if group[0].expect_skill else "no",
                "".join(mark(r) for r in group),
                escape(", ".join(sorted({r.opened_skill for r in group if r.opened_skill
                                         and not r.activated}))))
               for (model, qid), group in by_query.items()])
