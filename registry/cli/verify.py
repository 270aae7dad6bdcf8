"""`hubskills verify`: replay a saved run (integrity, regrade, recompute), no model called."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._path_arg import ExistingPath
from registry.errors import HubskillsError
from registry.results.leaderboard_badges import MIN_SPOT_K, too_few_to_fail

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.stores import SkillStore
    from registry.verify.replay import Verification

_SHOWN = 10  # differences listed before "and N more"


@click.command("verify")
@click.argument("target", metavar="RUN_ID | NS/NAME")
@click.option("--run", "run_id", default=None, metavar="RUN_ID",
              help="With NS/NAME: the run of that skill in the registry's results to replay.")
@click.option("--revision", default=None, metavar="REF",
              help="With --run: read the run at this revision of the results dataset (a pull "
                   "request's refs/pr/N) instead of its main branch.")
@click.option("--skill", "skill_dir", default=None, metavar="FOLDER",
              type=ExistingPath("folder", retry="hubskills verify RUN_ID --skill {path}",
                                otherwise="hubskills verify RUN_ID  # the folder it recorded"),
              help="The skill folder to check a local run against (for a run that does not "
                   "record one, or whose folder moved).")
@click.option("--registry", type=click.Choice(["local", "hub"]), default=None,
              help="The registry holding the run or the revision it names "
                   "[env: HUBSKILLS_REGISTRY].")
@click.option("--resample", "k", type=click.IntRange(min=1), default=None, metavar="K",
              help="After a verified replay, re-ask K samples per arm (9 or more) of the "
                   "recorded model and test the stored outcomes against them (costs model "
                   "calls).")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, metavar="USD",
              help="With --resample: refuse, before any call, a spot check estimated to cost "
                   "more (catalogue prices), and never spend past it.")
@click.option("--max-calls", type=click.IntRange(min=1), default=None, metavar="N",
              help="With --resample: at most N model calls (what bounds a model without a "
                   "known price).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="With --resample: the seed that draws the cases re-asked.")
@click.option("--on", "on", type=click.Choice(["local", "jobs"]), default="local",
              show_default=True, help="With --resample and --run: where the model is re-asked: "
                                      "here, or as one Hugging Face Job on your account.")
@click.option("--flavor", default=None, metavar="FLAVOR",
              help="With --on jobs: the Job's hardware [default: cpu-basic].")
@click.option("--json", "as_json", is_flag=True, help="The verification as JSON.")
def verify_command(target: str, run_id: str | None, revision: str | None,
                   skill_dir: Path | None, registry: str | None, k: int | None,
                   max_cost: float | None, max_calls: int | None, seed: int, on: str,
                   flavor: str | None, as_json: bool) -> None:
    """Replay a saved or pushed run without calling any model; exit 1 unless it is verified.

    Checks the skill and suite are the ones the run names and every sample is there once,
    regrades every stored output, and recomputes the summary. It proves the grading and the
    arithmetic, not that the outputs came from the model.

    \b
    Examples:
      hubskills runs                       # run ids
      hubskills verify 20261122-103000-a1b2c3
      hubskills verify 20261122-103000-a1b2c3 --skill ./my-skill --json
      hubskills verify alice/csv-skill --run 20261122-103000-a1b2c3 --registry hub
      hubskills verify 20261122-103000-a1b2c3 --resample 10 --max-cost 1
      hubskills verify 20261122-103000-a1b2c3 --resample 10 --on jobs
    """
    from functools import cache

    from registry.config import Settings
    from registry.registries import get_store

    if on == "jobs" and k is None:
        raise click.UsageError("--on jobs runs a spot check there: add --resample K")
    if k is not None and (why := too_few_to_fail(k)) is not None:  # free: before the replay
        given = {"--run": run_id, "--revision": revision, "--skill": skill_dir,
                 "--registry": registry, "--resample": MIN_SPOT_K, "--max-cost": max_cost,
                 "--max-calls": max_calls, "--seed": seed or None,
                 "--on": on if on != "local" else None, "--flavor": flavor}
        raise HubskillsError(why, hint=shlex.join([  # the same command, at the fewest K
            "hubskills", "verify", target, *(word for option, value in given.items()
                                             if value is not None
                                             for word in (option, f"{value:g}"
                                                          if isinstance(value, float)
                                                          else str(value))),
            *(["--json"] if as_json else [])]))
    settings = Settings.from_env()
    open_store = cache(lambda: get_store(settings, registry))
    report = _verify(target, run_id, revision, skill_dir, settings, open_store)
    found = report.to_dict()
    if k is None or report.status != "verified":
        out.as_json(found) if as_json else _render(report)
        if k is not None:
            out.info("No spot check: a run is re-asked only once its replay is verified.")
        if report.status != "verified":
            raise SystemExit(1)
        return
    if not as_json:
        _render(report)
    from registry.cli._verify_spot import render, spot_check

    found["spot_check"] = spot_check(target, run_id, revision, skill_dir, settings, open_store,
                                     k=k, seed=seed, max_cost=max_cost, max_calls=max_calls,
                                     on=on, flavor=flavor)
    out.as_json(found) if as_json else render(found["spot_check"])
    if not found["spot_check"]["consistent"]:
        raise SystemExit(1)


def _verify(target: str, run_id: str | None, revision: str | None, skill_dir: Path | None,
            settings: Settings, open_store: Callable[[], SkillStore]) -> Verification:
    if run_id is None:
        if revision is not None or "/" in target:
            raise click.UsageError(f"name the run to replay: hubskills verify {target} --run "
                                   "RUN_ID" if "/" in target else "--revision needs --run")
        from registry.verify.replay import verify_run

        trigger = _trigger(target, None, None, skill_dir, settings, open_store)
        return trigger or verify_run(target, settings, skill_dir=skill_dir,
                                     open_store=open_store)
    from registry.verify.admission import verify_and_keep

    if "/" not in target:
        raise click.UsageError(f"with --run, name the skill as NS/NAME, not '{target}'")
    if trigger := _trigger(target, run_id, revision, skill_dir, settings, open_store):
        return trigger
    report, kept = verify_and_keep(open_store(), target, run_id, settings, revision=revision)
    click.get_current_context().call_on_close(lambda: out.info(kept))  # after the report
    return report


def _trigger(target: str, run_id: str | None, revision: str | None, skill_dir: Path | None,
             settings: Settings, open_store: Callable[[], SkillStore]) -> Verification | None:
    """The replay of a trigger run (`verify/trigger.py`), recorded when pushed; None for an A/B
    run. A trigger run is replayed, never re-asked: `--resample` is refused."""
    from registry.verify import trigger

    if run_id is None:
        report = trigger.local_trigger(target, settings, skill_dir=skill_dir,
                                       open_store=open_store)
    elif (found := trigger.pushed_trigger(open_store(), target, run_id,
                                          revision=revision)) is not None:
        report, kept = found
        click.get_current_context().call_on_close(lambda: out.info(kept))  # after the report
    else:
        return None
    if report is not None and click.get_current_context().params.get("k") is not None:
        raise click.UsageError("a trigger run is replayed, not re-asked: drop --resample")
    return report


def _render(report: Verification) -> None:
    source = f"; skill: {escape(report.skill_source)}" if report.skill_source else ""
    done = f"{report.samples} of {report.planned} planned samples: a partial run" \
        if report.planned is not None else f"{report.samples} samples"
    out.result(f"{report.status}: run {escape(report.run_id)} ({done}, "
               f"{report.checks_regraded} checks regraded{source})")
    from registry.verify.replay import ANOTHER_VERSION

    for problem in report.problems:
        out.result(f"  {escape(problem)}")
    if any(problem.endswith(ANOTHER_VERSION) for problem in report.problems):
        out.hint(f"hubskills eval {shlex.quote(str(report.skill_source))}  # a run of the "
                 "folder as it is now; --skill FOLDER checks this run against the folder it "
                 "measured")
    for difference in report.differences[:_SHOWN]:
        out.result(f"  {escape(difference.sample)}: {escape(difference.field)}: stored "
                   f"{escape(str(difference.stored))}, regraded {escape(str(difference.regraded))}")
    if len(report.differences) > _SHOWN:
        out.result(f"  ... and {len(report.differences) - _SHOWN} more (--json lists them all)")
    for why, count in report.unreplayable.items():
        times = f" ({count} verdicts)" if count > 1 else ""
        out.result(f"  not replayable: {escape(why)}{times}")
    if report.status == "verified":
        out.result("  The grading and the arithmetic hold; a replay cannot say the outputs came "
                   "from the model.")
