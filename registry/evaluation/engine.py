"""The A/B runner: every case, in both arms, on every model, `runs` times, concurrently.

Each sample is one independent completion (seeded by its repeat index, the same seed in both
arms so the pair differs only by the skill). Completions go through a content-addressed cache,
so a rerun or a resumed run makes no repeated model calls. Provider errors are retried by the
provider layer, then recorded as error rows that stay out of pass rates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from registry._gc import frozen
from registry.agent import AgentRunner
from registry.config import Settings
from registry.errors import ProviderError
from registry.evaluation.adaptive import (
    History,
    RoundLine,
    check_round_budget,
    history_of,
    in_cache,
    make_design,
    run_rounds,
)
from registry.evaluation.arms import MAX_TOOL_TURNS, Mode, build_arm, run_tool
from registry.evaluation.calls import ModelCalls
from registry.evaluation.checks import grade_row, has_code_checks, run_checks
from registry.evaluation.config import EvalConfig
from registry.evaluation.dependencies import load_dependencies
from registry.evaluation.judge import make_judge
from registry.evaluation.pairwise import Pairs
from registry.evaluation.preflight import (
    Probes,
    agent_tasks,
    check_here,
    check_mode,
    check_suite,
    check_writable,
)
from registry.evaluation.run_manifest import (
    check_resumable,
    count_samples,
    file_under,
    new_manifest,
    planned_rows,
    resumed_config,
    resumed_rows,
    run_note,
    stored_summaries,
)
from registry.evaluation.sample_errors import arm_failure, failed_row
from registry.evaluation.stopping import StopSignal, gather_until_stopped, run_until_stopped
from registry.format.skill import Skill, load_skill
from registry.format.suite import Case, Suite, load_suite, suite_path
from registry.format.version_ref import SkillVersionRef
from registry.providers import CapReached, Completion, Message, Model, ToolSpec
from registry.providers.base import tally
from registry.results.runs import (
    ResultRow,
    RunManifest,
    RunWriter,
    latest_rows,
    read_manifest,
    read_rows,
)
from registry.sandbox import Choice, choose
from registry.secrets import holding

if TYPE_CHECKING:  # the statistics (numpy) load only when a design is made
    from registry.results.runs import Arm, RunStatus
    from registry.results.sequential import Design

ARMS: tuple[Arm, ...] = ("baseline", "skill")
Progress = Callable[[int, int, ResultRow], None]
Started = Callable[[RunManifest, int, int], None]  # (manifest, answers to get, of them cached)


@dataclass
class EvalRun:
    """A finished (or stopped) run: its manifest and its rows."""

    manifest: RunManifest
    rows: list[ResultRow]
    spent: float | None = None  # what its calls cost, samples cut short included (None: unknown)


class Evaluator(ModelCalls):
    """Runs one evaluation; use `run_evaluation` rather than this class directly."""

    writer: RunWriter
    dependencies: tuple[Skill, ...] = ()  # the skills the skill requires: its arm's only

    def __init__(self, skill: Skill, suite: Suite, config: EvalConfig, settings: Settings,
                 done: set[tuple[str, str, str, int]], code: Choice) -> None:
        super().__init__(config, settings)
        self.skill, self.suite, self.settings = skill, suite, settings
        self.sandbox, self.skip_reason = code.sandbox, f"code check {code.status}"
        # Agent samples in flight (each holds a workspace and may be running a command) are
        # bounded too: twice the model calls at once, so tool time overlaps other calls.
        self.agent_slots = asyncio.Semaphore(
            2 * (config.concurrency or max(m.default_concurrency for m in self.models)))
        self.done = done
        self.design: Design | None = None  # the run's (`run_evaluation` sets it); None: fixed
        self.history: History = {}  # an adaptive design's outcomes so far (`adaptive`)
        self.design_stops: dict[str, dict[str, Any]] = {}  # per model: where its plan stopped
        self.judge = None
        self._judge_models: list[Model] = []
        if config.judge:
            judge_model = self.resolve(config.judge)
            self.judge = make_judge(judge_model, self.complete)
            self._judge_models.append(judge_model)
        self.probes = Probes([*self.models, *self._judge_models])

    @property
    def adaptive(self) -> bool:
        """Whether the run's design is adaptive (asked in rounds, `adaptive.run_rounds`)."""
        return self.design is not None and self.design.kind == "adaptive"

    def agent_runner(self, model: Model, case: Case, arm: str) -> AgentRunner:
        """The one place agent mode picks its runner: the external harness when one is named,
        else hubskills' own tool loop, or one turn for a model that cannot call tools."""
        if self.config.harness:
            from registry.agent.harness import make_harness  # written beside this package
            return make_harness(self.config.harness, model=model, sandbox=self.sandbox,
                                settings=self.settings, cache=self.cache,
                                read_cache=self.config.use_cache)
        from registry.agent import ToolLoopRunner  # agent mode only: the loop loads the sandbox
        from registry.evaluation.agent_mode import SingleTurnRunner

        async def complete(messages: list[Message], tools: list[ToolSpec],
                           seed: int) -> tuple[Completion, bool]:
            return await self.complete(model, messages, tools=tools, seed=seed, repeat=seed)

        if not model.provider.supports_tools:
            return SingleTurnRunner(complete, case, self.skill if arm == "skill" else None,
                                    self.dependencies)  # the baseline's ignores them
        return ToolLoopRunner(complete, self.sandbox)

    async def sample(self, model: Model, arm: Arm, case_index: int, repeat: int) -> ResultRow:
        """One answer to one case in one arm, graded."""
        case = self.suite.cases[case_index]
        await self.probes.clear_for(model)
        if self.config.mode == "agent":
            from registry.evaluation.agent_mode import agent_sample

            if self.config.harness:  # an agent CLI's calls are counted after its sample
                self.cap.check_open()
            async with self.agent_slots:
                row = await agent_sample(self, model, arm, case, repeat,
                                         self._row(model, arm, case.id, repeat))
            if self.config.harness and not row.cached:
                self.cap.record(row.cost_usd)
            return row
        plan = build_arm(arm, case, self.skill, mode=cast("Mode", self.config.mode),  # no trigger
                         placement=self.config.placement, dependencies=self.dependencies)
        messages = list(plan.messages)
        row = self._row(model, arm, case.id, repeat)
        loaded: bool | None = False if plan.tools else None
        try:
            for _turn in range(MAX_TOOL_TURNS):
                completion, cached = await self.complete(
                    model, messages, tools=plan.tools, seed=repeat, repeat=repeat)
                tally(row, completion, cached=cached)
                if not (plan.tools and completion.tool_calls):
                    break
                messages.append(Message("assistant", completion.text,
                                        tool_calls=completion.tool_calls))
                for call in completion.tool_calls:
                    result, was_loaded = run_tool(call, self.skill, self.dependencies)
                    loaded = loaded or was_loaded
                    messages.append(Message("tool", result, tool_call_id=call.id))
        except ProviderError as exc:  # its context overflowed, or no answer came
            return failed_row(row, exc)
        row.output, row.skill_loaded = completion.text, loaded
        if plan.tools and completion.tool_calls:
            return arm_failure(row, f"tool loop still calling tools after {MAX_TOOL_TURNS} "
                                     "turns")
        if completion.finish_reason == "content_filter":
            return arm_failure(row, "the model refused (content filter)")
        grade_row(row, await run_checks(case, completion.text, judge=self.judge,
                                        sandbox=self.sandbox, skip_reason=self.skip_reason))
        return row

    def _row(self, model: Model, arm: Arm, case_id: str, repeat: int) -> ResultRow:
        m = self.writer.manifest
        return ResultRow(run_id=m.run_id, skill_name=m.skill_name, skill_version=m.skill_version,
                         skill_repo=m.skill_repo, skill_revision=m.skill_revision,
                         content_hash=m.content_hash, model=model.ref, mode=m.mode, arm=arm,
                         case_id=case_id, repeat=repeat, cost_usd=0.0, cached=True,
                         **m.row_fields())

    def work(self) -> list[tuple[Model, Arm, int, int]]:
        """Every (model, arm, case, repeat) still to run, repeat-major so a stop is balanced."""
        items = []
        for repeat in range(self.config.runs):
            for index, case in enumerate(self.suite.cases):
                for model in self.models:
                    for arm in ARMS:
                        if (model.ref, arm, case.id, repeat) not in self.done:
                            items.append((model, arm, index, repeat))
        return items

    async def run(self, progress: Progress | None, stop: StopSignal | None = None,
                  started: Started | None = None, on_round: RoundLine | None = None) -> RunStatus:
        """Run all pending samples (an adaptive design: round by round, until it stops);
        returns the final status ("interrupted" after `stop`)."""
        items = self.work()
        total, finished = len(items), 0  # adaptive: at most these (the fixed plan's)
        stopped = False
        pairs = Pairs(self.suite, self.judge, self.done)  # pairwise checks: both arms' rows
        if started:
            cached = sum(in_cache(self, item) for item in items)
            self.probes.show(started, self.writer.manifest, total, cached)

        def keep(row: ResultRow) -> None:
            nonlocal finished
            self.writer.add(row)
            finished += 1
            if progress:
                progress(finished, total, row)

        async def one(item: tuple[Model, Arm, int, int], round_: int | None = None) -> None:
            nonlocal stopped
            try:
                answered = await self.sample(*item)
                answered.round = round_
                settled = await pairs.settle(answered)  # may ask the judge: capped too
            except CapReached:
                stopped = True
                return
            for row in settled:
                if round_ is not None:  # an outcome of the design, in run order
                    self.history[row.model][row.case_id][row.arm].append(
                        None if row.is_error else row.passed)
                self.probes.show(keep, row)

        async def asked(round_items: list[tuple[tuple[Model, Arm, int, int], int]]) -> bool:
            return await gather_until_stopped((one(item, r) for item, r in round_items), stop,
                                              before_cancel=self._mark_interrupted) \
                and not stopped

        work = run_rounds(self, asked, on_round) if self.adaptive else \
            gather_until_stopped((one(item) for item in items), stop,
                                 before_cancel=self._mark_interrupted)
        try:
            ended = await self.probes.around(work, stop)
            for row in pairs.left():  # answers a stop or the cap left unpaired: kept
                keep(row)
            if not ended and stop is not None and stop.is_set():
                return "interrupted"
        finally:
            await self.aclose(self._judge_models)  # the run's models, and its judge's
        return "stopped" if stopped else "complete"

    def _mark_interrupted(self) -> None:
        """On a stop, before every call in flight is cancelled: say so on disk first (a second
        Ctrl-C may end the process at any moment); finished rows are already written."""
        self.writer.manifest.status = "interrupted"
        self.writer.save_manifest()


