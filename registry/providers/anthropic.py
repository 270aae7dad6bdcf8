"""Claude over the official `anthropic` SDK (Messages API).

System messages go to `system=`; tool calls become `tool_use` blocks and tool results
`tool_result` blocks in the next user turn. Anthropic's API has no seed: it is ignored.
Claude Opus 4.7 and every model since reject sampling parameters (`temperature` returns
HTTP 400), so temperature is only sent to the older models that accept it.
"""

from __future__ import annotations

import re
import time
from types import ModuleType
from typing import Any, ClassVar

from registry._gc import import_kept
from registry.providers._sdk import SDKProvider
from registry.providers.base import BadResponse, Completion, Message, ToolCall, ToolSpec, Usage

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


class AnthropicProvider(SDKProvider):
    """Anthropic's Messages API, keyed by `ANTHROPIC_API_KEY`."""

    name: ClassVar[str] = "anthropic"
    variable: ClassVar[str | None] = "ANTHROPIC_API_KEY"
    default_concurrency: ClassVar[int] = 8
    probe_path: ClassVar[str] = "/v1/models"  # any answer from it is enough (`probe_status`)

    def __init__(self, *, base_url: str | None, api_key: str, timeout: float = DEFAULT_TIMEOUT_S,
                 http_client: Any = None) -> None:
        super().__init__(base_url=base_url or DEFAULT_BASE_URL, api_key=api_key,
                         timeout=timeout, http_client=http_client)

    @staticmethod
    def sdk() -> ModuleType:
        """The `anthropic` module."""
        return import_kept("anthropic")

    def new_client(self) -> Any:
        """An `anthropic.AsyncAnthropic` client with the SDK's retries off."""
        return self.sdk().AsyncAnthropic(base_url=self.base_url, api_key=self.api_key,
                                         max_retries=0, timeout=self.timeout,
                                         http_client=self.http_client())

    def is_overflow(self, exc: Any) -> bool:
        """Whether an invalid-request error says the prompt is too long."""
        if getattr(exc, "type", None) != "invalid_request_error":
            return False
        if getattr(exc, "error_code", None) in _OVERFLOW_CODES:
            return True
        # Anthropic has no stable code for this yet: its documented message is the signal.
        return "prompt is too long" in (getattr(exc, "api_message", None) or "").lower()

    async def complete(self, messages: list[Message], *, model: str,
                       tools: list[ToolSpec] | None = None, temperature: float = 0.0,
                       max_tokens: int = 512, seed: int | None = None,
                       stop: list[str] | None = None) -> Completion:
        """Send one Messages request (one attempt). `seed` is ignored."""
        body = request_body(messages, model=model, tools=tools, temperature=temperature,
                            max_tokens=max_tokens, stop=stop)
        started = time.perf_counter()
        response = await self.client().messages.create(**body)
        return _completion(response, time.perf_counter() - started)


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
        raise BadResponse("the server answered without content")
    text = "".join(block.text for block in content if block.type == "text")
    calls = [ToolCall(id=b.id, name=b.name, arguments=dict(b.input or {}))
             for b in content if b.type == "tool_use"]
    reason = response.stop_reason or "end_turn"
    return Completion(text=text, tool_calls=calls, finish_reason=_FINISH.get(reason, reason),
                      model=response.model or "", latency_s=latency_s,
                      usage=_usage(response.usage))
