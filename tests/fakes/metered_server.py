"""A fake OpenAI server that meters what a provider would bill: the usage of every answer it
sent, and the most completion requests it held at once.

    with MeteredOpenAIServer(responder=billing_max(echo), latency=0.05) as server:
        ... point OPENAI_BASE_URL at server.url, call openai/gpt-4.1 ...
        server.billed("openai/gpt-4.1"); server.calls; server.peak

`billing_max(responder)` bills every answer the whole `max_tokens` it was allowed (what a model
that writes to its limit costs), so a cap's worst case is reached on every call.
"""

from __future__ import annotations

import json
from typing import Any

from .llm_server import Reply, Responder
from .openai_server import FakeOpenAIServer

__all__ = ["MeteredOpenAIServer", "billing_max"]


class MeteredOpenAIServer(FakeOpenAIServer):
    """`FakeOpenAIServer` recording each answer's usage and the peak of requests in flight."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.usages: list[dict[str, Any]] = []
        self.in_flight = 0
        self.peak = 0

    def handle(self, method: str, path: str, headers: dict[str, str],
               raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """Count the completion requests held at once around the base class's handling."""
        counted = method == "POST" and path == self.completion_path
        if counted:
            with self._lock:
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
        try:
            return super().handle(method, path, headers, raw)
        finally:
            if counted:
                with self._lock:
                    self.in_flight -= 1

    def answer(self, body: dict[str, Any], reply: Reply) -> tuple[int, dict[str, str], bytes]:
        """The base class's answer, its usage recorded when it is one (a 200)."""
        status, headers, payload = super().answer(body, reply)
        if status == 200:
            with self._lock:
                self.usages.append(json.loads(payload)["usage"])
        return status, headers, payload

    @property
    def calls(self) -> int:
        """Completion requests that reached the server."""
        return len(self.bodies)

    def billed(self, ref: str) -> float:
        """Dollars the answers sent would cost at `ref`'s catalogue price (from their usage)."""
        from registry.providers import Usage, cost

        total = 0.0
        for usage in list(self.usages):
            spent = cost(ref, Usage(input_tokens=usage["prompt_tokens"],
                                    output_tokens=usage["completion_tokens"]))
            assert spent is not None, f"{ref} has no price"
            total += spent
        return total


def billing_max(responder: Responder) -> Responder:
    """`responder`'s answers, each billed the request's whole `max_tokens` of output."""
    def answer(body: dict[str, Any]) -> Reply:
        reply = responder(body)
        spec: dict[str, Any] = {"text": reply} if isinstance(reply, str) else dict(reply)
        if "status" in spec:
            return spec
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        spec["usage"] = {**spec.get("usage", {}), "completion_tokens": int(limit)}
        return spec
    return answer
