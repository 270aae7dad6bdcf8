"""`hubskills eval --mode trigger` as a saved run: its manifest, rows written as they finish,
`--resume`, `--max-cost` and a clean stop, as `engine.run_evaluation` does for A/B runs.

The manifest records the trigger suite's hash, the queries run and the distractors listed
(their names, a hash, and where they came from), so a resumed run lists the same skills or is
refused.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from registry._gc import frozen
from registry._version import tool_versions
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.distractors import distractors_for, distractors_hash
from registry.evaluation.engine import EvalRun, Progress, Started
from registry.evaluation.preflight import check_writable
from registry.evaluation.run_manifest import file_under
from registry.evaluation.stopping import StopSignal, run_until_stopped
from registry.evaluation.trigger import MODE, TriggerConfig, TriggerEvaluator
from registry.evaluation.trigger_report import summarize_triggers
from registry.format.skill import Skill, load_skill
from registry.format.triggers import (
    TRIGGERS_PATH,
    TriggerSuite,
    load_skill_triggers,
    triggers_path,
)
from registry.format.version_ref import SkillVersionRef
from registry.results.runs import (
    ResultRow,
    RunManifest,
    RunWriter,
    latest_rows,
    new_run_id,
    read_manifest,
    read_rows,
    samples_planned,
)
from registry.secrets import holding

BUNDLED = "bundled"


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


def run_trigger_eval(skill_dir: str | Path, config: TriggerConfig, settings: Settings, *,
                     progress: Progress | None = None, started: Started | None = None,
                     resume: str | None = None, stop: StopSignal | None = None,
                     published: SkillVersionRef | None = None) -> EvalRun:
    """Run (or, with `resume`, finish) a trigger eval of a skill folder, saved as a run (filed
    under the `published` version the folder is, when there is one).

    Raises:
        HubskillsError: no trigger suite, an unknown query id, a model that cannot call tools,
            a missing key, or a resumed run made from another skill, suite or distractor set,
            all before any model is called.
    """
    with holding(*settings.secrets()):
        skill = load_skill(skill_dir)
        full = load_trigger_suite(skill)
        manifest = read_manifest(settings.runs_dir, resume) if resume else None
        if manifest is not None:
            config = _resumed(manifest, skill, full, config)
        suite = full.select(config.query_ids) if config.query_ids else full
        distractors = distractors_for(skill.name, config.distractors)
        check_writable(settings)
        if manifest is None:
            manifest = _new_manifest(skill, full, suite, config)
            file_under(manifest, published)
        elif getattr(manifest, "distractors_hash", None) != distractors_hash(distractors):
            raise HubskillsError(f"run {manifest.run_id} listed other distractors than "
                                 f"{manifest.distractors_from} holds now",  # type: ignore
                                 hint=f"hubskills eval {skill_dir} --mode trigger  # a new run")
        ev = TriggerEvaluator(skill.name, config, settings, distractors, manifest)
        ev.cap.refuse_unpriced([m.ref for m in ev.models],
                               f"hubskills eval {skill_dir} --mode trigger")
        return _run(ev, skill, suite, settings, progress, started, resume, stop)


def _run(ev: TriggerEvaluator, skill: Skill, suite: TriggerSuite, settings: Settings,
         progress: Progress | None, started: Started | None, resume: str | None,
         stop: StopSignal | None) -> EvalRun:
    manifest = ev.manifest
    done = frozenset((r.model, r.case_id, r.repeat) for r in latest_rows(
        read_rows(settings.runs_dir, manifest.run_id)) if not r.is_error) if resume \
        else frozenset()
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
    status = "interrupted"
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
            manifest.summaries = [s.to_dict() for s in summarize_triggers(rows)]  # verify's
            writer.close(status, _note(status, ev, stop))  # type: ignore[arg-type]
        ev.cache.close()
    return EvalRun(read_manifest(settings.runs_dir, manifest.run_id), rows)


async def _closing(ev: TriggerEvaluator, work: Any) -> str:
    from registry.providers import aclose_all

    try:
        return await work
    finally:
        await aclose_all(ev.models)


def _note(status: str, ev: TriggerEvaluator, stop: StopSignal | None) -> str | None:
    if status == "interrupted":
        return f"interrupted ({stop.reason if stop else 'stopped'}): finish it with --resume"
    return ev.cap.note()


def _new_manifest(skill: Skill, full: TriggerSuite, suite: TriggerSuite,
                  config: TriggerConfig) -> RunManifest:
    distractors = distractors_for(skill.name, config.distractors)
    return RunManifest(
        run_id=new_run_id(), skill_name=skill.name, skill_version=skill.version,
        content_hash=skill.content_hash(), suite_hash=full.suite_hash(),
        suite_cases=len(full.queries), models=list(config.models), mode=MODE, runs=config.runs,
        temperature=config.temperature, max_tokens=config.max_tokens,
        case_ids=[q.id for q in suite.queries], skill_tokens=skill.token_estimate()["metadata"],
        versions=tool_versions(), partial=True, produced_via=config.via,  # type: ignore[arg-type]
        samples_planned=samples_planned(len(config.models), len(suite.queries), config.runs,
                                        arms=1),
        distractors=[d.name for d in distractors], distractors_hash=distractors_hash(distractors),
        distractors_from=str(config.distractors) if config.distractors else BUNDLED,
        harness=config.harness, skill_path=str(skill.path.resolve()))  # verify reads it


def _resumed(manifest: RunManifest, skill: Skill, suite: TriggerSuite,
             config: TriggerConfig) -> TriggerConfig:
    """`config` with what the run being resumed was made with; refused when it is no trigger
    run or the skill or its trigger suite changed since."""
    if manifest.mode != MODE:
        raise HubskillsError(f"run {manifest.run_id} is a --mode {manifest.mode} run",
                             hint=f"hubskills eval {skill.path} --resume {manifest.run_id} "
                                  f"--mode {manifest.mode}")
    if manifest.content_hash != skill.content_hash() or manifest.suite_hash != suite.suite_hash():
        raise HubskillsError(f"run {manifest.run_id} was made with a different version of the "
                             "skill or its trigger suite",
                             hint=f"hubskills eval {skill.path} --mode trigger  # a new run")
    source = getattr(manifest, "distractors_from", BUNDLED)
    return replace(config, models=manifest.models, runs=manifest.runs,
                   temperature=manifest.temperature, max_tokens=manifest.max_tokens,
                   query_ids=manifest.case_ids, harness=manifest.harness,
                   distractors=None if source == BUNDLED else Path(source))