def run_evaluation(skill_dir: str | Path, config: EvalConfig, settings: Settings, *,
                   tests: str | Path | None = None, progress: Progress | None = None,
                   resume: str | None = None, done: list[ResultRow] | None = None,
                   published: SkillVersionRef | None = None,
                   warn: Callable[[str], None] | None = None, stop: StopSignal | None = None,
                   started: Started | None = None,
                   on_round: RoundLine | None = None) -> EvalRun:
    """Evaluate a skill folder: baseline vs skill on each model; results saved as a run.

    The keys `settings` carries (typed into the Space, say) are held for the run, so they are
    scrubbed from what it writes even when the environment does not hold them.
    Code checks run in the sandbox `config.sandbox` names (`none` only for a folder of the
    user's own: not pulled, not `published`); `warn` receives a warning to show first.
    `published` is the published version the folder is: the run's rows are filed under it.
    `started` gets the manifest (its run id), the number of answers to get and how many of them
    the response cache holds (they cost nothing), before the first call. After `stop` is
    requested the run ends within moments as `interrupted`, keeping every finished row
    (`resume` finishes it). `done` are rows answered elsewhere (a shard's earlier
    tries): the new run keeps those it plans and asks only for the other samples.
    `config.design` "adaptive" asks in rounds until the verdict is decided (`adaptive`);
    `on_round` gets a line saying what the design is doing before each round.

    Raises:
        HubskillsError: a bad skill or suite, code checks and no sandbox, an unknown model or
            a missing key, rows `done` of another version of the skill or suite, a design
            parameter out of range, a design that is not the resumed run's, a `--max-cost`
            below one adaptive round's estimated cost, before any model is called.
    """
    if resume and done is not None:
        raise ValueError("run_evaluation takes `resume` or `done`, not both")
    with holding(*settings.secrets()):
        return _run_evaluation(skill_dir, config, settings, tests=tests, progress=progress,
                               resume=resume, done=done or [], published=published, warn=warn,
                               stop=stop, started=started, on_round=on_round)


