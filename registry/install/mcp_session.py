"""One session with an MCP server, for `pull mcp+...`: blocking calls from any thread.

The official SDK's client is async; a pull is not. `McpSession` runs one `ClientSession` (over
stdio or streamable HTTP) in a blocking portal's event loop and answers `call(method, params)`
from any thread, each request cut at `timeout` seconds (a stalled or dripping server), each
HTTP response cut at `cap` bytes (a flood: the SDK's own SSE event limit is set to the same cap,
a plain JSON body is cut by the transport), and each stdio message too (`mcp_stdio`). A stdio
command runs only once the user typed it (`mcp_source.check_trusted`). Errors name the server:
a lie is `UnsafeSkill` with the hint that nothing was installed, an unreachable server
`RegistryUnavailable` naming the real cause (the SDK's task group unwrapped), an error the
server answered (its own registry unreachable, say) `McpServerError` saying what it said.

An HTTP server is reached at `mcp_source.connect_url`: with the credential its URL was typed
with, or the one kept for it; the credential is saved once the server accepts the session
(`save_credential`), and a refusal (HTTP 401 or 403) hints the pull that gives one. Messages
name the server without it, and what they quote of an error is scrubbed of it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import threading
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from registry.errors import HubskillsError, RegistryError, RegistryUnavailable, UnsafeSkill
from registry.install.mcp_source import (
    HINT,
    PREFIX,
    McpSource,
    check_trusted,
    connect_url,
    lying,
    save_credential,
)
from registry.scan import SizeLimits
from registry.secrets import scrub, url_secrets

METHOD_NOT_FOUND, INVALID_PARAMS = -32601, -32602  # JSON-RPC's codes
#: "Resource not found": MCP's code before the 2026-07-28 protocol retired it; servers built on
#: older SDKs still answer it for a URI they do not serve (the Skills extension says -32602)
RESOURCE_NOT_FOUND = -32002


class McpServerError(RegistryError):
    """The server answered a request with a JSON-RPC error (its own failure, such as a
    registry it cannot reach, or a request it refuses): not a lie; `code` is its code."""

    def __init__(self, message: str, *, hint: str | None = None, code: int = 0) -> None:
        super().__init__(message, hint=hint)
        self.code = code


def first_cause(err: BaseException) -> BaseException:
    """The first real error inside `err`: a group's first error, down to its leaf."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return err


def describe(err: BaseException) -> str:
    """`err` as a reader wants it: the system's words for the OS error at the bottom of its
    chain (`connection refused`), else its own text."""
    seen: BaseException | None = err
    for _ in range(10):  # a chain, bounded
        if seen is None:
            break
        if isinstance(seen, OSError) and (seen.errno or seen.strerror):
            words = os.strerror(seen.errno) if seen.errno else str(seen.strerror)
            return words[:1].lower() + words[1:]
        seen = seen.__cause__ or seen.__context__
    return str(err) or type(err).__name__


