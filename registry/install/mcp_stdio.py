"""A stdio MCP server's output, byte-capped: the transport `pull 'mcp+stdio:...'` talks over.

The official SDK's `stdio_client` reads the server's stdout into one string until a newline,
with no bound: a server that prints without end (no newline, or one line larger than anything
the size caps allow) fills memory before any request deadline is reached. This transport is
the same protocol (newline-delimited JSON-RPC, the SDK's own message types and
`ClientSession` on top) with one difference: a message, or the bytes waiting for its newline,
over `cap()` bytes stops the read, notes why (`on_overflow`), closes the session's stream (its
pending request fails at once) and ends the process. Shutdown is the spec's: close stdin,
wait, then end the process's whole group (it runs in a session of its own).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable
from typing import Any

GRACE_S = 2.0  # how long a server may take to exit once its stdin is closed


@contextlib.asynccontextmanager
async def capped_stdio(argv: list[str], *, cap: Callable[[], int],
                       on_overflow: Callable[[str], None],
                       env: dict[str, str] | None = None) -> AsyncIterator[tuple[Any, Any]]:
    """Run `argv` and yield the (read, write) streams a `ClientSession` takes; `cap()` is the
    most bytes one message may hold now, `on_overflow` gets the message naming a server that
    sent more."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, env=env,
                                       start_new_session=True)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    def parsed(line: bytes) -> SessionMessage | Exception:
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line))
        except ValueError as err:
            return err

    async def read() -> None:
        buffer = bytearray()
        async with to_session:
            with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                                     anyio.BrokenResourceError, OSError):
                while True:
                    seen = len(buffer)  # searched already: no newline in it
                    buffer += await stdout.receive()
                    start, limit = 0, cap()
                    while (end := buffer.find(b"\n", max(start, seen))) >= 0:
                        if end - start > limit:
                            break
                        await to_session.send(parsed(bytes(buffer[start:end])))
                        start = end + 1
                    del buffer[:start]
                    if len(buffer) > limit:  # one message past the cap, whole or not yet
                        on_overflow(f"sent more than {limit} bytes in one message, over what "
                                    "the size caps allow for any file")
                        _end(process)
                        return

    async def write() -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError,
                                 OSError):
            async with from_session:
                async for message in from_session:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send((text + "\n").encode("utf-8"))

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await write_stream.aclose()
                with contextlib.suppress(OSError, anyio.BrokenResourceError):
                    await stdin.aclose()
                with anyio.move_on_after(GRACE_S):
                    await process.wait()
                _end(process)
                await process.wait()
                await read_stream.aclose()
            group.cancel_scope.cancel()


def _end(process: Any) -> None:
    """Kill the server's process group (it was started in a session of its own)."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
