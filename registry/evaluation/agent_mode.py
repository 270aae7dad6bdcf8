"""Agent-mode samples: a fresh seeded workspace, an agent runner, then the checks on both.

Per sample: the case's files are seeded into a temp workspace (the skill arm also gets the
skill at `.agents/skills/<name>/`), the runner works in it, what changed is diffed, the checks
grade the final answer and the workspace, the trajectory is saved with the run, and the folder
is removed. A model that cannot call tools gets the `single-turn` protocol: one answer (the
skill inline in the skill arm, as `--mode inline` does) whose fenced file blocks are written
into the workspace, so workspace checks still run.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from registry.agent import (
    SKILLS_FOLDER,
    AgentOutcome,
    AgentRunner,
    AgentTask,
    TranscriptEntry,
    WorkspaceOverLimit,
    remove_tree,
    seed_workspace,
)
from registry.agent.loop import CompleteFn
from registry.errors import HubskillsError, ProviderError
from registry.evaluation.arms import build_arm
from registry.evaluation.checks import extract_files, grade_row, run_checks
from registry.evaluation.running import RunningEval
from registry.evaluation.sample_errors import failed_row
from registry.format.inputs import is_relative
from registry.format.skill import Skill
from registry.format.suite import Case, suite_path
from registry.providers import Model
from registry.results.replay_record import workspace_record
from registry.results.runs import ResultRow, ToolCount
from registry.sandbox import SessionNotStarted

AGENT_SUITE = "evals/agent.json"
SINGLE_TURN = "single-turn"


def agent_suite_path(skill_dir: Path) -> Path:
    """The suite agent mode runs: `evals/agent.json` when the skill has one, else the usual."""
    agent = Path(skill_dir) / AGENT_SUITE
    return agent if agent.is_file() else suite_path(skill_dir)


def check_agent_sandbox(requested: str, skill_dir: Path) -> None:
    """Agent mode runs the model's commands: only in an isolating sandbox, never `none`.

    Raises:
        HubskillsError: `--sandbox none` was asked for.
    """
    if requested == "none":
        raise HubskillsError(
            "--mode agent runs the commands a model chooses, which run only in a sandbox: "
            "--sandbox none is refused in this mode",
            hint=f"apt-get install bubblewrap, then hubskills eval {skill_dir} --mode agent")


def single_turn_note(models: list[Model]) -> str | None:
    """The note printed before an agent-mode run with models that cannot call tools."""
    lacking = [m.ref for m in models if not m.provider.supports_tools]
    if not lacking:
        return None
    return (f"{', '.join(lacking)} cannot call tools: in agent mode it answers in a single "
            "turn whose fenced file blocks are written into the workspace (protocol "
            "single-turn; the skill is given inline in the skill arm, so no activation is "
            "measured)")


def agent_note(ev: RunningEval) -> str | None:
    """Check agent mode's runners before the run starts; the note to print before it, if any.

    `ev` is the `engine.Evaluator` about to run (its models, config, sandbox and settings).
    With `--harness`, each model's harness is made once now (`ev.agent_runner` makes them per
    sample), so a model that CLI cannot speak to, a run without the bwrap sandbox or a CLI
    that is not installed fails before any call and before the run is saved.

    Raises:
        HubskillsError: what `make_harness` refuses.
    """
    if not ev.config.harness:
        return single_turn_note(ev.models)
    from registry.agent.harness import make_harness  # Node CLIs: only for --harness runs

    for model in ev.models:
        make_harness(ev.config.harness, model=model, sandbox=ev.sandbox, settings=ev.settings)
    return None


class SingleTurnRunner:
    """The fallback for a model without tool calls: one answer, its files written out."""

    name = SINGLE_TURN

    def __init__(self, complete: CompleteFn, case: Case, skill: Skill | None,
                 required: tuple[Skill, ...] = ()) -> None:
        self.complete, self.case, self.skill, self.required = complete, case, skill, required

    async def run(self, task: AgentTask) -> AgentOutcome:
        """One model call; each named fenced block becomes a file in the workspace."""
        arm = "skill" if self.skill is not None else "baseline"
        plan = build_arm(arm, self.case, self.skill,  # type: ignore[arg-type]  # baseline: None,
                         mode="inline", dependencies=self.required)  # which it never reads
        completion, cached = await self.complete(plan.messages, [], task.seed)
        outcome = AgentOutcome(final_text=completion.text, protocol=self.name, turns=1,
                               input_tokens=completion.usage.input_tokens,
                               output_tokens=completion.usage.output_tokens,
                               cost_usd=completion.cost_usd, wall_s=completion.latency_s,
                               cached=cached)
        outcome.transcript = [TranscriptEntry(m.role if m.role != "tool" else "note", m.content)
                              for m in plan.messages]
        outcome.transcript.append(TranscriptEntry("assistant", completion.text))
        for name, text in extract_files(completion.text).items():
            if is_relative(name) and _inside(task.workspace, name):
                target = task.workspace / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                outcome.transcript.append(TranscriptEntry("note", f"wrote {name} from the "
                                                                  "answer's fenced block"))
        return outcome

    async def aclose(self) -> None:
        """Nothing to release."""


def _inside(root: Path, name: str) -> bool:
    """Whether writing `name` stays in `root` (no existing link on the way)."""
    target = root
    for part in Path(name).parts[:-1]:
        target = target / part
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            return False
    return not (root / name).is_symlink()


async def agent_sample(ev: RunningEval, model: Model, arm: str, case: Case, repeat: int,
                       row: ResultRow) -> ResultRow:
    """One agent-mode sample of `case` in `arm`, graded; its trajectory is saved.

    `ev` is the running evaluation (`engine.Evaluator`): its skill, config, judge, sandbox,
    writer and `agent_runner` are used.
    """
    # The workspace is made and removed in a worker thread: file system work on the loop
    # would hold up the other samples' model calls.
    root = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="hubskills-agent-"))
    try:
        ws = await asyncio.to_thread(seed_workspace, root / "workspace", case.files,
                                     skill=ev.skill if arm == "skill" else None,
                                     required=ev.dependencies)  # placed with the skill only
        task = AgentTask(case.prompt, ws.path, skill_name=ws.skill_path and ev.skill.name,
                         skill_description=ws.skill_path and ev.skill.description,
                         skill_path=ws.skill_path, budget=ev.config.budget, seed=repeat,
                         case_id=case.id,
                         required=required_listing(ev.dependencies) if ws.skill_path else ())
        runner: AgentRunner = ev.agent_runner(model, case, arm)
        try:
            outcome = await runner.run(task)
        except (ProviderError, WorkspaceOverLimit, SessionNotStarted) as exc:
            return failed_row(row, exc)
        finally:
            await runner.aclose()
        _fill(row, outcome, case, arm)
        try:
            changes = await asyncio.to_thread(ws.diff)
            row.workspace = workspace_record(changes, await asyncio.to_thread(ws.files))
        except WorkspaceOverLimit as exc:  # what the agent left: its arm's failure
            return failed_row(row, exc)
        if outcome.error:
            row.error, row.error_kind = outcome.error, "transport"
        else:
            grade_row(row, await run_checks(case, outcome.final_text, judge=ev.judge,
                                            sandbox=ev.sandbox, skip_reason=ev.skip_reason,
                                            workspace=ws.path))
        ev.writer.add_transcript({
            "model": row.model, "arm": arm, "case_id": case.id, "repeat": repeat,
            "protocol": outcome.protocol, "stop_reason": outcome.stop_reason,
            "prompt": case.prompt, "transcript": [e.to_dict() for e in outcome.transcript],
            "diff": [c.to_dict() for c in changes], "skill_files": outcome.skill_files})
        return row
    finally:
        await asyncio.to_thread(remove_tree, root)  # however deep the agent made it


def required_listing(skills: tuple[Skill, ...]) -> tuple[tuple[str, str, str], ...]:
    """The skills the skill requires as an agent lists them: (name, description, folder)."""
    return tuple((s.name, s.description, f"{SKILLS_FOLDER}/{s.name}") for s in skills)


def _fill(row: ResultRow, outcome: AgentOutcome, case: Case, arm: str) -> None:
    row.output = outcome.final_text
    row.input_tokens, row.output_tokens = outcome.input_tokens, outcome.output_tokens
    row.cost_usd, row.cached = outcome.cost_usd, outcome.cached
    row.latency_s, row.wall_s = outcome.wall_s, outcome.wall_s
    row.protocol, row.turns, row.stop_reason = outcome.protocol, outcome.turns, \
        outcome.stop_reason
    row.tool_calls = [ToolCount(tool=k, calls=v) for k, v in sorted(outcome.tool_calls.items())]
    row.skill_files = list(outcome.skill_files)
    row.expect_skill = case.expect_skill
    measured = arm == "skill" and outcome.protocol != SINGLE_TURN
    row.activated = outcome.activated if measured else None
