"""`hubskills eval --mode trigger` as a saved run: its manifest, rows written as they finish,
`--resume`, `--max-cost` and a clean stop, as `engine.run_evaluation` does for A/B runs.

The manifest records the trigger suite's hash, the queries run and the distractors listed
(their names, a hash, and where they came from), so a resumed run lists the same skills or is
refused.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import replace
from pathlib import Path
from typing import Any

from registry._gc import frozen
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.distractors import distractors_for, distractors_hash
from registry.evaluation.engine import EvalRun, Progress
from registry.evaluation.preflight import check_writable
from registry.evaluation.run_manifest import (
    check_resumable,
    new_manifest,
    resumed_config,
    resumed_rows,
    run_note,
)
from registry.evaluation.stopping import StopSignal, run_until_stopped
from registry.evaluation.trigger import MODE, TriggerEvaluator, listing
from registry.evaluation.trigger_report import summarize_triggers
from registry.evaluation.trigger_rounds import (
    RoundLine,
    history_of,
    make_design,
    reporting_alphas,
)
from registry.format.folder_names import folder_name
from registry.format.skill import Skill, load_skill
from registry.format.triggers import (
    TRIGGERS_PATH,
    TriggerQuery,
    TriggerSuite,
    load_skill_triggers,
    triggers_path,
)
from registry.format.version_ref import SkillVersionRef
from registry.results.runs import (
    ResultRow,
    RunManifest,
    RunStatus,
    RunWriter,
    latest_rows,
    read_manifest,
    read_rows,
    samples_planned,
)
from registry.secrets import holding

Started = Callable[[RunManifest, int], None]  # (manifest, answers to get)


def load_trigger_suite(skill: Skill) -> TriggerSuite:
    """The skill's `evals/triggers.json`, else the queries its NVIDIA-shaped `evals/evals.json`
    implies (`load_skill_triggers`).

    Raises:
        HubskillsError: the skill has none (or it does not load).
    """
    suite = load_skill_triggers(skill.path, skill.name)
    if suite is None:
        file = triggers_path(skill.path)
        raise HubskillsError(f"{skill.path} has no {TRIGGERS_PATH}: a trigger eval needs "
                             "queries that should and should not open the skill",
                             hint=f"write {file} as [{{\"query\": \"...\", \"should_trigger\": "
                                  "true}, ...], then hubskills validate " + str(skill.path))
    return suite


def run_trigger_eval(skill_dir: str | Path, config: EvalConfig, settings: Settings, *,
                     progress: Progress | None = None, started: Started | None = None,
                     resume: str | None = None, stop: StopSignal | None = None,
                     published: SkillVersionRef | None = None,
                     on_round: RoundLine | None = None) -> EvalRun:
    """Run (or, with `resume`, finish) a trigger eval of a skill folder, saved as a run (filed
    under the `published` version the folder is, when there is one). `config.mode` is taken
    as "trigger" whatever it says.

    Raises:
        HubskillsError: no trigger suite, an unknown query id, a model that cannot call tools,
            a missing key, a resumed run made from another skill, suite or distractor set, a
            design parameter out of range or a design that is not the resumed run's, all
            before any model is called.

    `config.design` "adaptive" ("auto": adaptive when the suite can settle) asks in rounds
    until recall and the false-trigger rate are settled (`trigger_rounds`); `on_round` gets
    a line saying what the design is doing before each round.
    """
    config = replace(config, mode="trigger")
    with holding(*settings.secrets()):
        skill = load_skill(skill_dir)
        folder_name(skill)  # each session lists it as a folder: no path climbs out of one
        full = load_trigger_suite(skill)
        manifest = read_manifest(settings.runs_dir, resume) if resume else None
        if manifest is not None:
            check_resumable(manifest, skill, full, mode=MODE)
            config = resumed_config(manifest, config)
        suite = full.select(config.case_ids) if config.case_ids else full
        distractors = distractors_for(skill.name, config.distractors)
        check_writable(settings)
        if manifest is None:
            manifest = new_manifest(skill, full, suite, config, published, distractors)
            manifest.skill_path = str(skill.path.resolve())  # verify reads it
        elif manifest.distractors_hash != distractors_hash(distractors):
            raise HubskillsError(f"run {manifest.run_id} listed other distractors than "
                                 f"{manifest.distractors_from} holds now",
                                 hint=f"hubskills eval {skill_dir} --mode trigger  # a new run")
        command = f"hubskills eval {skill_dir} --mode trigger"
        design = make_design(config, len(suite.queries), None if not resume else
                             manifest.design or {"kind": "fixed"}, command=command)
        if not resume:
            manifest.design = design.to_dict() if design else {"kind": "fixed",
                                                               "runs": config.runs}
        ev = TriggerEvaluator(skill.name, config, settings, distractors, manifest)
        ev.design = design
        ev.refuse_unpriced([], command)
        return _run(ev, skill, suite, settings, progress, started, resume, stop, on_round)


def _run(ev: TriggerEvaluator, skill: Skill, suite: TriggerSuite, settings: Settings,
         progress: Progress | None, started: Started | None, resume: str | None,
         stop: StopSignal | None, on_round: RoundLine | None = None) -> EvalRun:
    manifest = ev.manifest
    kept = resumed_rows(manifest, settings.runs_dir) if resume else []
    # an adaptive design's errored sessions are outcomes it planned on: kept, not asked again
    done = frozenset((r.model, r.case_id, r.repeat) for r in kept
                     if ev.adaptive or not r.is_error)
    if ev.adaptive:
        ev.history = history_of([m.ref for m in ev.models], suite.queries, kept)
        ev.design_stops = {}
        ev.on_round = on_round
        check_round_budget(ev, skill.description, suite.queries,
                           f"hubskills eval {skill.path} --mode trigger")
    manifest.status = "running"
    writer = RunWriter(settings.runs_dir, manifest, resume=bool(resume))
    total = samples_planned(len(ev.models), len(suite.queries), ev.config.runs, arms=1) - len(done)
    finished = 0

    def on_row(row: ResultRow) -> None:
        nonlocal finished
        writer.add(row)
        finished += 1
        if progress:
            progress(finished, total, row)

    if started:  # shown once the endpoints' probes have answered, as the rows are
        ev.probes.show(started, manifest, total)
    status: RunStatus = "interrupted"
    try:
        with frozen():
            status = run_until_stopped(_closing(ev, ev.run(
                skill.description, suite.queries, on_row, done=done, stop=stop)), stop)
    finally:
        if ev.probes.refused:  # a dead endpoint: refused as if before the run began
            writer.discard()
        else:
            rows = latest_rows(read_rows(settings.runs_dir, manifest.run_id))
            manifest.samples_done = len(rows)
            manifest.partial = status != "complete" or len(rows) < manifest.samples_planned
            if ev.adaptive:  # complete once every model's plan has stopped
                manifest.design_stops = ev.design_stops
                manifest.partial = status != "complete" or \
                    len(ev.design_stops) < len(ev.models)
            manifest.summaries = [s.to_dict() for s in summarize_triggers(  # verify's
                rows, reporting_alphas(manifest, rows))]
            writer.close(status, run_note(status, ev, stop))
        ev.cache.close()
    return EvalRun(read_manifest(settings.runs_dir, manifest.run_id), rows)


def check_round_budget(ev: TriggerEvaluator, description: str, queries: list[TriggerQuery],
                       command: str) -> None:
    """Before any call: refuse a `--max-cost` below what the next round of an adaptive run
    costs at least (each of its sessions' first call at the catalogue price: the listing and
    the query in, `max_tokens` out; a cached call costs nothing), as `adaptive.
    check_round_budget` does for A/B runs: an adaptive run that cannot finish a round settles
    nothing.

    Raises:
        HubskillsError: the cap is below that estimate.
    """
    if not ev.adaptive or ev.config.max_cost is None:
        return
    from registry.agent import TOOLS
    from registry.agent.loop import skills_prompt
    from registry.evaluation.cache import completion_key, message_dict
    from registry.format.skill import estimate_tokens
    from registry.providers import Message, Usage, cost
    from registry.results.sequential_rates import plan_round

    design = ev.design
    assert design is not None  # rounds are an adaptive design's
    by_id, total, sessions = {q.id: q for q in queries}, 0.0, 0
    for model in ev.models:
        history = ev.history.get(model.ref) or {q.id: (q.should_trigger, []) for q in queries}
        plan = plan_round(design, history)
        for qid, run in () if plan.stop else plan.samples:
            if len(history[qid][1]) > run:
                continue
            listed = listing(ev.name, description, ev.distractors, f"{qid}:{run}")
            messages = [Message("system", skills_prompt(listed)),
                        Message("user", by_id[qid].query)]
            sessions += 1
            if ev.config.use_cache and ev.cache.get(completion_key(
                    model=model.ref, endpoint=model.provider.endpoint,
                    messages=[message_dict(m) for m in messages], tools=TOOLS,
                    temperature=ev.config.temperature, max_tokens=ev.config.max_tokens,
                    seed=run, repeat=run)) is not None:
                continue
            price = cost(model.ref, Usage(input_tokens=sum(estimate_tokens(m.content)
                                                           for m in messages),
                                          output_tokens=ev.config.max_tokens))
            if price is None:
                return  # an unpriced model: --max-calls bounds it (`refuse_unpriced`)
            total += price
    if total > ev.config.max_cost:
        raise HubskillsError(
            f"--max-cost {ev.config.max_cost:g} is below the ${total:.4f} its next round costs "
            f"at least ({sessions} sessions): the design could not settle anything",
            hint=f"{command} --max-cost {total * 1.5 + 0.01:.2f}  # or --design fixed, which "
                 "stops cleanly at the cap")


async def _closing(ev: TriggerEvaluator, work: Coroutine[Any, Any, RunStatus]) -> RunStatus:
    try:
        return await work
    finally:
        await ev.aclose()
