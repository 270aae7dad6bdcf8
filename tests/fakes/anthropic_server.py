"""A fake Anthropic Messages API on 127.0.0.1, for the real `anthropic` SDK.

    with FakeAnthropicServer() as server:           # server.url has no /v1: the SDK adds it
        server.enqueue({"text": "Let me look.", "tool_calls": [{"name": "load_skill",
                                                                "arguments": {"name": "x"}}]})
        ... anthropic.AsyncAnthropic(base_url=server.url, api_key=...) ...
        server.last["system"]; server.last["messages"]

Routes: `POST /v1/messages`, `GET /v1/models`. With `api_key` set, requests whose
`x-api-key` (or bearer token) differs get 401; with `models` set, other models get 404
`not_found_error`; with `context_window` set, longer prompts get 400 `invalid_request_error`
"prompt is too long".
Usage counts one token per word (4 more per message, plus the system prompt); a reply dict's
`usage` may override `input_tokens`, `output_tokens`, `cache_read_input_tokens`,
`cache_creation_input_tokens` and `thinking_tokens`.
"""

from __future__ import annotations

from typing import Any

from .llm_server import FakeLLMServer, Reply, apply_stop, content_text, count_tokens, truncate

__all__ = ["FakeAnthropicServer"]


def prompt_tokens(body: dict[str, Any]) -> int:
    """The fake's count of prompt tokens: system text plus every message (+4 each)."""
    system = content_text(body.get("system", ""))
    return count_tokens(system) + sum(count_tokens(content_text(m.get("content"))) + 4
                                      for m in body.get("messages", []))


class FakeAnthropicServer(FakeLLMServer):
    """Speaks Anthropic's Messages wire format."""

    completion_path = "/v1/messages"
    models_path = "/v1/models"

    def authorized(self, headers: dict[str, str]) -> bool:
        """`x-api-key` (or, as current SDKs send it, a bearer token) must equal `api_key`."""
        return (headers.get("x-api-key") == self.api_key
                or headers.get("authorization") == f"Bearer {self.api_key}")

    def models_body(self) -> dict[str, Any]:
        """`GET /v1/models`."""
        ids = self.models or ["claude-fake"]
        return {"data": [{"id": i, "type": "model", "display_name": i,
                          "created_at": "2026-01-01T00:00:00Z"} for i in ids],
                "has_more": False, "first_id": ids[0], "last_id": ids[-1]}

    def error(self, status: int, kind: str, message: str, **extra: Any
              ) -> tuple[int, dict[str, str], bytes]:
        """Anthropic's error envelope."""
        error: dict[str, Any] = {"type": kind, "message": message}
        error.update(extra)
        return self.json(status, {"type": "error", "error": error},
                         {"request-id": self.next_id("req_")})

    def answer(self, body: dict[str, Any], reply: Reply) -> tuple[int, dict[str, str], bytes]:
        """A `message` object for `reply`."""
        model = body.get("model", "")
        if self.models and model not in self.models:
            return self.error(404, "not_found_error", f"model: {model}")
        n_prompt = prompt_tokens(body)
        if self.context_window and n_prompt > self.context_window:
            return self.error(400, "invalid_request_error",
                              f"prompt is too long: {n_prompt} tokens > "
                              f"{self.context_window} maximum")
        spec: dict[str, Any] = {"text": reply} if isinstance(reply, str) else dict(reply)
        text, hit = apply_stop(spec.get("text") or "", body.get("stop_sequences"))
        text, cut = truncate(text, body.get("max_tokens"))
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [{"type": "tool_use", "id": c.get("id") or self.next_id("toolu_"),
                     "name": c["name"], "input": c.get("arguments", {})}
                    for c in spec.get("tool_calls", [])]
        stop_reason = spec.get("finish_reason") or (
            "tool_use" if spec.get("tool_calls") else "max_tokens" if cut
            else "stop_sequence" if hit else "end_turn")
        return self.json(200, {
            "id": self.next_id("msg_"), "type": "message", "role": "assistant",
            "model": spec.get("model") or model, "content": content,
            "stop_reason": stop_reason, "stop_sequence": hit,
            "usage": self._usage(n_prompt, text, spec.get("usage", {})),
        }, {"request-id": self.next_id("req_")})

    @staticmethod
    def _usage(n_prompt: int, text: str, override: dict[str, int]) -> dict[str, Any]:
        output = override.get("output_tokens", count_tokens(text))
        usage: dict[str, Any] = {
            "input_tokens": override.get("input_tokens", n_prompt),
            "output_tokens": output,
            "cache_read_input_tokens": override.get("cache_read_input_tokens", 0),
            "cache_creation_input_tokens": override.get("cache_creation_input_tokens", 0),
            "service_tier": "standard",
        }
        if "thinking_tokens" in override:
            usage["output_tokens_details"] = {"thinking_tokens": override["thinking_tokens"]}
        return usage
