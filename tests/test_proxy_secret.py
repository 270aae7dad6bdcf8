"""The harness proxy's per-run secret: a request that does not present it is refused before
anything reaches the model; the secret itself never reaches the model, in a header or a body."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer
from test_proxy_hardening import send

from registry.agent.harness import ADAPTERS
from registry.agent.harness.base import _read_events
from registry.agent.harness.proxy import REDACTED, SECRET_HEADER, ModelProxy

SECRET = "per-run-secret-1f0c9e"


def request(*headers: str, body: str = '{"model": "m"}') -> bytes:
    lines = ["POST /v1/chat/completions HTTP/1.1", "host: x", "content-type: application/json",
             f"content-length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n" + body).encode()


def through(folder: Path, upstream: str, *raws: bytes) -> tuple[list[bytes], list[str]]:
    async def go() -> tuple[list[bytes], list[str]]:
        async with ModelProxy(upstream=upstream, key="sk-real", wire="openai", folder=folder,
                              secret=SECRET) as proxy:
            replies = [await asyncio.to_thread(send, proxy.socket_path, raw) for raw in raws]
            return replies, proxy.refused

    return asyncio.run(go())


@pytest.mark.parametrize("headers", [
    (),
    (f"{SECRET_HEADER}: wrong-secret",),
    (f"{SECRET_HEADER}: {SECRET}x",),
    (f"{SECRET_HEADER}: {SECRET}", f"{SECRET_HEADER}: other"),  # one value, and only one
    (f"authorization: Bearer {SECRET}",),
])
def test_a_request_without_the_runs_secret_is_refused_and_never_forwarded(tmp_path, headers):
    with FakeOpenAIServer() as upstream:
        [reply], refused = through(tmp_path, upstream.url, request(*headers))
        assert reply.startswith(b"HTTP/1.1 403"), reply[:80]
        assert upstream.requests == []
    assert refused == ["POST /v1/chat/completions (without the proxy's secret)"]


def test_the_secret_opens_the_door_and_never_reaches_the_model(tmp_path):
    printed = json.dumps({"model": "m", "messages": [
        {"role": "tool", "content": f"HUBSKILLS_PROXY_SECRET={SECRET}"}]})
    with FakeOpenAIServer() as upstream:
        [reply], refused = through(tmp_path, upstream.url,
                                   request(f"{SECRET_HEADER}: {SECRET}", body=printed))
        assert reply.startswith(b"HTTP/1.1 200"), reply[:80]
        assert refused == []
        [seen] = upstream.requests
    assert SECRET not in json.dumps(seen)
    assert REDACTED.decode() in json.dumps(seen["body"])


def test_every_cli_is_told_to_send_the_secret_header(tmp_path):
    """Each adapter sets its CLI's documented header option; none puts the secret in a file
    of its HOME (the config names a variable at most)."""
    for name, adapter_type in ADAPTERS.items():
        home = tmp_path / name
        home.mkdir()
        adapter = adapter_type()
        env = adapter.prepare(home, "http://127.0.0.1:8787", "m")
        hidden = adapter.secret_env(SECRET, env)
        assert hidden is not None, name
        assert any(SECRET in value for value in hidden.values()), name
        assert SECRET not in json.dumps(env), name
        written = "".join(p.read_text() for p in home.rglob("*") if p.is_file())
        assert SECRET not in written, name
        if name == "codex":
            assert SECRET_HEADER in written  # env_http_headers names the variable


def test_the_secret_printed_by_an_agent_is_blanked_out_of_its_events(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps({"type": "tool_result", "output": f"X={SECRET}"}) + "\n")
    [event] = _read_events(events, redact=SECRET)
    assert SECRET not in json.dumps(event) and REDACTED.decode() in event["output"]