class McpSession:
    """A session with `source`'s server, opened on first `call`; `close` ends it."""

    def __init__(self, source: McpSource, *, timeout: float, cap: int) -> None:
        self.source, self.timeout, self.cap = source, timeout, cap
        self._lock = threading.Lock()
        self._portal: Any = None
        self._portal_cm: Any = None
        self._session: Any = None
        self._stop: Any = None
        self._overflow: str | None = None
        self._url = source.server  # what is connected to: `connect_url`, once opened
        self._refused: int | None = None  # an HTTP 401 or 403 the server answered

    @property
    def name(self) -> str:
        """The server as messages name it."""
        return self.source.server

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request, answered within the deadline."""
        import anyio
        from mcp.shared.exceptions import MCPError

        self._open()

        async def ask() -> dict[str, Any]:
            import mcp_types as types
            from pydantic import TypeAdapter

            request = types.Request[dict[str, Any], str](method=method, params=params)
            with anyio.fail_after(self.timeout):
                return await self._session.send_request(request, TypeAdapter(dict[str, Any]))

        try:
            return dict(self._portal.call(ask))
        except TimeoutError as err:
            raise self._overflowed() or UnsafeSkill(
                f"{self.name} did not answer {method} within {self.timeout:g} s (a stalled or "
                "dripping server)", hint=lying(self.name)) from err
        except MCPError as err:
            if (overflowed := self._overflowed()) is not None:
                raise overflowed from err
            if self._refused is not None:
                raise self._denied() from err
            if method == "skills/list" and err.code == METHOD_NOT_FOUND:
                raise HubskillsError(f"{self.name} does not serve the Skills extension "
                                     "(no skills/list)", hint=HINT) from err
            asked = f"{method} {params['uri']}" if params.get("uri") else method
            raise McpServerError(f"{self.name} answered {asked} with an error: "
                                 f"{self._unechoed(str(err))}",
                                 hint="nothing was installed; that error is the server's own"
                                      + (f" (JSON-RPC {err.code})" if err.code else "")
                                      + ": try again once it can answer",
                                 code=err.code) from err
        except (OSError, ValueError) as err:
            raise self._overflowed() or RegistryUnavailable(
                f"{self.name}: {method} failed ({self._unechoed(str(err))})", hint=HINT) from err

    def _overflowed(self) -> UnsafeSkill | None:
        if self._overflow is None:
            return None
        return UnsafeSkill(self._overflow, hint=lying(self.name))

    def _open(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import anyio.from_thread

            if self.source.stdio:
                check_trusted(self.source)
            self._url = connect_url(self.source)
            self._portal_cm = anyio.from_thread.start_blocking_portal()
            self._portal = self._portal_cm.__enter__()
            try:
                self._portal.start_task(self._lifetime)
            except BaseException as err:
                self._close_portal()
                if isinstance(err, HubskillsError):
                    raise
                if (overflowed := self._overflowed()) is not None:
                    raise overflowed from err
                raise self._unreachable(err) from err
            save_credential(self.source)  # the server took it: kept for every later session

    def _unechoed(self, text: str) -> str:
        """`text` (an error quoted) without the credential connected with."""
        if self._url == self.source.server:
            return text
        return scrub(text.replace(self._url, self.source.server), extra=url_secrets(self._url))

    def _denied(self) -> HubskillsError:
        """The server's refusal of the session (HTTP 401 or 403): the credential missing, or
        not the one it takes."""
        clean, status = self.source.server, self._refused
        scheme, _, rest = clean.partition("://")
        pull = f"hubskills pull '{PREFIX}{scheme}://USER:PASSWORD@{rest}' --skill NAME"
        if self._url == clean:
            return RegistryUnavailable(
                f"the MCP server {clean} refused the session (HTTP {status}): it asks for a "
                "credential, and none is kept for it", hint=f"{pull}  # once, with the "
                "credential in the URL (or its ?token=): hubskills keeps it for this server")
        return RegistryUnavailable(
            f"the MCP server {clean} refused the session (HTTP {status}): it does not take the "
            "credential given", hint=f"{pull}  # once, with the credential it takes: that "
                                     "replaces the one kept")

    def _unreachable(self, err: BaseException) -> HubskillsError:
        """Why the session did not open, from the real cause (not the SDK's task group)."""
        cause = first_cause(err)
        if isinstance(cause, HubskillsError):
            return cause
        if self._refused is not None:
            return self._denied()
        if self.source.stdio:
            why = (f"no such command {self.source.command[0]!r}"
                   if isinstance(cause, FileNotFoundError) else describe(cause))
            return RegistryUnavailable(
                f"cannot start the MCP server {self.name}: {why}",
                hint=f"is {self.source.command[0]} installed here? run "
                     f"{shlex.join(self.source.command)} to see it start")
        address = urlsplit(self.source.server).netloc
        return RegistryUnavailable(
            f"cannot reach the MCP server {self.name}: {self._unechoed(describe(cause))}",
            hint=f"is the server running? hubskills mcp --http {address}  # serves one there")

    async def _lifetime(self, *, task_status: Any) -> None:
        import anyio
        from mcp.client.session import ClientSession

        self._stop = anyio.Event()
        async with self._transport() as (read, write), ClientSession(read, write) as session:
            with anyio.fail_after(self.timeout):
                await session.initialize()
            self._session = session
            task_status.started()
            await self._stop.wait()

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[Any]:
        if self.source.stdio:  # the SDK's stdio client reads a line without bound
            from registry.install.mcp_stdio import capped_stdio

            def overflow(why: str) -> None:
                self._overflow = f"{self.name} {why}"

            async with capped_stdio(self.source.command, cap=lambda: self.cap, on_overflow=overflow,
                                    env=dict(os.environ)) as streams:
                yield streams
            return
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        transport = _capped(httpx2.AsyncHTTPTransport(), self)
        timeout = httpx2.Timeout(self.timeout)
        async with httpx2.AsyncClient(transport=transport, timeout=timeout) as client, \
                streamable_http_client(self._url, http_client=client,
                                       max_sse_event_size=self.cap) as streams:
            yield streams

    def close(self) -> None:
        """End the session (and a stdio server's process)."""
        with self._lock:
            if self._portal is None:
                return
            if self._stop is not None:
                with contextlib.suppress(Exception):
                    self._portal.call(self._stop.set)
            self._close_portal()

    def _close_portal(self) -> None:
        with contextlib.suppress(Exception):
            self._portal_cm.__exit__(None, None, None)
        self._portal = self._portal_cm = self._session = None


def cap_of(limits: SizeLimits) -> int:
    """The most bytes one response may bring: the largest file allowed, as JSON may escape
    it (a control character is 6 bytes), and a page of listing."""
    return limits.max_file_bytes * 6 + 1024 * 1024


def _capped(inner: Any, store: McpSession) -> Any:
    """An httpx2 transport that stops a response body past `store.cap` bytes (a server
    sending more than any file the caps allow), noting why on `store`, and notes on it a
    refusal of the credential (HTTP 401 or 403), which the SDK reports as no more than
    "an error response"."""
    import httpx2

    class Stream(httpx2.AsyncByteStream):
        def __init__(self, body: Any) -> None:
            self.body, self.seen = body, 0

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self.body:
                self.seen += len(chunk)
                if self.seen > store.cap:
                    store._overflow = (f"{store.name} sent a response of more than "
                                       f"{store.cap} bytes, over what the size caps allow "
                                       "for any file")
                    raise OSError(store._overflow)
                yield chunk

        async def aclose(self) -> None:
            await self.body.aclose()

    class Capped(httpx2.AsyncBaseTransport):
        async def handle_async_request(self, request: Any) -> Any:
            response = await inner.handle_async_request(request)
            if response.status_code in (401, 403):
                store._refused = response.status_code
            response.stream = Stream(response.stream)
            return response

        async def aclose(self) -> None:
            await inner.aclose()

    return Capped()
