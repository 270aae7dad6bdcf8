"""Workspace checks: grade the files left in a workspace after the agent stopped.

The workspace was written by untrusted code, so file checks read it on the host without ever
going through a link: each path component is opened with `O_NOFOLLOW` relative to its parent's
descriptor, and only a regular file of at most `MAX_FILE_BYTES` is read. A symlink the agent
planted fails the check with a reason; its target is never opened. Globs walk the tree without
following links either.

`command` checks run in the sandbox (the caller decides whether there is one) in a copy of the
workspace, so a command that writes files changes neither the other checks' view nor the
workspace kept with the run.

The skill folders (`.agents/skills/`, `.claude/skills/`) are left out of globs and of a
command's copy: the skill's own files must never pass a check for the agent.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import stat
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from registry.agent import (
    DEFAULT_BOUNDS,
    SKILLS_FOLDER,
    TreeWalk,
    WorkspaceBounds,
    copy_tree,
    remove_tree,
)
from registry.evaluation.workspace_paths import UnsafePath, place_files
from registry.format import checks_schema as cs
from registry.sandbox import Sandbox, run_check

MAX_FILE_BYTES = 4 * 1024 * 1024  # a file a check reads; larger fails with a reason
SKILL_FOLDERS = (SKILLS_FOLDER, ".claude/skills")
_TAIL = 1500
_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class Unreadable(Exception):
    """A path that cannot be checked; the message says why (missing, a link, too large)."""


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- reading the workspace without following links -------------------------------------------


def _open(root: Path, rel: str) -> tuple[int, os.stat_result]:
    """A descriptor for `rel` under `root` and its stat, never through a symlink."""
    parts = PurePosixPath(rel).parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, part in enumerate(parts):
            where = "/".join(parts[: depth + 1])
            try:
                child = os.open(part, _NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                raise Unreadable(f"{rel}: no such file") from None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise Unreadable(f"{where} is a symbolic link (not followed)") from None
                if exc.errno == errno.ENOTDIR:
                    raise Unreadable(f"{'/'.join(parts[:depth])} is not a folder") from None
                raise Unreadable(f"{where}: cannot open: {exc.strerror}") from None
            os.close(fd)
            fd = child
            info = os.fstat(fd)
            if depth < len(parts) - 1 and not stat.S_ISDIR(info.st_mode):
                raise Unreadable(f"{where} is not a folder")
        return fd, info
    except BaseException:
        os.close(fd)
        raise


def read_text(root: Path, rel: str) -> str:
    """The UTF-8 text of the regular file `rel` inside `root`.

    Raises:
        Unreadable: missing, a symlink (anywhere on the path), not a regular file, larger than
            `MAX_FILE_BYTES`, or not UTF-8.
    """
    fd, info = _open(root, rel)
    with os.fdopen(fd, "rb") as handle:
        if stat.S_ISDIR(info.st_mode):
            raise Unreadable(f"{rel} is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"{rel} is not a regular file")
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise Unreadable(f"{rel} is larger than {MAX_FILE_BYTES // 2**20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unreadable(f"{rel} is not UTF-8 text") from None


def _exists(root: Path, rel: str) -> str | None:
    """None when `rel` is a regular file or folder reached without links, else why not."""
    try:
        fd, info = _open(root, rel)
    except Unreadable as exc:
        return str(exc)
    os.close(fd)
    if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
        return None
    return f"{rel} is not a regular file"


def _matches(pattern: tuple[str, ...], path: tuple[str, ...]) -> bool:
    if not pattern:
        return not path
    if pattern[0] == "**":
        return any(_matches(pattern[1:], path[i:]) for i in range(len(path) + 1))
    return bool(path) and fnmatchcase(path[0], pattern[0]) and _matches(pattern[1:], path[1:])


def _skipped(rel: PurePosixPath) -> bool:
    return any(rel.is_relative_to(folder) for folder in SKILL_FOLDERS)


def _glob(root: Path, pattern: str) -> tuple[list[str], list[str]]:
    """(files and folders matching `pattern`, symlinks matching it), skill folders left out;
    the walk is iterative and stops at the workspace's bounds (entries, depth, path length)."""
    wanted = PurePosixPath(pattern).parts
    found: list[str] = []
    links: list[str] = []
    for entry in TreeWalk(root, DEFAULT_BOUNDS, skip=lambda rel: _skipped(PurePosixPath(rel))):
        if _matches(wanted, PurePosixPath(entry.rel).parts):
            (links if entry.is_link else found).append(entry.rel)
    return found, links


