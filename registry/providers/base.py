"""The provider seam: messages in, a `Completion` out, whatever the backend.

Every backend (Anthropic, OpenAI-compatible servers, the embedded llama.cpp model) turns a list
of `Message`s into one `Completion` through `Provider.complete`. Tool calls, token usage and
latency are normalized here so the evaluation engine never looks at an SDK type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant", "tool"]

FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter")
"""Normalized finish reasons (OpenAI's vocabulary); providers map theirs onto these."""


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call; `parameters` is a JSON Schema object."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})


@dataclass(frozen=True)
class ToolCall:
    """A call the model asked for. `arguments` is the decoded JSON object.

    When a server returns arguments that are not a JSON object, they are kept as
    `{"_raw": "<text>"}` so nothing the model said is lost.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Message:
    """One chat message. Assistant messages may carry `tool_calls`; tool results carry the
    `tool_call_id` they answer."""

    role: Role
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None


@dataclass(frozen=True)
class Usage:
    """Token counts as the provider reported them.

    `input_tokens` counts every prompt token, cached ones included; `cache_read_tokens` and
    `cache_write_tokens` are the parts of it read from or written to a prompt cache.
    `output_tokens` counts every generated token; `reasoning_tokens` is the part spent on
    hidden reasoning.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Completion:
    """A model's answer: text, tool calls, why it stopped, and what it cost.

    `model` is the id the server reported (it may name a dated snapshot); `cost_usd` is None
    when the price is unknown, never 0 for a paid model.
    """

    text: str
    tool_calls: list[ToolCall]
    finish_reason: str
    model: str
    latency_s: float
    usage: Usage
    cost_usd: float | None = None


@runtime_checkable
class Provider(Protocol):
    """A model backend. One instance serves many calls and is safe to share across tasks."""

    name: ClassVar[str]
    default_concurrency: int

    async def complete(
        self,
        messages: list[Message],
        *,
        model: str,
        tools: list[ToolSpec] | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
        stop: list[str] | None = None,
    ) -> Completion:
        """Send `messages` to `model` and return its completion."""
        ...
