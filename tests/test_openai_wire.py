"""The Chat Completions wire (`providers/_openai_wire.py`) beside the `openai` SDK it replaces.

Each case is a raw HTTP answer served by a real local server; the same request goes through
the wire and through the SDK's own client, and what the provider layer makes of each must be
the same: the JSON answer, or for a failure whether it is retried, how long the server asked to
wait, and the user's error (type and words). Then the answer's reading: tokens, tool calls.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType

import pytest
from fakes.openai_server import FakeOpenAIServer

from registry.errors import HubskillsError
from registry.providers import Message
from registry.providers.openai_compat import LocalProvider

Answer = tuple[int, dict[str, str], bytes]
ERROR = {"error": {"message": "slow down", "type": "rate_limit", "code": "rate_limited"}}
ANSWERS: dict[str, Answer] = {
    "ok": (200, {"Content-Type": "application/json"},
           json.dumps({"id": "x", "choices": [{"index": 0, "message": {
               "role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
               "model": "m", "usage": {"prompt_tokens": 3, "completion_tokens": 1}}).encode()),
    "429-retry-after": (429, {"Content-Type": "application/json", "Retry-After": "7"},
                        json.dumps(ERROR).encode()),
    "503-retry-after-ms": (503, {"retry-after-ms": "250"}, b"upstream down"),
    "500-empty": (500, {}, b""),
    "400-said-not-to-retry": (400, {"x-should-retry": "false"}, json.dumps(ERROR).encode()),
    "400-said-to-retry": (400, {"x-should-retry": "true"}, json.dumps(ERROR).encode()),
    "401": (401, {"Content-Type": "application/json"},
            json.dumps({"error": {"message": "bad key", "code": None}}).encode()),
    "404-model": (404, {"Content-Type": "application/json"}, json.dumps({"error": {
        "message": "no such model", "code": "model_not_found"}}).encode()),
    "400-overflow": (400, {"Content-Type": "application/json"}, json.dumps({"error": {
        "message": "too long", "code": "context_length_exceeded"}}).encode()),
    "422-a-list": (422, {"Content-Type": "application/json"}, b'["not", "an", "object"]'),
    "302-redirect": (302, {"Location": "http://169.254.169.254/"}, b""),
    "200-not-json": (200, {"Content-Type": "application/json"}, b"{nope"),
}


class _Scripted(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, headers, body = ANSWERS[self.path.split("/")[1]]
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def scripted():
    """A server answering `POST /<case>/v1/chat/completions` with `ANSWERS[case]`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class _SDKLocal(LocalProvider):
    """The same provider on the official SDK's client: the reference."""

    @staticmethod
    def sdk() -> ModuleType:
        import openai

        return openai


def _outcome(provider: LocalProvider) -> object:
    async def call() -> object:
        try:
            return await provider.client().post("/chat/completions", body={"model": "m"},
                                                cast_to=object)
        except Exception as exc:  # what the provider layer makes of the failure
            error = provider.error(exc, "m")
            return (provider.should_retry(exc), provider.retry_after(exc), type(error),
                    str(error).replace("Error code", "code"))
        finally:
            await provider.aclose()

    return asyncio.run(call())


@pytest.mark.parametrize("case", sorted(ANSWERS))
def test_the_wire_reads_every_answer_as_the_sdk_does(scripted, case):
    url = f"{scripted}/{case}/v1"
    wire = _outcome(LocalProvider(base_url=url, api_key="sk-k", timeout=5))
    sdk = _outcome(_SDKLocal(base_url=url, api_key="sk-k", timeout=5))
    assert wire == sdk


def test_no_answer_is_the_same_failure_as_the_sdks():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    wire = _outcome(LocalProvider(base_url=url, api_key=None, timeout=5))
    assert wire == _outcome(_SDKLocal(base_url=url, api_key=None, timeout=5))
    assert wire[0] is True and "cannot connect" in wire[3]


def test_a_timeout_is_the_same_failure_as_the_sdks():
    with FakeOpenAIServer(latency=1.0) as server:
        wire = _outcome(LocalProvider(base_url=server.url, api_key=None, timeout=0.05))
        assert wire == _outcome(_SDKLocal(base_url=server.url, api_key=None, timeout=0.05))
    assert wire[0] is True and "timed out" in wire[3]


def test_tokens_tool_calls_and_the_key_reach_the_completion():
    reply = {"text": "", "tool_calls": [{"name": "get", "arguments": {"city": "Oslo"}}],
             "usage": {"prompt_tokens": 11, "completion_tokens": 5, "cached_tokens": 4,
                       "cache_write_tokens": 2, "reasoning_tokens": 3}}
    with FakeOpenAIServer(api_key="sk-right") as server:
        server.enqueue(reply)
        provider = LocalProvider(base_url=server.url, api_key="sk-right")

        async def ask() -> object:
            try:
                return await provider.complete([Message("user", "weather?")], model="m")
            finally:
                await provider.aclose()

        done = asyncio.run(ask())
        wrong = LocalProvider(base_url=server.url, api_key="sk-wrong")
        with pytest.raises(HubskillsError, match="HTTP 401"):
            asyncio.run(_raise(wrong))
    usage = done.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
            usage.cache_write_tokens, usage.reasoning_tokens) == (11, 5, 4, 2, 3)
    assert [(c.name, c.arguments) for c in done.tool_calls] == [("get", {"city": "Oslo"})]
    assert done.finish_reason == "tool_calls" and done.model == "m"


async def _raise(provider: LocalProvider) -> None:
    try:
        await provider.complete([Message("user", "hi")], model="m")
    except Exception as exc:
        raise provider.error(exc, "m") or exc from exc
    finally:
        await provider.aclose()