def _run_evaluation(skill_dir: str | Path, config: EvalConfig, settings: Settings, *,
                    tests: str | Path | None, progress: Progress | None, resume: str | None,
                    done: list[ResultRow], published: SkillVersionRef | None,
                    warn: Callable[[str], None] | None, stop: StopSignal | None,
                    started: Started | None, on_round: RoundLine | None) -> EvalRun:
    skill = load_skill(skill_dir)
    manifest = read_manifest(settings.runs_dir, resume) if resume else None
    agent = (manifest.mode if manifest else config.mode) == "agent"
    if agent:  # its module loads the agent's tool loop and the sandbox: a chat run does not
        from registry.evaluation.agent_mode import agent_note, agent_suite_path, check_agent_sandbox
    default_suite = agent_suite_path(skill.path) if agent else suite_path(skill.path)
    suite_file = tests or default_suite
    full = load_suite(suite_file, skill_dir=skill.path)
    if manifest is not None:
        check_resumable(manifest, skill, full, mode=config.mode)
        config = resumed_config(manifest, config)
    suite = full.select(config.case_ids, source=suite_file) if config.case_ids else full
    command = f"hubskills eval {skill_dir}"
    check_suite(suite, judge=config.judge, runs=config.runs, command=command)
    design = make_design(config, len(suite.cases), None if manifest is None else
                         manifest.design or {"kind": "fixed"}, command=command)
    check_writable(settings)
    if agent:
        check_agent_sandbox(config.sandbox, skill.path)
    code = choose(config.sandbox, settings, has_code=agent or has_code_checks(suite.cases),
                  code_checks=config.code_checks, folder=None if published else skill.path)
    if manifest is not None:
        # already the run's: kept as they are (an adaptive design's errors too: outcomes it
        # planned on; a fixed run asks its errored samples again)
        done = [r for r in resumed_rows(manifest, settings.runs_dir)
                if design and design.kind == "adaptive" or not r.is_error]
        manifest.status = "running"
        if not manifest.skill_repo:  # identified now: the resumed rows join it
            file_under(manifest, published)
    else:
        manifest = new_manifest(skill, full, suite, config, published)
        manifest.skill_path = str(skill.path.resolve())  # local runs only: verify reads it
        done = planned_rows(manifest, done)
        manifest.design = design.to_dict() if design else {"kind": "fixed", "runs": config.runs}
    manifest.sandbox, manifest.code_checks = code.sandbox_name, code.status
    evaluator = Evaluator(skill, suite, config, settings, {_sample(r) for r in done}, code)
    evaluator.refuse_unpriced(evaluator._judge_models, command)
    check_here(evaluator.models, lambda: {item[0].ref for item in evaluator.work()
                                          if not in_cache(evaluator, item)})
    evaluator.design = design
    evaluator.dependencies = load_dependencies(  # costs nothing; before a round is priced
        skill, config.dependencies, manifest, resume=bool(resume), command=command)
    if evaluator.adaptive:
        evaluator.history = history_of(config.models, [c.id for c in suite.cases], done)
        check_round_budget(evaluator, command)
    mode_warning = check_mode(evaluator.models, config.mode, f"hubskills eval {skill_dir}")
    if agent:  # a harness that cannot run fails here, before the run is saved
        mode_warning = agent_note(evaluator)
    for warning in (code.warning, mode_warning, None if agent else agent_tasks(suite, command)):
        if warning and warn:
            warn(warning)
    evaluator.writer = RunWriter(settings.runs_dir, manifest, resume=bool(resume))
    for row in [] if resume else done:  # told, not resumed: they join the new run
        evaluator.writer.add(row.model_copy(update={"run_id": manifest.run_id}))
    return _execute(evaluator, settings, progress, stop, started, on_round)


