"""The provider seam: messages in, a `Completion` out, whatever the backend.

Every backend (Anthropic, OpenAI-compatible servers, the embedded llama.cpp model) is a
`Provider` subclass (the shape of inspect_ai's `ModelAPI`): `complete` turns a list of
`Message`s into one `Completion` in one attempt; `should_retry`, `retry_after` and `error` tell
the one retry loop (`Model.complete`) what a failure means; `connection_key`, `aclose` and
`default_concurrency` let callers share, bound and close connections; `price`, `cost` and
`context_window` read the dated data file. Tool calls, token usage and latency are normalized
here so the evaluation engine never looks at an SDK type.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol

from registry.errors import HubskillsError, ProviderError
from registry.providers import pricing

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


def add_cost(total: float | None, cost: float | None) -> float | None:
    """A running dollar total plus `cost`: None once any price is unknown, so a sum never passes
    a missing price off as free."""
    return None if total is None or cost is None else total + cost


class Tally(Protocol):
    """What adds up one sample's completions (a result row, a trigger session)."""

    input_tokens: int
    output_tokens: int
    latency_s: float
    cached: bool
    cost_usd: float | None


def tally(total: Tally, completion: Completion, *, cached: bool) -> None:
    """Add `completion`'s tokens, latency and cost to `total`; `cached` says it came from the
    cache, and the total stays cached only while every completion did."""
    total.input_tokens += completion.usage.input_tokens
    total.output_tokens += completion.usage.output_tokens
    total.latency_s += completion.latency_s
    total.cached = total.cached and cached
    total.cost_usd = add_cost(total.cost_usd, completion.cost_usd)


class BadResponse(Exception):
    """A server answered 200 with something that is not a usable completion (worth a retry)."""


class Provider(ABC):
    """A model backend. One instance per connection (endpoint and key) serves many calls and
    is safe to share across the tasks of an event loop.

    Subclasses implement `complete`, one attempt with no retries of its own: `Model.complete`
    owns the only retry loop and asks `should_retry` (by HTTP status and error type, never by
    message text) and `retry_after` about each failure, and `error` for the `HubskillsError`
    to raise. The defaults suit a backend that never fails transiently (the embedded model).
    """

    name: ClassVar[str]
    """The reference prefix this class serves (`anthropic`, `openai`, `hf`, `local`, ...)."""
    default_concurrency: ClassVar[int] = 4
    """How many calls to run at once against one connection unless told otherwise."""
    supports_tools: ClassVar[bool] = True
    """Whether the backend can return tool calls (`--mode tool` needs it)."""

    @abstractmethod
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
        """Send `messages` to `model` once and return its completion (`cost_usd` unset).

        Raises whatever the backend raises; `HubskillsError`s are final and never retried.
        """

    def check_here(self) -> None:  # noqa: B027 - an optional hook, not an abstract one
        """Find out, without loading anything, that a model run in this process can run on
        this machine (the default: nothing to find out, as for a server's).

        Raises:
            HubskillsError: it cannot (what it needs is not installed), with the fix.
        """

    async def probe(self) -> None:  # noqa: B027 - an optional hook, not an abstract one
        """Find out at no cost, before a run's first call, that the endpoint can answer (the
        default: nothing to find out, as for an in-process model).

        Raises:
            ProviderError: it cannot (nothing listens, a failed TLS handshake, no such route).
        """

    def should_retry(self, exc: Exception) -> bool:
        """Whether a failure of `complete` is transient (worth another attempt)."""
        return isinstance(exc, BadResponse)

    def retry_after(self, exc: Exception) -> float | None:
        """Seconds the server asked to wait before the next attempt, if it said."""
        return None

    def error(self, exc: Exception, model: str) -> HubskillsError | None:
        """The user-facing error for a backend failure, or None for one that is a bug (the
        original exception then propagates)."""
        if isinstance(exc, BadResponse):
            return ProviderError(f"the server sent a malformed response: {exc}")
        return None

    @property
    def endpoint(self) -> str | None:
        """The server this instance talks to (None for an in-process model); part of the
        response cache key, so two servers behind one `local/` name never share answers."""
        return None

    def connection_key(self) -> tuple[str, ...]:
        """Equal for instances that would open the same connections (no secret in clear)."""
        return (self.name,)

    async def aclose(self) -> None:  # noqa: B027 - an optional hook, not an abstract one
        """Close what this instance opened in the running event loop (nothing by default)."""

    def price(self, model: str) -> pricing.Price | None:
        """The price of `model` on this provider; None when unknown."""
        return pricing.price_for(f"{self.name}/{model}")

    def cost(self, model: str, usage: Usage) -> float | None:
        """Dollars for one call to `model` with this usage; None when the price is unknown."""
        return pricing.cost(f"{self.name}/{model}", usage)

    def context_window(self, model: str) -> int | None:
        """Tokens `model` accepts (prompt plus output); None when unknown."""
        return pricing.context_window(f"{self.name}/{model}")
