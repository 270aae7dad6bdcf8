"""What every agent runner is given (`AgentTask`, `Budget`) and what it returns (`AgentOutcome`).

A runner is hubskills' own tool loop or an adapter around a real agent CLI; the engine sees only
this interface. Activation is measured from what the agent opened or ran under the skill's
folder: `skill_files` holds those paths relative to the skill (`SKILL.md`, `references/x.md`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

StopReason = Literal["answered", "turns", "tool_calls", "tokens", "wall_time", "error"]
"""Why the agent stopped: it answered without a tool call, or it hit one of its budgets."""


@dataclass(frozen=True)
class Budget:
    """What one sample may spend; the first limit reached stops the agent."""

    max_turns: int = 20
    max_tool_calls: int = 40
    max_tokens: int = 200_000  # input + output over the whole sample
    wall_s: float = 600.0
    command_timeout_s: float = 120.0  # one `run` tool call
    output_chars: int = 8_000  # a tool result is clipped to this many characters

    @classmethod
    def recorded(cls, limits: Mapping[str, float]) -> Budget:
        """The budget a run's manifest recorded (`agent_budget`), its numbers as stored there:
        floats, which bound a sample exactly as the whole numbers they were written from."""
        fields: dict[str, Any] = dict(limits)
        return cls(**fields)


@dataclass(frozen=True)
class AgentTask:
    """One sample: the prompt, the seeded workspace, and the skill's place in it (None for the
    baseline arm, which has no skill folder and no listing)."""

    prompt: str
    workspace: Path
    skill_name: str | None = None
    skill_description: str | None = None
    skill_path: str | None = None  # relative to the workspace: `.agents/skills/<name>`
    # the skills the skill requires, placed beside it: (name, description, folder) each
    required: tuple[tuple[str, str, str], ...] = ()
    budget: Budget = field(default_factory=Budget)
    seed: int = 0  # the repeat index: cache keys and sampling seeds include it
    case_id: str = ""  # the suite's case, for the harness's cache keys ("" outside a suite)


@dataclass
class TranscriptEntry:
    """One step of a trajectory, JSON-ready: a message, a tool call or a tool result."""

    kind: Literal["system", "user", "assistant", "tool_call", "tool_result", "note"]
    text: str = ""
    tool: str | None = None
    arguments: dict[str, Any] | None = None
    call_id: str | None = None
    is_error: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The entry without its empty fields."""
        fields = {"kind": self.kind, "text": self.text, "tool": self.tool,
                  "arguments": self.arguments, "call_id": self.call_id}
        data: dict[str, Any] = {k: v for k, v in fields.items() if v not in (None, "")}
        if self.is_error:
            data["is_error"] = True
        return data


def call_arguments(arguments: dict[str, Any] | None, limit: int = 60) -> str:
    """A tool call's arguments on one line, for transcripts: `key='value', ...`, each value
    cut to `limit` characters, newlines shown as ⏎ (the CLI and the Space both print this)."""
    def short(value: object) -> str:
        text = (value if isinstance(value, str) else repr(value)).replace("\n", "⏎")
        return repr(text if len(text) <= limit else text[: limit - 1] + "…")

    return ", ".join(f"{key}={short(value)}" for key, value in (arguments or {}).items())


@dataclass
class AgentOutcome:
    """How one sample went. `cost_usd` None when a price is unknown (never counted as $0)."""

    final_text: str = ""
    protocol: str = "tools"  # "tools", "single-turn" (no tool calling) or "harness:<name>"
    stop_reason: StopReason = "answered"
    turns: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)  # calls per tool name
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    wall_s: float = 0.0
    skill_files: list[str] = field(default_factory=list)  # opened or run, relative to the skill
    transcript: list[TranscriptEntry] = field(default_factory=list)
    cached: bool = False  # every model call came from the response cache
    error: str | None = None  # a transport failure after retries (not a graded failure)

    @property
    def activated(self) -> bool:
        """Whether the agent read the skill's SKILL.md."""
        return "SKILL.md" in self.skill_files

    def count_tool(self, name: str) -> None:
        """Record one call of tool `name`."""
        self.tool_calls[name] = self.tool_calls.get(name, 0) + 1

    def saw_skill_file(self, rel: str) -> None:
        """Record that the agent opened or ran `rel` (relative to the skill folder)."""
        if rel and rel not in self.skill_files:
            self.skill_files.append(rel)


class AgentRunner(Protocol):
    """Runs one agent sample to the end; `name` is what reports show as the protocol."""

    name: str

    async def run(self, task: AgentTask) -> AgentOutcome:
        """Work in `task.workspace` until the agent answers or a budget runs out."""
        ...

    async def aclose(self) -> None:
        """Release connections and helper processes."""
        ...
