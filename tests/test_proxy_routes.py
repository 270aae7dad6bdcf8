"""The harness proxy lends the real key to the model's own requests only: per wire, the exact
method and path a CLI uses to ask the model (docs/security.md, "Agent CLIs"). Everything else
the provider's API offers with that key (files, batches, fine-tuning, model listings, cached
contents) is refused before it reaches upstream, whatever the method, and never counts."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer

from registry.agent.harness.proxy import MAX_BODY, SECRET_HEADER, ModelProxy, Wire

KEY, SECRET = "sk-ant-REAL-KEY", "S3CRET"
# As a sandboxed CLI would, from another process; a refusal comes before the body is read,
# so sending the rest of a large one may fail (EPIPE): the answer is still there to read.
SEND = """import socket, sys
client = socket.socket(socket.AF_UNIX)
client.connect(sys.argv[1])
try:
    client.sendall(sys.stdin.buffer.read())
    client.shutdown(socket.SHUT_WR)
except OSError:
    pass
sys.stdout.buffer.write(b"".join(iter(lambda: client.recv(65536), b"")))
"""


def send(path: Path, request: bytes) -> bytes:
    return subprocess.run([sys.executable, "-c", SEND, str(path)], input=request,
                          capture_output=True, check=True).stdout


def raw(method: str, target: str, body: bytes = b"") -> bytes:
    head = (f"{method} {target} HTTP/1.1\r\nhost: x\r\n{SECRET_HEADER}: {SECRET}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n")
    return head.encode() + body


def through(folder: Path, upstream: str, wire: Wire, *requests: bytes, max_posts: int = 3
            ) -> tuple[list[bytes], ModelProxy]:
    async def go() -> tuple[list[bytes], ModelProxy]:
        async with ModelProxy(upstream=upstream, key=KEY, wire=wire, folder=folder,
                              secret=SECRET, max_posts=max_posts) as proxy:
            return [await asyncio.to_thread(send, proxy.socket_path, r) for r in requests], proxy

    return asyncio.run(go())


BATCH = json.dumps({"requests": [{"custom_id": str(i), "params": {
    "model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "x" * 1300}]}}
    for i in range(1000)]}).encode()  # 1.3 MB of batched requests, billed to the real key
MESSAGE = json.dumps({"model": "claude-fake", "max_tokens": 5,
                      "messages": [{"role": "user", "content": "hi"}]}).encode()


def test_the_red_teams_requests_never_reach_anthropic_with_the_real_key(tmp_path):
    """The report's repro: with the run's secret, a sandboxed agent listed and deleted the
    account's files and queued a batch, all with the real key, and only one of them counted."""
    with FakeAnthropicServer(api_key=KEY) as upstream:
        replies, proxy = through(tmp_path, upstream.url, "anthropic",
                                 raw("GET", "/v1/files"), raw("DELETE", "/v1/files/file_123"),
                                 raw("POST", "/v1/messages/batches", BATCH),
                                 raw("POST", "/v1/messages", MESSAGE))
        seen = [(r["method"], r["path"]) for r in upstream.requests]
    assert [r[:12] for r in replies] == [b"HTTP/1.1 403"] * 3 + [b"HTTP/1.1 200"]
    assert seen == [("POST", "/v1/messages")]  # with the real key: the fake checks it
    assert proxy.posts == 1 and proxy.forwarded == 1
    assert proxy.refused == ["GET /v1/files", "DELETE /v1/files/file_123",
                             "POST /v1/messages/batches"]


# (wire, upstream's path, refused targets, passed targets): what each wire's CLIs send
# (tests/test_harness.py records them through this proxy) and the rest of the same API.
ROUTES = [
    ("anthropic", "",
     ["GET /v1/models", "GET /v1/files", "DELETE /v1/files/f", "POST /v1/files",
      "POST /v1/messages/batches", "GET /v1/messages/batches/b",
      "POST /v1/messages/batches/b/cancel", "GET /v1/messages", "DELETE /v1/messages",
      "POST /v1/messages/", "POST /v1/messages/x", "POST /v1/complete", "POST /",
      "HEAD /", "POST /v1/organizations/api_keys", "PUT /v1/messages"],
     ["POST /v1/messages", "POST /v1/messages?beta=true", "POST /v1/messages/count_tokens"]),
    ("anthropic", "/gateway",  # a base URL with a path: the same routes under it
     ["POST /v1/messages", "POST /gateway/v1/files", "POST /gateway/v1/messages/batches"],
     ["POST /gateway/v1/messages"]),
    ("openai", "/v1",
     ["GET /v1/models", "GET /v1/files", "POST /v1/files", "DELETE /v1/files/file_1",
      "POST /v1/batches", "POST /v1/fine_tuning/jobs", "POST /v1/embeddings",
      "POST /v1/images/generations", "POST /v1/uploads", "GET /v1/responses/resp_1",
      "DELETE /v1/responses/resp_1", "POST /v1/responses/resp_1/cancel",
      "POST /v1/vector_stores", "POST /v1/realtime/sessions", "GET /v1/responses",
      "POST /v1/completions", "POST /v1", "POST /v1/chat/completions/x"],
     ["POST /v1/responses", "POST /v1/chat/completions"]),
    ("gemini", "",
     ["GET /v1beta/models", "GET /v1beta/models/gemini-2.5-pro", "POST /v1beta/files",
      "POST /upload/v1beta/files", "POST /v1beta/cachedContents",
      "POST /v1beta/models/m:batchGenerateContent", "POST /v1beta/models/m:embedContent",
      "POST /v1beta/tunedModels", "POST /v1beta/tunedModels/t:generateContent",
      "GET /v1beta/models/m:generateContent", "POST /v1beta/models/:generateContent",
      "POST /v1beta/models/a/b:generateContent", "POST /v1beta/models/m:generateContentX",
      "DELETE /v1beta/files/f", "POST /v2/models/m:generateContent"],
     ["POST /v1beta/models/fake:streamGenerateContent?alt=sse",
      "POST /v1beta/models/gemini-2.5-flash:generateContent",
      "POST /v1beta/models/fake:countTokens", "POST /v1/models/m-1.5:generateContent"]),
]


@pytest.mark.parametrize("wire,prefix,refused,passed", ROUTES)
def test_only_the_models_own_requests_pass_on_each_wire(tmp_path, wire, prefix, refused,
                                                        passed):
    with FakeOpenAIServer() as upstream:  # it records whatever reaches it, any method
        requests = [raw(*line.split(" ", 1)) for line in refused + passed]
        origin = f"http://127.0.0.1:{upstream.port}"
        replies, proxy = through(tmp_path, origin + prefix, wire, *requests, max_posts=9)
        seen = [f"{r['method']} {r['path']}" for r in upstream.requests]
    statuses = [reply[9:12].decode() for reply in replies]
    assert statuses[:len(refused)] == ["403"] * len(refused), statuses
    assert "403" not in statuses[len(refused):]  # what the fake upstream says of them
    assert proxy.refused == refused
    assert seen == [line.split("?")[0] for line in passed]  # only these reached upstream
    assert proxy.posts == len(passed)


def test_a_body_over_the_cap_is_refused_before_it_is_read_whole(tmp_path):
    """No model request the CLIs make comes near it; Anthropic's own cap is 32 MB."""
    assert MAX_BODY <= 32 << 20
    over = raw("POST", "/v1/chat/completions", b"x" * (MAX_BODY + 1))
    with FakeOpenAIServer() as upstream:
        [reply], proxy = through(tmp_path, upstream.url, "openai", over)
        assert reply.startswith(b"HTTP/1.1 413") and upstream.requests == []
    assert proxy.posts == 0
