"""Shared plumbing for the fake LLM API servers (`openai_server`, `anthropic_server`).

A `FakeLLMServer` is a stdlib `ThreadingHTTPServer` on 127.0.0.1 (ephemeral port) in a daemon
thread, speaking HTTP/1.1 with keep-alive like a real API. It records every request, answers
from a script (`enqueue`) or, when the script is empty, from `responder(body)`, and can inject
faults: `fail_next` (HTTP errors, optional `Retry-After`), `malformed_next` (a 200 whose body is
not JSON) and a fixed `latency` per request. Subclasses render the wire format.

Reply values (from `enqueue` or the responder):
    "text"                                        a plain answer
    {"text": ..., "tool_calls": [{"name", "arguments", "id"?}], "finish_reason"?,
     "usage"?: {...}, "model"?: ...}              a full answer; usage fields override counts
    {"status": 400, "error": {...}, "headers"?}   an error reply (body as the API sends it)
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any

from .quiet_http import QuietHandler

Reply = str | dict[str, Any]
Responder = Callable[[dict[str, Any]], Reply]
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key"})


def count_tokens(text: str) -> int:
    """The fakes' tokenizer: one token per whitespace-separated word."""
    return len(text.split())


def content_text(content: Any) -> str:
    """Text of a message `content`: a string, or a list of blocks/parts with text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                value = block.get("text", block.get("content", ""))
                parts.append(content_text(value))
        return "\n".join(parts)
    return ""


def apply_stop(text: str, stop: Any) -> tuple[str, str | None]:
    """Cut `text` at the first stop sequence; returns the text and the sequence hit."""
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    hits = [(text.find(s), s) for s in stops if s and s in text]
    if not hits:
        return text, None
    index, sequence = min(hits)
    return text[:index], sequence


def truncate(text: str, max_tokens: int | None) -> tuple[str, bool]:
    """Keep at most `max_tokens` words; True when the text was cut."""
    words = text.split()
    if max_tokens is None or len(words) <= max_tokens:
        return text, False
    return " ".join(words[:max_tokens]), True


class _BacklogServer(ThreadingHTTPServer):
    """A listen backlog large enough for a burst of concurrent clients (the default is 5)."""

    request_queue_size = 256
    daemon_threads = True


class FakeLLMServer:
    """Base class; subclasses define `routes`, `answer` and `error_body`."""

    url_suffix = ""

    def __init__(self, *, responder: Responder | None = None, api_key: str | None = None,
                 models: list[str] | None = None, context_window: int | None = None,
                 latency: float = 0.0) -> None:
        self.responder: Responder = responder or self.echo
        self.api_key = api_key
        self.models = models
        self.context_window = context_window
        self.latency = latency
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Reply] = deque()
        self._faults: deque[tuple[str, int, float | None]] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._ids = 0

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeLLMServer:
        """Bind an ephemeral port on 127.0.0.1 and serve in a daemon thread."""
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = _BacklogServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True, name=type(self).__name__)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The base URL to give the SDK."""
        return f"http://127.0.0.1:{self.port}{self.url_suffix}"

    # -- scripting -------------------------------------------------------------------------
    def enqueue(self, *replies: Reply) -> None:
        """Script the next answers, in order (text, a reply dict, or an error dict)."""
        with self._lock:
            self._queue.extend(replies)

    def fail_next(self, n: int = 1, status: int = 500, retry_after: float | None = None) -> None:
        """Answer the next `n` completion requests with HTTP `status` (and `Retry-After`)."""
        with self._lock:
            self._faults.extend(("status", status, retry_after) for _ in range(n))

    def malformed_next(self, n: int = 1) -> None:
        """Answer the next `n` completion requests with a 200 whose body is not valid JSON."""
        with self._lock:
            self._faults.extend(("malformed", 200, None) for _ in range(n))

    def reset(self) -> None:
        """Forget recorded requests, scripted replies and pending faults."""
        with self._lock:
            self.requests.clear()
            self._queue.clear()
            self._faults.clear()

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """JSON bodies of the completion requests received, failed attempts included."""
        return [r["body"] for r in self.requests if r["path"] == self.completion_path]

    @property
    def last(self) -> dict[str, Any]:
        """The last completion request body."""
        return self.bodies[-1]

    @staticmethod
    def echo(body: dict[str, Any]) -> Reply:
        """Default responder: the text of the last user message."""
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        return content_text(users[-1].get("content")) if users else ""

    def next_id(self, prefix: str) -> str:
        """A fresh id like `call_3`."""
        with self._lock:
            self._ids += 1
            return f"{prefix}{self._ids}"

    # -- request handling (called from handler threads) ------------------------------------
    completion_path = ""

    def handle(self, method: str, path: str, headers: dict[str, str],
               raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """Record the request and produce (status, headers, body); header names are lower case."""
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        clean = {k: ("<redacted>" if k in SECRET_HEADERS else v) for k, v in headers.items()}
        with self._lock:
            self.requests.append({"method": method, "path": path, "headers": clean,
                                  "body": body, "time": time.monotonic()})
        if self.latency:
            time.sleep(self.latency)
        if self.api_key is not None and not self.authorized(headers):
            return self.error(401, "authentication_error", "invalid api key")
        if method == "GET" and path == self.models_path:
            return self.json(200, self.models_body())
        if method != "POST" or path != self.completion_path:
            return self.error(404, "not_found_error", f"no route {method} {path}")
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
            reply = None if fault or not self._queue else self._queue.popleft()
        if fault is not None:
            return self.fault(*fault)
        if reply is None:
            reply = self.responder(body)
        if isinstance(reply, dict) and "status" in reply:
            error = dict(reply.get("error") or {})
            kind = error.pop("type", _error_type(reply["status"]))
            message = error.pop("message", f"scripted HTTP {reply['status']}")
            code, headers, payload = self.error(reply["status"], kind, message, **error)
            return code, {**headers, **reply.get("headers", {})}, payload
        return self.answer(body, reply)

    def fault(self, kind: str, status: int, retry_after: float | None) -> tuple[int, dict, bytes]:
        """An injected failure."""
        if kind == "malformed":
            return 200, {"content-type": "application/json"}, b'{"id": "broken", "choi'
        code, headers, body = self.error(status, _error_type(status), f"injected HTTP {status}")
        if retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
        return code, headers, body

    @staticmethod
    def json(status: int, payload: Any, headers: dict[str, str] | None = None
             ) -> tuple[int, dict[str, str], bytes]:
        """A JSON response."""
        return status, {"content-type": "application/json", **(headers or {})}, \
            json.dumps(payload).encode()

    # -- wire format hooks ---------------------------------------------------------------
    models_path = ""

    def authorized(self, headers: dict[str, str]) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def models_body(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def error(self, status: int, kind: str, message: str, **extra: Any
              ) -> tuple[int, dict[str, str], bytes]:  # pragma: no cover - abstract
        raise NotImplementedError

    def answer(self, body: dict[str, Any], reply: Reply
               ) -> tuple[int, dict[str, str], bytes]:  # pragma: no cover - abstract
        raise NotImplementedError


def _error_type(status: int) -> str:
    return {429: "rate_limit_error", 401: "authentication_error", 403: "permission_error",
            404: "not_found_error", 529: "overloaded_error"}.get(
        status, "api_error" if status >= 500 else "invalid_request_error")


class _Handler(QuietHandler):
    fake: FakeLLMServer

    def _serve(self) -> None:
        raw = self.read_body()
        path = self.path.split("?", 1)[0]
        received = {name.lower(): value for name, value in self.headers.items()}
        self.reply(*self.fake.handle(self.command, path, received, raw))

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve  # others: recorded, 404
