"""Writing and deleting files inside a workspace folder by names someone else supplied.

The names come from a case's input files, a model's answer, or the record of a final workspace
stored on a result row, which whoever pushed the row may have written by hand. So every name
is checked before any file operation (`path_problem`: no absolute path or drive, no `..`, no
backslash, no NUL or control character, no device or reserved name), must resolve inside the
folder, and each operation then walks the folder one component at a time from its descriptor
with `O_NOFOLLOW`: a symbolic link anywhere on the way is refused, never followed, so nothing
outside the folder is ever created, written or removed.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath, PureWindowsPath

from registry.results.replay_record import WorkspaceFile, file_bytes

STATUSES = ("added", "modified", "deleted")  # what a workspace record says of a path
_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                      *(f"{port}{n}" for port in ("COM", "LPT") for n in "0123456789¹²³")})
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_WRITE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(ValueError):
    """A name that may not be used inside a workspace; the message names it and says why."""


def path_problem(name: object) -> str | None:
    """Why `name` cannot name a file inside a workspace, or None when it can."""
    if not isinstance(name, str) or not name:
        return "an empty name"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "a NUL or control character"
    if "\\" in name:
        return "a backslash"
    if name.startswith("/") or PureWindowsPath(name).drive or ":" in name:
        return "an absolute path" if name.startswith("/") else "a drive or stream name (:)"
    parts = PurePosixPath(name).parts
    if not parts or parts == (".",):
        return "no file name"
    if ".." in parts:
        return "a parent folder (..)"
    for part in parts:
        if part.split(".")[0].rstrip(" ").upper() in _DEVICES:
            return f"a device name ({part})"
    return None


def first_problem(names: Iterable[object], root: Path | None = None) -> str | None:
    """`'NAME': why` for the first of `names` that `path_problem` refuses or that resolves
    outside `root` (when given, through a link already there), else None."""
    base = root.resolve() if root is not None else None
    for name in names:
        why = path_problem(name)
        if why is None and base is not None:
            target = (base / str(name)).resolve()
            if target == base or not target.is_relative_to(base):
                why = "it resolves outside the workspace"
        if why is not None:
            return f"{name!r}: {why}"
    return None


def record_problem(record: Sequence[WorkspaceFile]) -> str | None:
    """The first thing wrong with a final workspace's record (a path `path_problem` refuses,
    an unknown status, a path listed twice) as `'PATH': why`, else None."""
    seen: set[str] = set()
    for entry in record:
        why = first_problem([entry.path])
        if why is not None:
            return why
        if entry.status not in STATUSES:
            return f"{entry.path!r}: an unknown status {entry.status!r}"
        key = str(PurePosixPath(entry.path))
        if key in seen:
            return f"{entry.path!r}: listed twice"
        seen.add(key)
    return None


def place_files(root: Path, files: Mapping[str, bytes], deleted: Iterable[str] = ()) -> None:
    """Remove each of `deleted` (a missing one is fine), then write `files`, inside `root`.

    Every name is checked first (`first_problem`), before anything is touched; then each
    operation follows no link.

    Raises:
        UnsafePath: a refused name (nothing touched), or a link, a file where a folder must be,
            or an error met on the way (what came before it stays done).
    """
    gone = list(deleted)
    why = first_problem([*gone, *files], root)
    if why is not None:
        raise UnsafePath(why)
    top = os.open(root, _DIR)
    try:
        for name in gone:
            with _folder_of(top, name, create=False) as (fd, leaf):
                if fd is not None:  # else its folder is missing: nothing to remove
                    _remove(fd, leaf, name)
        for name, data in files.items():
            with _folder_of(top, name, create=True) as (fd, leaf):
                assert fd is not None  # made when missing
                _write(fd, leaf, name, data)
    finally:
        os.close(top)


def rebuild_workspace(root: Path, inputs: Mapping[str, bytes],
                      record: Sequence[WorkspaceFile]) -> None:
    """Rebuild a sample's final workspace in the empty folder `root`: the case's `inputs`, then
    the record's deletions, then its added and modified files.

    Raises:
        UnsafePath: a refused name in `inputs` or `record` (then nothing was written), or what
            `place_files` meets on the way.
    """
    why = first_problem(inputs) or record_problem(record)
    if why is not None:
        raise UnsafePath(why)
    place_files(root, inputs)
    place_files(root, {f.path: file_bytes(f) for f in record if f.status != "deleted"},
                deleted=[f.path for f in record if f.status == "deleted"])


@contextmanager
def _folder_of(top: int, name: str, *, create: bool) -> Iterator[tuple[int | None, str]]:
    """(a descriptor of the folder holding `name` below descriptor `top`, the file's name),
    its folders opened without following links (and made when `create`; when not, a missing
    one gives None). An OS error on the way or in the body is an `UnsafePath` naming `name`."""
    *folders, leaf = PurePosixPath(name).parts
    fd: int | None = os.dup(top)
    try:
        for depth, part in enumerate(folders):
            assert fd is not None
            if create:
                with suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                child = os.open(part, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if create:
                    raise
                os.close(fd)
                fd = None
                break
            except OSError as err:
                where = "/".join(folders[: depth + 1])
                raise UnsafePath(f"{name!r}: {_why_not_folder(fd, part, where, err)}") from None
            os.close(fd)
            fd = child
        yield fd, leaf
    except OSError as err:
        raise UnsafePath(f"{name!r}: {err.strerror or err}") from None
    finally:
        if fd is not None:
            os.close(fd)


def _why_not_folder(fd: int, part: str, where: str, err: OSError) -> str:
    with suppress(OSError):
        if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
            return f"{where} is a symbolic link (not followed)"
    if err.errno in (errno.ENOTDIR, errno.ELOOP):
        return f"{where} is not a folder"
    return f"{where}: {err.strerror or err}"


def _write(fd: int, leaf: str, name: str, data: bytes) -> None:
    try:
        info = os.stat(leaf, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise UnsafePath(f"{name!r} is a symbolic link (not followed)")
    if info is not None and stat.S_ISDIR(info.st_mode):
        os.rmdir(leaf, dir_fd=fd)  # a folder emptied by the record's deletions; else refused
    out = os.open(leaf, _WRITE, 0o644, dir_fd=fd)
    with os.fdopen(out, "wb") as handle:
        handle.write(data)


def _remove(fd: int, leaf: str, name: str) -> None:
    try:
        info = os.stat(leaf, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(f"{name!r} is a symbolic link (not followed)")
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{name!r} is not a regular file")
    os.unlink(leaf, dir_fd=fd)
