"""Chat Completions over the official `openai` SDK: OpenAI itself, the Hugging Face router, and
any OpenAI-compatible server (llama-server, vLLM, Ollama, LM Studio, `llama_cpp.server`).

The SDK's own retries are off (`max_retries=0`): `Model.complete` is the one retry loop, for
every backend alike. Clients are created lazily, once per event loop (`SDKProvider`).
"""

from __future__ import annotations

import json
import re
import time
from types import ModuleType
from typing import Any, ClassVar

from registry._gc import import_kept
from registry.errors import ProviderError
from registry.providers._sdk import PROBE_TIMEOUT_S, SDKProvider
from registry.providers.base import BadResponse, Completion, Message, ToolCall, ToolSpec, Usage

DEFAULT_TIMEOUT_S = 120.0
OVERFLOW_CODES = frozenset({"context_length_exceeded", "string_above_max_length"})
_REASONING_MODEL = re.compile(r"^(?:o\d|gpt-[5-9])(?!.*chat)")


class OpenAICompat(SDKProvider):
    """A provider for one OpenAI-compatible endpoint (`base_url` ends in `/v1`)."""

    name: ClassVar[str] = "openai-compatible"
    default_concurrency: ClassVar[int] = 4

    def __init__(self, *, base_url: str, api_key: str | None, timeout: float = DEFAULT_TIMEOUT_S,
                 http_client: Any = None) -> None:
        super().__init__(base_url=base_url, api_key=api_key or "sk-no-key", timeout=timeout,
                         http_client=http_client)

    @staticmethod
    def sdk() -> ModuleType:
        """The `openai` module."""
        return import_kept("openai")

    def new_client(self) -> Any:
        """An `openai.AsyncOpenAI` client with the SDK's retries off."""
        return self.sdk().AsyncOpenAI(base_url=self.base_url, api_key=self.api_key,
                                      max_retries=0, timeout=self.timeout,
                                      http_client=self.http_client())

    async def probe_status(self, status: int) -> None:
        """A server without `GET /models` (404, 405) may still serve chat: an empty request to
        the chat route (rejected unanswered: nothing is generated) tells a missing route."""
        if status not in (404, 405):
            return
        try:
            await self.client().post("/chat/completions", body={}, cast_to=str,
                                     options={"timeout": PROBE_TIMEOUT_S})
        except self.sdk().APIStatusError as exc:
            if exc.status_code in (404, 405):
                raise ProviderError(
                    f"{self.base_url} has no chat completions route (HTTP {exc.status_code} on "
                    f"POST {self.base_url}/chat/completions)",
                    hint="check the address: an OpenAI-compatible --base-url usually ends in "
                         "/v1 (http://127.0.0.1:8080/v1)") from exc
        except self.sdk().APIConnectionError:
            return  # it answered the listing a moment ago: the run's own calls will tell

    def is_overflow(self, exc: Any) -> bool:
        """OpenAI's error codes for a prompt over the context window."""
        return getattr(exc, "code", None) in OVERFLOW_CODES

    def uses_reasoning_params(self, model: str) -> bool:
        """True when `model` wants `max_completion_tokens` and rejects temperature and stop."""
        return False

    async def complete(self, messages: list[Message], *, model: str,
                       tools: list[ToolSpec] | None = None, temperature: float = 0.0,
                       max_tokens: int = 512, seed: int | None = None,
                       stop: list[str] | None = None) -> Completion:
        """Send one chat completion request (one attempt)."""
        body = self.request_body(messages, model=model, tools=tools, temperature=temperature,
                                 max_tokens=max_tokens, seed=seed, stop=stop)
        started = time.perf_counter()
        # The SDK's generic `post` (its documented way to send a body as is; auth, errors and
        # retries-off are the same): `create` would first walk the whole body against its
        # TypedDicts, a no-op for these plain JSON values that took 40% of an agent run's CPU,
        # and `cast_to=object` hands back the JSON itself (read by `_completion`).
        response = await self.client().post("/chat/completions", body=body, cast_to=object)
        emulate_stop = stop if "stop" not in body else None
        return _completion(response, time.perf_counter() - started, emulate_stop)

    def request_body(self, messages: list[Message], *, model: str, tools: list[ToolSpec] | None,
                     temperature: float, max_tokens: int, seed: int | None,
                     stop: list[str] | None) -> dict[str, Any]:
        """The JSON body for `POST /chat/completions`."""
        body: dict[str, Any] = {"model": model, "messages": [_message(m) for m in messages]}
        if self.uses_reasoning_params(model):
            # o-series and GPT-5+ reasoning models: the budget covers hidden reasoning too, and
            # they accept neither temperature nor stop (stop is applied to the text instead).
            body["max_completion_tokens"] = max_tokens
        else:
            body["max_tokens"] = max_tokens
            body["temperature"] = temperature
            if stop:
                body["stop"] = list(stop)
        if seed is not None:
            body["seed"] = seed
        if tools:
            body["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}}
                for t in tools]
        return body