# --- the file checks --------------------------------------------------------------------------


def file_exists(check: cs.FileExists, root: Path) -> tuple[bool, str]:
    """Every path (or glob) names a file or folder reached without following a link."""
    problems, found = [], []
    for path in check.paths():
        if cs.is_glob(path):
            matched, links = _glob(root, path)
            if matched:
                found.append(f"{path} ({', '.join(_clip(m, 60) for m in matched[:3])})")
            else:
                why = f"; {', '.join(links[:3])} only as symbolic links (not followed)" \
                    if links else ""
                problems.append(f"nothing matches {path}{why}")
            continue
        why_not = _exists(root, path)
        if why_not is None:
            found.append(path)
        else:
            problems.append(why_not)
    if problems:
        return False, "; ".join(problems)
    return True, "found " + ", ".join(found)


def _present(check: cs.FileContains | cs.FileNotContains, text: str) -> list[str]:
    sensitive = check.case_sensitive
    haystack = text if sensitive else text.casefold()
    return [v for v in check.values() if (v if sensitive else v.casefold()) in haystack]


def _show(values: list[str]) -> str:
    return ", ".join(repr(_clip(v, 60)) for v in values)


def file_contains(check: cs.FileContains | cs.FileNotContains, root: Path) -> tuple[bool, str]:
    """`file_contains`: every value is in the file; `file_not_contains`: none is (the file
    must exist: a check on a file the agent never wrote fails)."""
    try:
        text = read_text(root, check.path)
    except Unreadable as exc:
        return False, str(exc)
    found = _present(check, text)
    if check.type == "file_not_contains":
        return (False, f"{check.path} holds {_show(found)}") if found \
            else (True, f"{check.path} holds none of them")
    missing = [v for v in check.values() if v not in found]
    return (False, f"{check.path} lacks {_show(missing)}") if missing \
        else (True, f"{check.path} holds {_show(found)}")


def file_regex(check: cs.FileRegex, root: Path) -> tuple[bool, str]:
    """The pattern matches somewhere in the file."""
    try:
        text = read_text(root, check.path)
    except Unreadable as exc:
        return False, str(exc)
    match = check.compiled().search(text)
    if match:
        return True, f"{check.path}: /{check.pattern}/ matched {_clip(match.group(0))!r}"
    return False, f"{check.path}: no match for /{check.pattern}/"


class _NoAliasLoader(yaml.SafeLoader):
    """A safe loader that refuses aliases, so a small file cannot expand into a huge value."""

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError("YAML aliases (*name) are not allowed")
        return super().compose_node(parent, index)


def _parse(text: str, kind: str) -> Any:
    if kind == "json":
        return json.loads(text)
    if kind == "toml":
        return tomllib.loads(text)
    return yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 (a SafeLoader subclass)


def _lookup(data: Any, key: str) -> Any:
    """The value at the dotted `key` (list items by index); Unreadable names the missing part."""
    value = data
    walked: list[str] = []
    for part in key.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            at = ".".join(walked) or "the top level"
            has = f" (it has {', '.join(map(str, list(value)[:8]))})" \
                if isinstance(value, dict) and value else ""
            raise Unreadable(f"no key {key}: {part!r} missing at {at}{has}")
        walked.append(part)
    return value


def _canonical(value: Any) -> str:
    # JSON spelling compares strictly: true is not 1, "9.0" is not 9.0.
    return json.dumps(value, sort_keys=True, default=str)


def _holds(value: Any, expected: Any) -> bool:
    if isinstance(value, list):
        items = expected if isinstance(expected, list) else [expected]
        have = {_canonical(v) for v in value}
        return all(_canonical(item) in have for item in items)
    if isinstance(value, str):
        return isinstance(expected, str) and expected in value
    if isinstance(value, dict):
        return isinstance(expected, str) and expected in value
    return False


