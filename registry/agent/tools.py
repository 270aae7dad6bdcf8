"""The tools of hubskills' own agent loop, confined to one workspace folder.

`list_files`, `read_file`, `write_file` and `edit_file` reach files only through directory file
descriptors opened with `O_NOFOLLOW` from the workspace root, one path component at a time: a
symlink the agent (or a command it ran) planted is refused, never followed out. Names must be
relative, without `..` or backslashes. Listings walk iteratively within the workspace's
bounds (depth, path length, entry count) and say what they left out; a file over the read cap
is refused, never read whole. `run` executes a shell command through the `Sandbox`
with the workspace as its only writable folder (no network), under the budget's time limit.
A sample's commands share one sandbox session, ended with the sample (processes a command
leaves behind live until then, as in a shell): with bwrap, one sandbox per sample rather than
one per command. It starts in the background at the sample's first tool call, so it is up by
the first command (an agent looks at files before it runs anything); a sample that calls no
tool starts none.

Every result is deterministic for the same workspace (sorted listings, no timestamps or
durations), so a rerun's conversation is byte-identical and its model calls come from the
response cache. Reads and commands under the skill's folder are recorded as activation.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from registry.agent.bounds import (
    DEFAULT_BOUNDS,
    TreeEntry,
    TreeWalk,
    WorkspaceBounds,
    check_bounds,
)
from registry.agent.outcome import AgentOutcome, Budget
from registry.format.inputs import is_relative
from registry.providers.base import ToolCall, ToolSpec
from registry.sandbox import (
    CommandSession,
    Limits,
    Sandbox,
    SandboxSession,
    SessionEnded,
    SessionNotStarted,
    open_session,
)

_PATH = {"type": "string", "description": "Path relative to the project folder."}
TOOLS = [
    ToolSpec("list_files", "List the files under a folder of the project (default: all).",
             {"type": "object", "properties": {"path": _PATH}}),
    ToolSpec("read_file", "Read a text file of the project.",
             {"type": "object", "properties": {"path": _PATH}, "required": ["path"]}),
    ToolSpec("write_file", "Create or overwrite a file with the given content.",
             {"type": "object", "properties": {"path": _PATH, "content": {"type": "string"}},
              "required": ["path", "content"]}),
    ToolSpec("edit_file", "Replace the one exact occurrence of old_string in a file with "
             "new_string (include enough context to make old_string unique).",
             {"type": "object", "properties": {"path": _PATH, "old_string": {"type": "string"},
                                               "new_string": {"type": "string"}},
              "required": ["path", "old_string", "new_string"]}),
    ToolSpec("run", "Run a shell command in the project folder (no network); returns its exit "
             "code and output.",
             {"type": "object", "properties": {"command": {"type": "string"}},
              "required": ["command"]}),
]
TOOL_NAMES = frozenset(t.name for t in TOOLS)
MAX_LISTED = 500  # entries in one listing
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class ToolFailed(Exception):
    """A tool call that cannot be done; its message goes back to the model as the result."""


class WorkspaceTools:
    """Executes tool calls in `root`; `outcome` receives tool counts and skill activation.

    Inside `async with tools:` (one sample) its commands share one sandbox session, started at
    the first tool call and ended on leaving, whatever ended the sample; outside, each command
    gets a sandbox of its own.
    """

    def __init__(self, root: Path, sandbox: Sandbox | None, budget: Budget,
                 outcome: AgentOutcome, skill_path: str | None = None,
                 bounds: WorkspaceBounds = DEFAULT_BOUNDS) -> None:
        self.root, self.sandbox, self.budget, self.bounds = root, sandbox, budget, bounds
        self.outcome, self.skill_path = outcome, skill_path
        self._in_sample = False
        self._session: SandboxSession | None = None
        self._starting: asyncio.Task[None] | None = None  # the session's start

    async def __aenter__(self) -> WorkspaceTools:
        """Start the sample: its commands share a session from its first tool call on."""
        self._in_sample = True
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """End the sample's session: every process its commands left is gone after."""
        self._in_sample = False
        session, self._session = self._session, None
        starting, self._starting = self._starting, None
        try:
            if starting is not None and not starting.done():
                try:
                    await asyncio.wait([starting])  # a start under way takes milliseconds
                except asyncio.CancelledError:
                    starting.cancel()  # its own cancel kills what it spawned
                    raise
        finally:
            if starting is not None and starting.done() and not starting.cancelled():
                starting.exception()  # seen: a failed start fails the commands that wait for it
            if session is not None:
                await session.aclose()

    async def call(self, call: ToolCall, *, time_left: float | None = None) -> tuple[str, bool]:
        """(result text, is_error) for one call; the text is clipped to the budget."""
        self.outcome.count_tool(call.name)
        if self._in_sample and self._session is None and self.sandbox is not None:
            with contextlib.suppress(Exception):  # `run` meets the same failure and reports it
                self._start_session()
        try:
            if call.name not in TOOL_NAMES:
                raise ToolFailed(f"unknown tool {call.name!r}; the tools are "
                                 f"{', '.join(sorted(TOOL_NAMES))}")
            args = call.arguments
            if call.name == "run":
                text = await self._run(_text(args, "command"), time_left)
            else:
                text = getattr(self, f"_{call.name}")(args)
            return _clip(text, self.budget.output_chars), False
        except ToolFailed as exc:
            return _clip(f"error: {exc}", self.budget.output_chars), True

    # -- files -------------------------------------------------------------------------------
    def _list_files(self, args: dict[str, Any]) -> str:
        rel = str(args.get("path") or ".").strip() or "."
        fd = self._open_dir(rel) if rel not in (".", "./") else os.open(self.root, _DIR_FLAGS)
        walk = TreeWalk(fd, self.bounds)
        try:
            entries = sorted(_listed(entry) for entry in walk if not entry.is_dir)
        finally:
            os.close(fd)
        shown = entries[:MAX_LISTED]
        more = f"\n... and {len(entries) - MAX_LISTED} more" if len(entries) > MAX_LISTED else ""
        cut = "".join(f"\n(not listed: {reason})" for reason in walk.cut)
        return ("\n".join(shown) + more if shown else "(no files)") + cut

    def _read_file(self, args: dict[str, Any]) -> str:
        rel = _text(args, "path")
        data = self._read(rel)
        self._saw(rel)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return f"(binary file, {len(data):,} bytes)"

    def _write_file(self, args: dict[str, Any]) -> str:
        rel, content = _text(args, "path"), _text(args, "content", allow_empty=True)
        self._write(rel, content.encode("utf-8"))
        return f"wrote {rel} ({len(content.encode('utf-8')):,} bytes)"

    def _edit_file(self, args: dict[str, Any]) -> str:
        rel = _text(args, "path")
        old, new = _text(args, "old_string"), _text(args, "new_string", allow_empty=True)
        try:
            text = self._read(rel).decode("utf-8")
        except UnicodeDecodeError as err:
            raise ToolFailed(f"{rel} is not a text file") from err
        count = text.count(old)
        if count == 0:
            raise ToolFailed(f"old_string was not found in {rel}; read the file and copy the "
                             "exact text")
        if count > 1:
            raise ToolFailed(f"old_string occurs {count} times in {rel}; include more context "
                             "so it matches once")
        self._write(rel, text.replace(old, new, 1).encode("utf-8"))
        return f"edited {rel}"

    def _read(self, rel: str) -> bytes:
        parent, name = self._open_parent(rel, create=False)
        try:
            # O_NONBLOCK: a FIFO the agent made must not hang the read (checked just below)
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
        except OSError as err:
            raise ToolFailed(_why(rel, err)) from err
        finally:
            os.close(parent)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ToolFailed(f"{rel} is not a regular file")
            if info.st_size > self.bounds.read_bytes:  # a sparse file is never read out
                raise ToolFailed(f"{rel} is {info.st_size:,} bytes, larger than the "
                                 f"{self.bounds.read_bytes >> 20} MiB the file tools read; "
                                 "look at part of it with a command (head, tail, grep)")
            return handle.read(self.bounds.read_bytes + 1)

    def _write(self, rel: str, data: bytes) -> None:
        parent, name = self._open_parent(rel, create=True)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644,
                         dir_fd=parent)
        except OSError as err:
            raise ToolFailed(_why(rel, err)) from err
        finally:
            os.close(parent)
        with os.fdopen(fd, "wb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ToolFailed(f"{rel} is not a regular file")
            os.set_blocking(fd, True)
            if info.st_size:  # a journalled metadata write, in the event loop: only if needed
                handle.truncate(0)
            handle.write(data)

    def _open_parent(self, rel: str, *, create: bool) -> tuple[int, str]:
        """A descriptor of `rel`'s folder (walked without following links) and its name."""
        parts = _parts(rel)
        if len(parts) > self.bounds.depth or len(os.fsencode(rel)) > self.bounds.path_bytes:
            raise ToolFailed(f"{rel[:60]}… is deeper than {self.bounds.depth} folders or "
                             f"longer than {self.bounds.path_bytes:,} bytes, the workspace's "
                             "bounds")
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for part in parts[:-1]:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=fd)
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as err:
                    raise ToolFailed(_why(rel, err)) from err
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd, parts[-1]

    def _open_dir(self, rel: str) -> int:
        parent, name = self._open_parent(rel, create=False)
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as err:
            raise ToolFailed(_why(rel, err)) from err
        finally:
            os.close(parent)

    # -- commands ----------------------------------------------------------------------------
    async def _run(self, command: str, time_left: float | None) -> str:
        if self.sandbox is None:
            raise ToolFailed("commands cannot run here: no sandbox is available")
        self._saw_in_command(command)
        timeout = self.budget.command_timeout_s
        if time_left is not None:
            timeout = max(1.0, min(timeout, time_left))
        limits = Limits(wall_s=self.budget.command_timeout_s)
        try:
            if not self._in_sample:
                session: SandboxSession = CommandSession(self.sandbox, self.root, limits=limits)
            else:
                session, starting = self._start_session()
                await asyncio.shield(starting)  # a cancel here ends the sample, which ends it
            result = await session.run(["/bin/sh", "-c", command], timeout=timeout)
        except SessionNotStarted:
            raise  # no command of the agent's ran: the sample ends as the sandbox's failure
        except SessionEnded as exc:
            if self._in_sample:  # stopped past the bounds while it ran: the sample ends here
                await asyncio.to_thread(check_bounds, self.root, self.bounds)
            raise ToolFailed(str(exc)) from exc
        if self._in_sample:  # what the command wrote: past the bounds, the sample ends here
            await asyncio.to_thread(check_bounds, self.root, self.bounds)
        output = (result.stdout + result.stderr).rstrip()
        status = (f"timed out after {timeout:g} s" if result.timed_out
                  else f"exit code {result.exit_code}")
        return f"{status}\n{output}" if output else status

    def _start_session(self) -> tuple[SandboxSession, asyncio.Task[None]]:
        """The sample's session and its start, begun in the background on the first call."""
        assert self.sandbox is not None
        if self._session is None:
            limits = Limits(wall_s=self.budget.command_timeout_s)
            self._session = open_session(self.sandbox, self.root, limits=limits)
            self._starting = asyncio.ensure_future(self._session.start())
        assert self._starting is not None  # set with the session
        return self._session, self._starting

    # -- activation --------------------------------------------------------------------------
    def _saw(self, rel: str) -> None:
        if self.skill_path is None:
            return
        path = PurePosixPath(os.path.normpath(rel))
        if path.is_relative_to(self.skill_path) and path != PurePosixPath(self.skill_path):
            self.outcome.saw_skill_file(path.relative_to(self.skill_path).as_posix())

    def _saw_in_command(self, command: str) -> None:
        if self.skill_path is None:
            return
        pattern = re.escape(self.skill_path) + r"/([^\s'\";|&<>()]+)"
        for match in re.finditer(pattern, command):
            self._saw(f"{self.skill_path}/{match.group(1)}")


