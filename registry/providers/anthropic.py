"""Claude over the official `anthropic` SDK (Messages API).

System messages go to `system=`; tool calls become `tool_use` blocks and tool results
`tool_result` blocks in the next user turn. Anthropic's API has no seed: it is ignored.
Claude Opus 4.7 and every model since reject sampling parameters (`temperature` returns
HTTP 400), so temperature is only sent to the older models that accept it.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any, ClassVar

from registry.providers._clients import LoopClients
from registry.providers._retry import CallContext, RetryPolicy, Transient, translate, with_retries
from registry.providers.base import Completion, Message, ToolCall, ToolSpec, Usage

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_TIMEOUT_S = 300.0
_TAKES_TEMPERATURE = re.compile(
    r"^claude-(?:3[-\w.]*|(?:opus|sonnet|haiku)-4(?:-[0-6])?(?:-\d{8})?)$")
_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
           "tool_use": "tool_calls", "refusal": "content_filter",
           "model_context_window_exceeded": "length"}
_OVERFLOW_CODES = frozenset({"prompt_too_long", "context_window_exceeded"})


def takes_temperature(model: str) -> bool:
    """True for the Claude models (3.x up to 4.6) that still accept `temperature`."""
    return bool(_TAKES_TEMPERATURE.match(model))


class AnthropicProvider:
    """Anthropic's Messages API, keyed by `ANTHROPIC_API_KEY`."""

    name: ClassVar[str] = "anthropic"
    variable: ClassVar[str] = "ANTHROPIC_API_KEY"
    default_concurrency: int = 8

    def __init__(self, *, base_url: str | None, api_key: str, timeout: float = DEFAULT_TIMEOUT_S,
                 retry: RetryPolicy | None = None, http_client: Any = None) -> None:
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._http_client = http_client
        self._clients = LoopClients(self._new_client)

    def __repr__(self) -> str:
        return f"AnthropicProvider(base_url={self.base_url!r})"

    def _new_client(self) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                                         timeout=self.timeout, http_client=self._http_client)

    def client(self) -> Any:
        """The `anthropic.AsyncAnthropic` client for the running event loop."""
        return self._clients.get()

    async def aclose(self) -> None:
        """Close the running loop's client (its connection pool dies with the loop)."""
        await self._clients.aclose()

    async def complete(self, messages: list[Message], *, model: str,
                       tools: list[ToolSpec] | None = None, temperature: float = 0.0,
                       max_tokens: int = 512, seed: int | None = None,
                       stop: list[str] | None = None) -> Completion:
        """Send one Messages request, retrying transient failures. `seed` is ignored."""
        import anthropic

        body = request_body(messages, model=model, tools=tools, temperature=temperature,
                            max_tokens=max_tokens, stop=stop)
        context = CallContext(self.name, model, self.base_url, self.variable)

        async def attempt() -> Completion:
            started = time.perf_counter()
            try:
                response = await self.client().messages.create(**body)
            except Exception as exc:
                mapped = translate(exc, anthropic, context, _is_overflow)
                if mapped is exc:
                    raise
                raise mapped from exc
            return _completion(response, time.perf_counter() - started)

        return await with_retries(attempt, policy=self.retry, context=context)


def request_body(messages: list[Message], *, model: str, tools: list[ToolSpec] | None,
                 temperature: float, max_tokens: int, stop: list[str] | None) -> dict[str, Any]:
    """The keyword arguments for `messages.create`."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens,
                            "messages": _turns([m for m in messages if m.role != "system"])}
    if system:
        body["system"] = system
    if stop:
        body["stop_sequences"] = list(stop)
    if tools:
        body["tools"] = [{"name": t.name, "description": t.description,
                          "input_schema": t.parameters} for t in tools]
    if takes_temperature(model):
        # The current SDK no longer has a `temperature` argument; older models still take it.
        body["extra_body"] = {"temperature": temperature}
    return body


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        return [{"type": "tool_result", "tool_use_id": message.tool_call_id or "",
                 "content": message.content}]
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                  for c in message.tool_calls)
    return blocks


def _turns(messages: list[Message]) -> list[dict[str, Any]]:
    """Alternate user/assistant turns: tool results ride in a user turn, and consecutive
    messages of one role are merged (all results of one tool round must share a turn)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = "user" if message.role == "tool" else message.role
        blocks = _blocks(message)
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:  # plain single-text turns go as strings, the common shape
        content = turn["content"]
        if len(content) == 1 and content[0]["type"] == "text":
            turn["content"] = content[0]["text"]
    return turns


def _is_overflow(exc: Any) -> bool:
    if getattr(exc, "type", None) != "invalid_request_error":
        return False
    if getattr(exc, "error_code", None) in _OVERFLOW_CODES:
        return True
    # Anthropic has no stable code for this yet: its documented message is the signal.
    return "prompt is too long" in (getattr(exc, "api_message", None) or "").lower()


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    read = usage.cache_read_input_tokens or 0
    write = usage.cache_creation_input_tokens or 0
    details = getattr(usage, "output_tokens_details", None)
    return Usage(
        input_tokens=(usage.input_tokens or 0) + read + write,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=read,
        cache_write_tokens=write,
        reasoning_tokens=getattr(details, "thinking_tokens", None) or 0,
    )


def _completion(response: Any, latency_s: float) -> Completion:
    content = getattr(response, "content", None)
    if content is None:
        raise Transient("the server answered without content")
    text = "".join(block.text for block in content if block.type == "text")
    calls = [ToolCall(id=b.id, name=b.name, arguments=dict(b.input or {}))
             for b in content if b.type == "tool_use"]
    reason = response.stop_reason or "end_turn"
    return Completion(text=text, tool_calls=calls, finish_reason=_FINISH.get(reason, reason),
                      model=response.model or "", latency_s=latency_s,
                      usage=_usage(response.usage))
