"""A run's manifest at its start (`new_manifest`, every mode's), the check before resuming one
(`check_resumable`) and the settings a resumed run takes back from it (`resumed_config`: one
rule, with the fields each mode restores declared in `restored_on_resume`), and the note its
manifest keeps about how it ended (`run_note`, given the running evaluation as
`running.Spending`: the engine imports this module, never the reverse)."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from registry._version import tool_versions
from registry.agent import Budget
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.running import Spending
from registry.evaluation.stopping import StopSignal
from registry.format.skill import Skill
from registry.format.suite import Suite
from registry.format.version_ref import SkillVersionRef
from registry.results.runs import (
    ResultRow,
    RunManifest,
    latest_rows,
    new_run_id,
    read_rows,
    samples_planned,
)
from registry.sandbox import SKIPPED_BY_USER

if TYPE_CHECKING:
    from registry.evaluation.distractors import Listed
    from registry.format.triggers import TriggerSuite

#: The `EvalConfig` fields a resumed run takes back from its manifest, whatever the resuming
#: command says (`resumed_config`): what it measures stays what it started measuring. Every
#: other field (endpoint, concurrency, cost limit, cache, sandbox) is the resuming command's,
#: so `hubskills eval` repeats only those options in the command it prints to resume a run.
#: (A run whose code checks were skipped also stays so; otherwise `code_checks` is the
#: command's.)
RESTORED_ON_RESUME = ("models", "runs", "mode", "placement", "judge", "temperature",
                      "max_tokens", "case_ids", "harness", "budget")
#: What a resumed trigger run takes back: the same rule, its mode's fields (its `case_ids`
#: are query ids; `distractors` is the folder the listed skills came from, None: bundled).
RESTORED_ON_TRIGGER_RESUME = ("models", "runs", "mode", "temperature", "max_tokens",
                              "case_ids", "harness", "distractors")
TRIGGER = "trigger"
BUNDLED = "bundled"  # `distractors_from` of a run that listed the bundled distractors


def restored_on_resume(mode: str) -> tuple[str, ...]:
    """The `EvalConfig` fields a resumed run of `mode` takes back from its manifest."""
    return RESTORED_ON_TRIGGER_RESUME if mode == TRIGGER else RESTORED_ON_RESUME


def run_note(status: str, evaluator: Spending, stop: StopSignal | None) -> str | None:
    """What the manifest should say about how the run ended, if anything."""
    if status == "interrupted":
        return f"interrupted ({stop.reason if stop else 'stopped'}): finish it with --resume"
    return evaluator.cap.note()


def new_manifest(skill: Skill, full: Suite | TriggerSuite, suite: Suite | TriggerSuite,
                 config: EvalConfig, published: SkillVersionRef | None,
                 distractors: list[Listed] | None = None) -> RunManifest:
    """A new run of ``suite`` (``full`` or some of its cases: a subset run), filed under the
    ``published`` version of the skill when there is one. A trigger run (`config.mode`) lists
    ``distractors`` beside the skill, and sees only its metadata."""
    trigger = config.mode == TRIGGER
    if trigger:  # a trigger run's suites are TriggerSuites, any other run's Suites
        cases = [q.id for q in cast("TriggerSuite", suite).queries]
        all_cases = len(cast("TriggerSuite", full).queries)
    else:
        cases = [c.id for c in cast("Suite", suite).cases]
        all_cases = len(cast("Suite", full).cases)
    agent = config.mode == "agent"
    manifest = RunManifest(
        run_id=new_run_id(), skill_name=skill.name, skill_version=skill.version,
        content_hash=skill.content_hash(),
        suite_hash=full.suite_hash(), suite_cases=all_cases, models=list(config.models),
        mode=config.mode, runs=config.runs,
        temperature=config.temperature, max_tokens=config.max_tokens,
        case_ids=cases, skill_tokens=skill.token_estimate()["metadata" if trigger else "body"],
        versions=tool_versions(), partial=True, produced_via=config.via,
        samples_planned=samples_planned(len(config.models), len(cases), config.runs,
                                        arms=1 if trigger else 2),
        harness=config.harness if agent or trigger else None,
    )
    if trigger:
        from registry.evaluation.distractors import distractors_hash

        listed = distractors or []
        manifest.distractors, manifest.distractors_hash = [d.name for d in listed], \
            distractors_hash(listed)
        manifest.distractors_from = str(config.distractors) if config.distractors else BUNDLED
    else:
        manifest.placement, manifest.judge = config.placement, config.judge
        manifest.agent_budget = asdict(config.budget) if agent else None
    file_under(manifest, published)
    return manifest


def file_under(manifest: RunManifest, published: SkillVersionRef | None) -> None:
    """Name ``published`` as the version the run's rows belong to: the registry's version, or
    none when it names none (the folder's own `metadata.version` is only its claim, and a
    replay checks the version against the revision's tag); nothing changes without one."""
    if published is not None:
        manifest.skill_repo, manifest.skill_revision = published.repo, published.revision
        manifest.skill_version = published.version


def published_of(manifest: RunManifest) -> SkillVersionRef | None:
    """The published version a run's manifest names, if it names one."""
    if not (manifest.skill_repo and manifest.skill_revision):
        return None
    return SkillVersionRef(manifest.skill_repo, manifest.skill_revision, manifest.skill_version)


def count_samples(manifest: RunManifest, rows: list[ResultRow], status: str) -> None:
    """Record how many planned samples have a row: fewer, or a stop, make the run partial."""
    manifest.samples_planned = samples_planned(len(manifest.models), len(manifest.case_ids),
                                               manifest.runs)
    manifest.samples_done = len(rows)
    manifest.partial = status != "complete" or manifest.samples_done < manifest.samples_planned


def stored_summaries(rows: list[ResultRow],
                     manifest: RunManifest | None = None) -> list[dict[str, Any]]:
    """The per-model summaries a closing run stores, so `hubskills verify` can recompute them
    (an adaptive run's at its design's stopping level: ``manifest``)."""
    from registry.results.report import summarize

    return [summary.to_dict() for summary in summarize(rows, manifest)]


def check_resumable(manifest: RunManifest, skill: Skill, suite: Suite | TriggerSuite, *,
                    mode: str | None = None) -> None:
    """Refuse to resume a run made with another version of the skill or suite, or (`mode`
    "trigger" or not) a run of the other kind."""
    trigger = manifest.mode == TRIGGER
    if mode is not None and (mode == TRIGGER) != trigger:
        raise HubskillsError(f"run {manifest.run_id} is a --mode {manifest.mode} run",
                             hint=f"hubskills eval {skill.path} --resume {manifest.run_id} "
                                  f"--mode {manifest.mode}")
    if manifest.content_hash != skill.content_hash() or manifest.suite_hash != suite.suite_hash():
        what = "its trigger suite" if trigger else "suite"
        raise HubskillsError(
            f"run {manifest.run_id} was made with a different version of the skill or {what}",
            hint=f"hubskills eval {skill.path}{' --mode trigger' if trigger else ''}  # start a "
                 "new run instead",
        )


def planned_rows(manifest: RunManifest, rows: list[ResultRow]) -> list[ResultRow]:
    """The answered rows of `rows` that the new run `manifest` plans (its models, cases and
    repeats): samples it need not ask again.

    Raises:
        HubskillsError: one of them was made with another version of the skill or suite, or
            in another mode.
    """
    made = (manifest.content_hash, manifest.suite_hash, manifest.mode)
    kept = [r for r in latest_rows(rows) if not r.is_error and r.model in manifest.models
            and r.case_id in manifest.case_ids and r.repeat < manifest.runs]
    for row in kept:
        if (row.content_hash, row.suite_hash, row.mode) != made:
            raise HubskillsError(
                f"a sample given as done ({row.model}, case {row.case_id}) was made with a "
                "different version of the skill or suite, or another mode",
                hint=f"hubskills eval {manifest.skill_path or manifest.skill_name}  # a new run")
    return kept


def resumed_rows(manifest: RunManifest, runs_dir: Path) -> list[ResultRow]:
    """The latest row of each sample the run `manifest` holds in `runs_dir`, if every one
    belongs to its plan (`check_in_plan`): a resume keeps them all.

    Raises:
        HubskillsError: a row outside the plan or made otherwise (its rows.jsonl was edited:
            a red-team walk added another model's rows and `runs show` called it "helps").
    """
    rows = latest_rows(read_rows(runs_dir, manifest.run_id))
    check_in_plan(manifest, rows, where="its rows.jsonl was edited, so it is not resumed")
    return rows


def check_in_plan(manifest: RunManifest, rows: list[ResultRow], *, where: str) -> None:
    """Refuse a row the run `manifest` never planned (its run id, models, cases, repeats and
    arms) or made otherwise (the skill, suite and mode it was made with); `where` says what
    that means for the caller.

    Raises:
        HubskillsError: the first such row.
    """
    made = (manifest.run_id, manifest.content_hash, manifest.suite_hash, manifest.mode)
    models, cases = set(manifest.models), set(manifest.case_ids)
    arms = {"skill"} if manifest.mode == TRIGGER else {"baseline", "skill"}
    for row in rows:
        if row.model not in models or row.case_id not in cases or row.arm not in arms \
                or not 0 <= row.repeat < manifest.runs \
                or (row.run_id, row.content_hash, row.suite_hash, row.mode) != made:
            raise HubskillsError(
                f"run {manifest.run_id} holds a row its plan never asked or made otherwise "
                f"({row.model}, case {row.case_id}, run {row.repeat + 1}, {row.arm}): {where}",
                hint=f"hubskills verify {manifest.run_id}  # names what differs")


def resumed_config(manifest: RunManifest, config: EvalConfig) -> EvalConfig:
    """`config` with what the run being resumed was made with: every field its mode restores
    (`restored_on_resume`), and code checks left out if they were."""
    return replace(config, **{name: _restored(manifest, name, config)
                              for name in restored_on_resume(manifest.mode)},
                   code_checks="skip" if manifest.code_checks == SKIPPED_BY_USER else
                   config.code_checks)


def _restored(manifest: RunManifest, name: str, config: EvalConfig) -> Any:
    """The value of `EvalConfig` field `name` the manifest keeps (under the same name, but the
    budget as `agent_budget`: only agent-mode runs keep one; the distractors' folder as
    `distractors_from`). Any: its type is the field's, which `name` picks."""
    if name == "budget":
        return Budget.recorded(manifest.agent_budget) if manifest.agent_budget else config.budget
    if name == "distractors":
        source = manifest.distractors_from or BUNDLED
        return None if source == BUNDLED else Path(source)
    return getattr(manifest, name)