def _message(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "",
                "content": message.content}
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["content"] = message.content or None
        wire["tool_calls"] = [{"id": c.id, "type": "function", "function": {
            "name": c.name, "arguments": json.dumps(c.arguments)}} for c in message.tool_calls]
    return wire


def _arguments(raw: str | None) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


def _usage(usage: Any) -> Usage:
    if not isinstance(usage, dict):
        return Usage()
    prompt = usage.get("prompt_tokens_details") or {}
    completion = usage.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=_count(usage, "prompt_tokens"),
        output_tokens=_count(usage, "completion_tokens"),
        cache_read_tokens=_count(prompt, "cached_tokens"),
        cache_write_tokens=_count(prompt, "cache_write_tokens"),
        reasoning_tokens=_count(completion, "reasoning_tokens"),
    )


def _count(fields: Any, name: str) -> int:
    value = fields.get(name) if isinstance(fields, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _completion(response: Any, latency_s: float, emulate_stop: list[str] | None) -> Completion:
    """The answer from the response's JSON as the server sent it (the SDK's `cast_to=object`:
    building its typed `ChatCompletion` was a fifth of a call's CPU, for fields read once)."""
    choices = response.get("choices") if isinstance(response, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise BadResponse("the server answered without any choice")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise BadResponse("the server's choice has no message")
    text = message.get("content") or ""
    if not isinstance(text, str):
        raise BadResponse(f"the server's message content is a {type(text).__name__}, not text")
    finish = choice.get("finish_reason") or "stop"
    if emulate_stop:
        cut = min((i for i in (text.find(s) for s in emulate_stop) if i >= 0), default=-1)
        if cut >= 0:
            text, finish = text[:cut], "stop"
    return Completion(text=text, tool_calls=_tool_calls(message.get("tool_calls")),
                      finish_reason=str(finish), model=str(response.get("model") or ""),
                      latency_s=latency_s, usage=_usage(response.get("usage")))


def _tool_calls(calls: Any) -> list[ToolCall]:
    if not isinstance(calls, list):
        return []
    out = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            raw = function.get("arguments")  # a JSON string; a few servers send the object
            arguments = raw if isinstance(raw, dict) else _arguments(
                raw if isinstance(raw, str) else None)
            out.append(ToolCall(id=str(call.get("id") or ""), name=function["name"],
                                arguments=arguments))
    return out


class OpenAIProvider(OpenAICompat):
    """api.openai.com (or `OPENAI_BASE_URL`), keyed by `OPENAI_API_KEY`."""

    name: ClassVar[str] = "openai"
    variable: ClassVar[str | None] = "OPENAI_API_KEY"
    default_concurrency: ClassVar[int] = 16

    def uses_reasoning_params(self, model: str) -> bool:
        """o-series and GPT-5+ models (but not the `*-chat-*` ones) are reasoning models."""
        return bool(_REASONING_MODEL.match(model))


class HFRouterProvider(OpenAICompat):
    """Hugging Face Inference Providers through the OpenAI-compatible router, keyed by
    `HF_TOKEN`; model ids are `org/model[:provider]`."""

    name: ClassVar[str] = "hf"
    variable: ClassVar[str | None] = "HF_TOKEN"
    default_concurrency: ClassVar[int] = 8


class LocalProvider(OpenAICompat):
    """Any OpenAI-compatible server you run yourself; the API key is optional."""

    name: ClassVar[str] = "local"
    default_concurrency: ClassVar[int] = 4