def _sample(row: ResultRow) -> tuple[str, str, str, int]:
    return row.model, row.arm, row.case_id, row.repeat


def _execute(evaluator: Evaluator, settings: Settings, progress: Progress | None,
             stop: StopSignal | None, started: Started | None,
             on_round: RoundLine | None = None) -> EvalRun:
    """Run the evaluator's pending samples, then close its run with what it has; the run as
    written, read back."""
    writer = evaluator.writer
    run_id = writer.manifest.run_id
    status: RunStatus = "interrupted"
    note = None
    try:
        with frozen():  # what exists now outlives the run: collections need not walk it
            status = run_until_stopped(evaluator.run(progress, stop, started, on_round), stop)
        note = run_note(status, evaluator, stop)
    except Exception as err:  # the run's listing says why it ended (`failed to start: ...`)
        note = getattr(err, "message", None) or f"{type(err).__name__}: {err}"
        raise
    finally:
        if evaluator.probes.refused:  # a dead endpoint: refused as if before the run began
            writer.discard()
        else:
            rows = latest_rows(read_rows(settings.runs_dir, run_id))
            count_samples(writer.manifest, rows, status)
            if evaluator.adaptive:  # complete once every plan has stopped
                writer.manifest.design_stops = evaluator.design_stops
                writer.manifest.partial = status != "complete" or \
                    len(evaluator.design_stops) < len(evaluator.models)
            writer.manifest.summaries = stored_summaries(rows, writer.manifest)
            writer.close(status, note)
        evaluator.cache.close()
    rows = latest_rows(read_rows(settings.runs_dir, run_id))  # read back: scrubbed, as later
    spent = None if evaluator.cap.unknown else evaluator.cap.spent
    return EvalRun(read_manifest(settings.runs_dir, run_id), rows, spent)
