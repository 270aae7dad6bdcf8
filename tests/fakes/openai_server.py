"""A fake OpenAI Chat Completions API on 127.0.0.1, for the real `openai` SDK.

    with FakeOpenAIServer() as server:              # server.url ends in /v1
        server.enqueue("Paris", {"tool_calls": [{"name": "load_skill", "arguments": {}}]})
        server.fail_next(2, status=429, retry_after=0.01)
        ... point openai.AsyncOpenAI(base_url=server.url) or `local/<m>` at it ...
        server.bodies[-1]["messages"]; server.requests[-1]["headers"]

Routes: `POST /v1/chat/completions`, `GET /v1/models`. With `api_key` set, other bearer
tokens get 401; with `models` set, other models get 404 `model_not_found`; with
`context_window` set, longer prompts get 400 `context_length_exceeded`. Usage counts one token
per word (4 more per message); a reply dict's `usage` may override `prompt_tokens`,
`completion_tokens`, `cached_tokens`, `cache_write_tokens` and `reasoning_tokens`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from .llm_server import FakeLLMServer, Reply, apply_stop, content_text, count_tokens, truncate

__all__ = ["FakeOpenAIServer"]


def prompt_tokens(body: dict[str, Any]) -> int:
    """The fake's count of prompt tokens: words in every message plus 4 per message."""
    return sum(count_tokens(content_text(m.get("content"))) + 4
               for m in body.get("messages", []))


class FakeOpenAIServer(FakeLLMServer):
    """Speaks OpenAI's Chat Completions wire format."""

    url_suffix = "/v1"
    completion_path = "/v1/chat/completions"
    models_path = "/v1/models"

    def authorized(self, headers: dict[str, str]) -> bool:
        """Bearer token must equal `api_key`."""
        return headers.get("authorization") == f"Bearer {self.api_key}"

    def models_body(self) -> dict[str, Any]:
        """`GET /v1/models`."""
        ids = self.models or ["fake-model"]
        return {"object": "list", "data": [
            {"id": i, "object": "model", "created": 0, "owned_by": "fake"} for i in ids]}

    def error(self, status: int, kind: str, message: str, **extra: Any
              ) -> tuple[int, dict[str, str], bytes]:
        """OpenAI's error envelope."""
        return self.json(status, {"error": {"message": message, "type": kind,
                                            "param": extra.get("param"),
                                            "code": extra.get("code")}})

    def answer(self, body: dict[str, Any], reply: Reply) -> tuple[int, dict[str, str], bytes]:
        """A `chat.completion` object for `reply`."""
        model = body.get("model", "")
        if self.models and model not in self.models:
            return self.error(404, "invalid_request_error",
                              f"The model `{model}` does not exist", code="model_not_found")
        n_prompt = prompt_tokens(body)
        if self.context_window and n_prompt > self.context_window:
            return self.error(400, "invalid_request_error",
                              f"This model's maximum context length is {self.context_window} "
                              f"tokens. However, your messages resulted in {n_prompt} tokens.",
                              param="messages", code="context_length_exceeded")
        spec: dict[str, Any] = {"text": reply} if isinstance(reply, str) else dict(reply)
        text, hit = apply_stop(spec.get("text") or "", body.get("stop"))
        text, cut = truncate(text, body.get("max_completion_tokens") or body.get("max_tokens"))
        calls = [{"id": c.get("id") or self.next_id("call_"), "type": "function",
                  "function": {"name": c["name"], "arguments": c["arguments"]
                               if isinstance(c.get("arguments"), str)
                               else json.dumps(c.get("arguments", {}))}}
                 for c in spec.get("tool_calls", [])]
        finish = spec.get("finish_reason") or (
            "tool_calls" if calls else "length" if cut else "stop")
        message: dict[str, Any] = {"role": "assistant", "content": text or None,
                                   "refusal": None}
        if calls:
            message["tool_calls"] = calls
        elif not text:
            message["content"] = ""
        return self.json(200, {
            "id": self.next_id("chatcmpl-"), "object": "chat.completion",
            "created": int(time.time()), "model": spec.get("model") or model,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": message, "finish_reason": finish,
                         "logprobs": None}],
            "usage": self._usage(n_prompt, text, spec.get("usage", {})),
        })

    @staticmethod
    def _usage(n_prompt: int, text: str, override: dict[str, int]) -> dict[str, Any]:
        prompt = override.get("prompt_tokens", n_prompt)
        completion = override.get("completion_tokens", count_tokens(text))
        return {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": override.get("cached_tokens", 0),
                                          "cache_write_tokens":
                                              override.get("cache_write_tokens", 0),
                                          "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": override.get("reasoning_tokens", 0), "audio_tokens": 0,
                    "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
