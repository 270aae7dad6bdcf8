"""`FakeOpenAIServer`'s wire on an asyncio HTTP/1.1 server, for benches that need a fake cheaper
than the model it stands for.

    server = AsyncOpenAIServer(responder=TriggerModel(threshold=2), latency=0.1).start()
    ... openai.AsyncOpenAI(base_url=server.url) ...
    server.stop()

Every request is answered by a `FakeOpenAIServer` that is never started (its `handle`: the same
routes, JSON, usage counts, errors and responder), so only the transport differs: one event
loop in a daemon thread instead of a thread per connection, and the latency an `asyncio.sleep`
instead of a thread blocked in `time.sleep`. With the stdlib server, 16 connections' threads
take turns on the GIL and each request's headers go through `email.parser`; here a request costs
about as much as its JSON. Requests are not recorded (`bodies` stays empty): a bench sends
thousands. Keep-alive, `content-length` bodies only (what the `openai` SDK sends).
"""

from __future__ import annotations

import asyncio
import threading
from http import HTTPStatus
from typing import Any

from .llm_server import Responder
from .openai_server import FakeOpenAIServer

__all__ = ["AsyncOpenAIServer"]


class AsyncOpenAIServer:
    """A fake OpenAI Chat Completions API on 127.0.0.1, served by asyncio."""

    def __init__(self, *, responder: Responder | None = None, latency: float = 0.0,
                 **options: Any) -> None:
        self.wire = FakeOpenAIServer(responder=responder, **options)
        self.latency = latency
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL to give the SDK (ends in /v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> AsyncOpenAIServer:
        """Bind an ephemeral port and serve from a daemon thread's event loop."""
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        async def open_server() -> None:
            self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0,
                                                      backlog=256)
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()

        def serve() -> None:
            assert self._loop is not None
            self._loop.run_until_complete(open_server())
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, daemon=True, name="AsyncOpenAIServer")
        self._thread.start()
        ready.wait()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._loop is None or self._server is None:
            return
        loop, server = self._loop, self._server
        loop.call_soon_threadsafe(server.close)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join()
        self._loop = self._server = None

    def __enter__(self) -> AsyncOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        """Answer requests on one keep-alive connection until the client closes it."""
        try:
            while (request := await _read_request(reader)) is not None:
                method, path, headers, raw = request
                if self.latency:
                    await asyncio.sleep(self.latency)
                status, extra, body = self.wire.handle(method, path, headers, raw)
                self.wire.requests.clear()  # a bench sends thousands: keep none
                writer.write(_response(status, extra, body))
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away mid-request: nothing to answer
        finally:
            writer.close()


async def _read_request(reader: asyncio.StreamReader
                        ) -> tuple[str, str, dict[str, str], bytes] | None:
    """(method, path, lower-case headers, body) of the next request, or None at the end."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length") or 0)
    raw = await reader.readexactly(length) if length else b""
    return method, target.split("?", 1)[0], headers, raw


def _response(status: int, headers: dict[str, str], body: bytes) -> bytes:
    """An HTTP/1.1 response with a `content-length`, connection kept alive."""
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
             *(f"{name}: {value}" for name, value in headers.items()),
             f"content-length: {len(body)}", "", ""]
    return "\r\n".join(lines).encode("latin-1") + body
