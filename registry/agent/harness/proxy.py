"""The only way out of an agent CLI's sandbox: a forwarding proxy to its model endpoint.

    async with ModelProxy(upstream="https://api.anthropic.com", key=..., wire="anthropic",
                          folder=socket_folder) as proxy:     # listens on folder/model.sock
        ... run [python3 -c FORWARDER, proxy.inside_socket, PORT, EVENTS, --, cli ...] ...

Outside the sandbox the proxy listens on a Unix socket in a folder that is bound into it;
inside, in the sandbox's own network namespace (no other route out), `FORWARDER` listens on
127.0.0.1:PORT and relays every connection to that socket, and the CLI's documented base-URL
setting points at it. The proxy accepts only origin-form requests (no CONNECT, no absolute URL,
so no other host) for the model's own routes under the endpoint's path (`ROUTES`: a POST that
asks the model, per wire; the rest of the provider's API, files, batches, fine-tuning, model
listings, is refused with 403 and never reached with the key), drops whatever credentials the
CLI sent (it holds a placeholder) and adds the real key itself: the key never enters the
sandbox. This is the shape of Anthropic's sandbox runtime for Claude Code.

Besides the socket's permissions (0600 in a 0700 folder of the sandbox's own user), a proxy
made with a `secret` answers only requests that carry it in `SECRET_HEADER`: every CLI we run
can be told to add a header (`Adapter.secret_env`). The secret reaches the CLI's environment
through `CLI_ENV_FILE` in the socket's private folder (never a command line: bwrap's is
readable by every local user), is dropped before forwarding, and is blanked out of request
bodies (an agent that prints its environment sends it back to the model as a tool result).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import os
import re
from http import HTTPStatus
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

import httpx

from registry.agent.harness.replay import Recorded, Replay

Wire = Literal["anthropic", "openai", "gemini"]
PLACEHOLDER_KEY = "hubskills-placeholder-key"  # what the CLI inside holds instead of a key
SOCKET_NAME = "model.sock"
SECRET_HEADER = "x-hubskills-proxy-secret"
CLI_ENV_FILE = "cli-env.json"  # beside the socket: variables the forwarder gives the CLI
# (named in FORWARDER as such too)
REDACTED = b"[hubskills-proxy-secret]"
MAX_HEAD = 64 * 1024
MAX_BODY = 32 << 20  # Anthropic's own cap on a Messages request; far past any CLI's turn
# The only requests forwarded, per wire: POST to one of these paths (after the endpoint's path,
# a query string aside), each one a request to the model that the pinned CLIs make
# (/work/shared/facts/agents.md; tests/test_harness.py records them): Claude Code and OpenCode
# `/v1/messages` (Claude Code may count tokens), Codex `/v1/responses` under a base URL that
# ends in /v1 (Chat Completions for an OpenAI-compatible CLI; no CLI needs `GET /models`),
# Gemini CLI `:streamGenerateContent`, `:generateContent` and `:countTokens` of a model.
ROUTES: dict[Wire, re.Pattern[str]] = {
    "anthropic": re.compile(r"/v1/messages(?:/count_tokens)?"),
    "openai": re.compile(r"/(?:responses|chat/completions)"),
    "gemini": re.compile(r"/v1(?:beta)?/models/[A-Za-z0-9][A-Za-z0-9._-]*"
                         r":(?:generateContent|streamGenerateContent|countTokens)"),
}
_DROP = {"host", "connection", "keep-alive", "proxy-connection", "proxy-authorization", "te",
         "trailer", "transfer-encoding", "upgrade", "content-length", "x-api-key",
         "authorization", "x-goog-api-key", "accept-encoding", SECRET_HEADER}
_ENCODED = re.compile(r"%(?:2e|2f|5c)", re.IGNORECASE)  # an escaped dot, slash or backslash
_DROP_BACK = {"connection", "keep-alive", "transfer-encoding", "content-length",
              "content-encoding"}

# Runs inside the sandbox (no secret in it: the command line is readable there). argv: socket,
# port, events file, "--", the CLI. The CLI's stdout goes to the events file (whole, not a tail);
# its environment gets the variables of CLI_ENV_FILE beside the socket, when there is one.
FORWARDER = r"""
import json, os, socket, subprocess, sys, threading
path, port, events, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[5:]
env = dict(os.environ)
try:
    with open(os.path.join(os.path.dirname(path), "cli-env.json")) as handle:
        env.update(json.load(handle))