def file_parses(check: cs.FileParses, root: Path) -> tuple[bool, str]:
    """The file parses as its format; the value at `key` exists and matches the expectation."""
    try:
        data = _parse(read_text(root, check.path), check.format)
        value = data if check.key is None else _lookup(data, check.key)
    except Unreadable as exc:
        return False, str(exc)
    except (ValueError, yaml.YAMLError, RecursionError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return False, f"{check.path} is not valid {check.format.upper()}: {_clip(first, 160)}"
    where = f"{check.path}" + (f" {check.key}" if check.key else "")
    shown = _clip(_canonical(value), 120)
    expectation = check.expectation()
    if expectation is None:
        return True, f"{where} = {shown}" if check.key else f"{check.path} parses"
    how, expected = expectation
    ok = _canonical(value) == _canonical(expected) if how == "equals" \
        else _holds(value, expected)
    verb = "equals" if how == "equals" else "contains"
    return ok, f"{where} = {shown}" + ("" if ok else f"; expected it {verb} "
                                           f"{_clip(_canonical(expected), 80)}")


# Any: each runner takes the check type it is listed under.
FILE_RUNNERS: dict[type, Callable[[Any, Path], tuple[bool, str]]] = {
    cs.FileExists: file_exists, cs.FileContains: file_contains,
    cs.FileNotContains: file_contains, cs.FileRegex: file_regex, cs.FileParses: file_parses,
}


# --- the folders checks run in ----------------------------------------------------------------


def write_files(work: Path, files: dict[str, str] | dict[str, bytes]) -> None:
    """Write `files` (relative names) into `work`. A name `workspace_paths` refuses (absolute,
    `..`, a backslash, a device name, ...), or whose way passes a link or a file, is dropped:
    nothing outside `work` is written and no link is followed."""
    for name, content in files.items():
        data = content if isinstance(content, bytes) else content.encode()
        with suppress(UnsafePath, OSError):  # extract_files refuses such names; never trust it
            place_files(work, {name: data})


@contextmanager
def answer_workspace(inputs: dict[str, bytes], files: dict[str, str], scratch: Path | None, *,
                     make: bool = True) -> Iterator[Path | None]:
    """A temp folder (under `scratch`) holding a case's `inputs` and then the answer's `files`,
    removed on exit: chat mode's stand-in for an agent's workspace. None when not `make`."""
    if not make:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="hubskills-answer-", dir=scratch))
    try:
        write_files(folder, inputs)
        write_files(folder, files)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- the command check ------------------------------------------------------------------------


def copy_workspace(source: Path, target: Path,
                   bounds: WorkspaceBounds = DEFAULT_BOUNDS) -> list[str]:
    """Copy folders, regular files and symlinks (as links, never followed: inside the sandbox
    they point nowhere) from `source` into the new folder `target`; skill folders and special
    files are left out.

    The copy stays within `bounds` (`registry.agent.copy_tree`): sparse files stay sparse and
    what would take it past a bound is left out. Returns what was left out and why: nothing
    for an agent sample's workspace, which is within its bounds by the time it is checked.
    """
    return copy_tree(source, target, bounds, skip=lambda rel: _skipped(PurePosixPath(rel)))


def _tail(text: str) -> str:
    return text if len(text) <= _TAIL else "…" + text[-_TAIL:]


async def run_command(check: cs.CommandCheck, root: Path, sandbox: Sandbox,
                      scratch: Path | None) -> tuple[bool | None, str]:
    """Run the check's shell command in `sandbox`, in a copy of `root` made under `scratch`
    (the system temp folder when None) and removed after; None when the sandbox never started
    it (a check error)."""
    tmp = Path(tempfile.mkdtemp(prefix="hubskills-command-", dir=scratch))
    try:
        work = tmp / "work"
        copy_workspace(root, work)
        run = await run_check(sandbox, ["sh", "-c", check.command], work,
                              timeout=check.timeout_s)
    finally:  # what the command wrote, however deep (shutil.rmtree recurses once per level)
        await asyncio.to_thread(remove_tree, tmp)
    if run.launch_error:
        return None, run.launch_error
    if run.timed_out:
        return False, f"timed out after {check.timeout_s:g}s"
    output = run.stdout + run.stderr
    streams = "".join(f"; {name}: {_tail(text.strip())}" for name, text in
                      (("stdout", run.stdout), ("stderr", run.stderr)) if text.strip())
    if run.exit_code != 0:
        return False, f"exit {run.exit_code}{streams}"
    missing = [v for v in check.expected_output() if v not in output]
    if missing:
        return False, f"exit 0 but the output lacks {_show(missing)}{streams}"
    return True, "exit 0" + (f", output holds {_show(check.expected_output())}"
                             if check.expected_output() else "")