def _listed(entry: TreeEntry) -> str:
    return f"{entry.rel} (symlink)" if entry.is_link else entry.rel


def _parts(rel: str) -> list[str]:
    rel = rel.strip()
    clean = rel[2:] if rel.startswith("./") else rel
    if not is_relative(clean) or clean in ("", "."):
        raise ToolFailed(f"{rel!r} is not a path inside the project: use a relative path "
                         "without '..'")
    return [p for p in PurePosixPath(clean).parts if p != "."]


def _why(rel: str, err: OSError) -> str:
    if err.errno == errno.ELOOP or err.errno == errno.ENOTDIR and os.path.sep in rel:
        return f"{rel} goes through a symlink or a file, which the tools never follow"
    if err.errno == errno.ENOENT:
        return f"{rel} does not exist"
    if err.errno == errno.EISDIR:
        return f"{rel} is a folder"
    if err.errno == errno.ENXIO:  # a FIFO with no reader, opened without blocking
        return f"{rel} is not a regular file"
    return f"{rel}: {os.strerror(err.errno or 0)}"


def _text(args: dict[str, Any], key: str, *, allow_empty: bool = False) -> str:
    value = args.get(key)
    if not isinstance(value, str) or (not value and not allow_empty):
        raise ToolFailed(f"the argument {key!r} (a string) is missing")
    return value


def _clip(text: str, limit: int) -> str:
    """At most `limit` characters: the head and the tail (errors are often at the end)."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n[... {len(text) - limit:,} characters clipped ...]\n{text[-tail:]}"
