"""hubskills' own agent loop: a model with file and shell tools works in the workspace.

    runner = ToolLoopRunner(complete, sandbox)        # complete(messages, tools, seed)
    outcome = await runner.run(task)

Each turn is one model call through `complete` (the evaluation engine passes its cached call,
so a rerun repeats none); each tool call it returns runs in `WorkspaceTools`. The loop ends when
the model answers without a tool call or on the first budget reached (turns, tool calls,
tokens, wall time), which `stop_reason` names.

The skill arm's system prompt lists the skill the way agents do (name, description, the path of
its SKILL.md, read it when it applies); the baseline's has no listing and its workspace no skill
folder. Nothing else differs.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from registry.agent.outcome import AgentOutcome, AgentTask, StopReason, TranscriptEntry
from registry.agent.tools import TOOLS, WorkspaceTools
from registry.providers.base import Completion, Message, ToolSpec, add_cost
from registry.sandbox import Sandbox

CompleteFn = Callable[[list[Message], list[ToolSpec], int], Awaitable[tuple[Completion, bool]]]
"""(messages, tools, seed) -> (completion, whether it came from the cache)."""

AGENT_SYSTEM = (
    "You are a coding agent working in a project folder, which is your current directory. "
    "Use the tools to look at files, write and edit them, and run commands; paths are relative "
    "to the project folder. When the task is done, reply with a short summary and no tool call."
)


def system_prompt(task: AgentTask) -> str:
    """The system prompt of `task`'s arm: the skill listing only when it has a skill (then the
    skills it requires after it)."""
    if task.skill_path is None:
        return AGENT_SYSTEM
    return skills_prompt([(task.skill_name or "", task.skill_description or "",
                           task.skill_path), *task.required])


def skills_prompt(skills: list[tuple[str, str, str]]) -> str:
    """The system prompt listing `skills` as (name, description, folder), in that order (trigger
    evals list a skill among others this same way)."""
    listed = "\n".join(f"- {name}: {description} (file: {folder}/SKILL.md)"
                        for name, description, folder in skills)
    return (f"{AGENT_SYSTEM}\n\nSkills available in this project (read a skill's SKILL.md with "
            f"read_file when it applies to the task, before you start, and follow it):\n{listed}")


class ToolLoopRunner:
    """An `AgentRunner` driving a tool-calling model; `clock` is replaceable in tests."""

    name = "tools"

    def __init__(self, complete: CompleteFn, sandbox: Sandbox | None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.complete, self.sandbox, self.clock = complete, sandbox, clock

    async def run(self, task: AgentTask) -> AgentOutcome:
        """Work in `task.workspace` until the model answers or a budget runs out."""
        outcome = AgentOutcome(protocol=self.name, cached=True)
        tools = WorkspaceTools(task.workspace, self.sandbox, task.budget, outcome,
                               task.skill_path)
        messages = [Message("system", system_prompt(task)), Message("user", task.prompt)]
        outcome.transcript += [TranscriptEntry("system", messages[0].content),
                               TranscriptEntry("user", task.prompt)]
        started = self.clock()
        async with tools:  # errors, budget stops and cancellation too end its sandbox session
            stop = await self._loop(task, tools, messages, outcome, started)
        outcome.stop_reason = stop
        outcome.wall_s = self.clock() - started
        if stop != "answered":
            outcome.transcript.append(TranscriptEntry("note", f"stopped: {stop} budget reached"))
        return outcome

    async def _loop(self, task: AgentTask, tools: WorkspaceTools, messages: list[Message],
                    outcome: AgentOutcome, started: float) -> StopReason:
        budget = task.budget
        calls = 0
        while True:
            if outcome.turns >= budget.max_turns:
                return "turns"
            if outcome.input_tokens + outcome.output_tokens >= budget.max_tokens:
                return "tokens"
            if self.clock() - started >= budget.wall_s:
                return "wall_time"
            completion, cached = await self.complete(messages, TOOLS, task.seed)
            _account(outcome, completion, cached)
            outcome.final_text = completion.text
            if completion.text or not completion.tool_calls:
                outcome.transcript.append(TranscriptEntry("assistant", completion.text))
            if not completion.tool_calls:
                return "answered"
            messages.append(Message("assistant", completion.text,
                                    tool_calls=completion.tool_calls))
            for call in completion.tool_calls:
                if calls >= budget.max_tool_calls:
                    return "tool_calls"
                calls += 1
                outcome.transcript.append(TranscriptEntry(
                    "tool_call", tool=call.name, arguments=dict(call.arguments),
                    call_id=call.id))
                left = budget.wall_s - (self.clock() - started)
                result, failed = await tools.call(call, time_left=left)
                outcome.transcript.append(TranscriptEntry(
                    "tool_result", result, tool=call.name, call_id=call.id, is_error=failed))
                messages.append(Message("tool", result, tool_call_id=call.id))

    async def aclose(self) -> None:
        """Nothing to release: the model's connections belong to the caller."""


def _account(outcome: AgentOutcome, completion: Completion, cached: bool) -> None:
    outcome.turns += 1
    outcome.input_tokens += completion.usage.input_tokens
    outcome.output_tokens += completion.usage.output_tokens
    outcome.cached = outcome.cached and cached
    outcome.cost_usd = add_cost(outcome.cost_usd, completion.cost_usd)