except FileNotFoundError:
    pass
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(64)
def relay(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                b.shutdown(socket.SHUT_WR)
                return
            b.sendall(data)
    except OSError:
        a.close(); b.close()
def serve():
    while True:
        client, _ = server.accept()
        upstream = socket.socket(socket.AF_UNIX)
        try:
            upstream.connect(path)
        except OSError:
            client.close(); continue
        threading.Thread(target=relay, args=(client, upstream), daemon=True).start()
        threading.Thread(target=relay, args=(upstream, client), daemon=True).start()
threading.Thread(target=serve, daemon=True).start()
with open(events, "wb") as out:
    sys.exit(subprocess.call(cmd, stdout=out, stdin=subprocess.DEVNULL, env=env))
"""


class TooLarge(ValueError):
    """A request body over `MAX_BODY` (refused before it is read)."""


class ModelProxy:
    """Forwards HTTP requests from a Unix socket to one model endpoint, with the real key;
    with a `secret`, only requests that present it (see the module docstring)."""

    def __init__(self, *, upstream: str, key: str | None, wire: Wire, folder: Path,
                 max_posts: int | None = None, replay: Replay | None = None,
                 secret: str | None = None) -> None:
        parts = urlsplit(upstream.rstrip("/"))
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.prefix = parts.path.rstrip("/")  # requests must stay under it
        self.key, self.wire, self.secret = key, wire, secret
        self.socket_path = folder / SOCKET_NAME
        self.refused: list[str] = []  # request targets refused, for the report and the tests
        self.forwarded = 0
        self.posts = 0  # model requests (POSTs) forwarded: the CLI's turns, and a few of its own
        self.max_posts = max_posts  # past it, every model request gets a 400: the turn budget
        self.over_budget = False
        self.replay = replay  # answers from the response cache, when the run uses it
        self._server: asyncio.AbstractServer | None = None
        self._client: httpx.AsyncClient | None = None

    async def __aenter__(self) -> ModelProxy:
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(600.0, connect=30.0))
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.socket_path))
        os.chmod(self.socket_path, 0o600)  # the folder goes to the sandbox's own user
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
        if self._client is not None:
            await self._client.aclose()

    def allowed(self, method: str, target: str) -> bool:
        """Whether a request line may pass: origin-form, a POST to one of the wire's `ROUTES`
        under the endpoint's path, and a plain path. Refused, escaped or not: `;` path
        parameters (`/v1/..;/admin` is `..` to many servers), `.` and `..` segments,
        backslashes, encoded dots, slashes and backslashes (`%2e %2f %5c`), escapes inside
        escapes, and anything but visible ASCII. httpx or the server upstream would resolve
        them, and the real key would go wherever they lead."""
        if method != "POST" or not target.startswith("/") or target.startswith("//"):
            return False
        path = target.split("?", 1)[0]
        decoded = unquote(path)
        if not all("!" <= char <= "~" for char in target + decoded) or _ENCODED.search(path):
            return False  # whitespace, controls, non-ASCII; %2e %2f %5c
        if ";" in decoded or "\\" in decoded or unquote(decoded) != decoded:
            return False  # path parameters, backslashes, escapes inside escapes
        if any(part in (".", "..") for part in decoded.split("/")):
            return False
        if not path.startswith(self.prefix + "/"):
            return False
        return ROUTES[self.wire].fullmatch(path[len(self.prefix):]) is not None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            if len(head) > MAX_HEAD:
                raise ValueError("request head too large")
            method, target, headers = _parse_head(head)
            if not self.allowed(method, target):
                self.refused.append(f"{method} {target}")
                await _reply(writer, 403, b"hubskills proxy: only the model's own requests "
                                          b"are forwarded")
                return
            if not self._presents_secret(headers):
                self.refused.append(f"{method} {target} (without the proxy's secret)")
                await _reply(writer, 403, b"hubskills proxy: this run's secret is missing")
                return
            body = self._redacted(await _read_body(reader, headers))
            if method.upper() == "POST":
                if self.max_posts is not None and self.posts >= self.max_posts:
                    self.over_budget = True
                    await _reply(writer, 400, _budget_error(self.wire, self.max_posts),
                                 "application/json")
                    return
                self.posts += 1
                if self.replay is not None:
                    await self._replayed(writer, method, target, headers, body)
                    return
            await self._forward(writer, method, target, headers, body)
        except TooLarge:
            with contextlib.suppress(ConnectionError):
                await _reply(writer, 413, b"hubskills proxy: request body too large")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            with contextlib.suppress(ConnectionError):
                await _reply(writer, 400, b"hubskills proxy: bad request")
        except httpx.HTTPError as exc:
            with contextlib.suppress(ConnectionError):
                await _reply(writer, 502, f"hubskills proxy: {type(exc).__name__}".encode())
        except ConnectionError:
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _presents_secret(self, headers: list[tuple[str, str]]) -> bool:
        """Whether the request carries this proxy's secret (always, when it has none)."""
        if self.secret is None:
            return True
        sent = [v for k, v in headers if k.lower() == SECRET_HEADER]
        return len(sent) == 1 and hmac.compare_digest(sent[0].encode(), self.secret.encode())

    def _redacted(self, body: bytes) -> bytes:
        """`body` with the secret blanked out: it never reaches the model, the cache or rows."""
        return body.replace(self.secret.encode(), REDACTED) if self.secret else body

    async def _replayed(self, writer: asyncio.StreamWriter, method: str, target: str,
                        headers: list[tuple[str, str]], body: bytes) -> None:
        """The cached answer to this request, else the model's, kept for next time."""
        assert self.replay is not None
        key = self.replay.key(_without_key(target), body)
        recorded = self.replay.get(key)
        if recorded is not None:
            _write_head(writer, recorded.status, recorded.headers)
            writer.write(recorded.body)
            await writer.drain()
            return
        kept: list[bytes] = []
        status, sent_back = await self._forward(writer, method, target, headers, body, kept)
        self.replay.put(key, Recorded(status, sent_back, b"".join(kept)))

    async def _forward(self, writer: asyncio.StreamWriter, method: str, target: str,
                       headers: list[tuple[str, str]], body: bytes,
                       kept: list[bytes] | None = None) -> tuple[int, list[tuple[str, str]]]:
        """Send the request upstream and stream the answer back (into `kept` too)."""
        assert self._client is not None
        sent = [(k, v) for k, v in headers if k.lower() not in _DROP] + self._credentials()
        request = self._client.build_request(method, self.origin + _without_key(target),
                                             headers=sent, content=body)
        response = await self._client.send(request, stream=True)
        self.forwarded += 1
        try:
            back = [(k, v) for k, v in response.headers.multi_items()
                    if k.lower() not in _DROP_BACK]
            _write_head(writer, response.status_code, back)
            async for chunk in response.aiter_bytes():
                writer.write(chunk)
                if kept is not None:
                    kept.append(chunk)
                await writer.drain()
        finally:
            await response.aclose()
        return response.status_code, back

    def _credentials(self) -> list[tuple[str, str]]:
        if not self.key:
            return []
        if self.wire == "anthropic":
            return [("x-api-key", self.key)]
        if self.wire == "gemini":
            return [("x-goog-api-key", self.key)]
        return [("authorization", f"Bearer {self.key}")]


def _write_head(writer: asyncio.StreamWriter, status: int, headers: list[tuple[str, str]]) -> None:
    """The status line and headers of an answer (its body ends at content-length, or when the
    connection closes)."""
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    lines = [f"HTTP/1.1 {status} {reason}", *(f"{k}: {v}" for k, v in headers)]
    writer.write(("\r\n".join(lines + ["connection: close", "", ""])).encode("latin-1"))


def _parse_head(head: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = []
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
    return method, target, headers


async def _read_body(reader: asyncio.StreamReader, headers: list[tuple[str, str]]) -> bytes:
    values = {k.lower(): v for k, v in headers}
    if "chunked" in values.get("transfer-encoding", "").lower():
        body = bytearray()
        while True:
            line = (await reader.readuntil(b"\r\n")).split(b";")[0].strip()
            if len(line) > 8:  # over 4 GiB: no chunk of a model request is that size
                raise TooLarge
            size = int(line, 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                return bytes(body)
            if len(body) + size > MAX_BODY:  # before reading it, never after
                raise TooLarge
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    length = int(values.get("content-length") or 0)
    if length > MAX_BODY:
        raise TooLarge
    return await reader.readexactly(length) if length else b""


def _without_key(target: str) -> str:
    """The target without a `key=` query parameter (Gemini's other way to send a key)."""
    path, _, query = target.partition("?")
    kept = [p for p in query.split("&") if p and not p.startswith("key=")]
    return path + ("?" + "&".join(kept) if kept else "")


def _budget_error(wire: Wire, limit: int) -> bytes:
    """A non-retryable error in the wire's own shape, so the CLI stops instead of retrying."""
    message = f"hubskills: this sample's turn budget is spent ({limit} model requests)"
    if wire == "anthropic":
        error: dict = {"type": "error",
                       "error": {"type": "invalid_request_error", "message": message}}
    elif wire == "gemini":
        error = {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    else:
        error = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    return json.dumps(error).encode()


async def _reply(writer: asyncio.StreamWriter, status: int, text: bytes,
                 content_type: str = "text/plain") -> None:
    _write_head(writer, status, [("content-type", content_type),
                                 ("content-length", str(len(text)))])
    writer.write(text)
    await writer.drain()
