"""Small helpers shared by several modules: atomic writes, JSON read to a bounded depth."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write `data` to `path` via a sibling temp file and `os.replace`: never half a file.

    The file keeps the mode it had, and a new one gets the mode any new file gets (0666 less
    the umask), not the 0600 of `mkstemp`: a lockfile or a card is shared like its folder.
    With `mode` it gets that mode, set before a byte is written (0600: a file of credentials).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, _mode_for(path) if mode is None else mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _mode_for(path: Path) -> int:
    """The permission bits `path` has now, else those of a new file under this umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without setting it where Linux says it (setting it twice
    would leave other threads a moment of umask 0)."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    umask = os.umask(0)
    os.umask(umask)
    return umask


def atomic_write_text(path: Path, text: str, *, mode: int | None = None) -> None:
    """UTF-8 text version of `atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def make_temp_dir(prefix: str, parent: Path | None = None) -> Path:
    """`tempfile.mkdtemp`, but with normal folder permissions (it creates 0700 folders).

    Used for staging folders that are renamed into place and must look like any other folder.
    """
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    umask = os.umask(0)
    os.umask(umask)
    folder.chmod(0o777 & ~umask)
    return folder


def why_unwritable(folder: Path, *, create: bool = True) -> str | None:
    """Why files cannot be written in `folder`, or None when they can.

    With `create` the folder is made (as writing would make it); without, the nearest existing
    ancestor must be a folder that can be written, so nothing is created. Checked before work
    that costs money, so that a bad destination fails first rather than last.
    """
    target = Path(folder)
    try:
        if create:
            target.mkdir(parents=True, exist_ok=True)
        else:
            while not target.exists() and target != target.parent:
                target = target.parent
        if not target.is_dir():
            return f"{target} is not a folder"
    except OSError as exc:
        return exc.strerror or str(exc)
    if not os.access(target, os.W_OK | os.X_OK):
        return f"{target} is not writable"
    return None


MAX_JSON_DEPTH = 64
"""How deep untrusted JSON may nest (a trace's events nest 8, a suite a dozen): past about
1,000 levels Python 3.11's `json.loads` raises `RecursionError` (no `ValueError`), 3.13's
parses it, and code that walks the value recursively then fails there; a value this deep
is refused the same way on every Python."""


class NestedTooDeep(ValueError):
    """JSON nested deeper than `MAX_JSON_DEPTH` levels."""


def loads_bounded(text: str | bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads(text)`, refusing a value nested deeper than `max_depth` levels.

    Raises:
        json.JSONDecodeError: not JSON.
        NestedTooDeep: nested deeper than `max_depth` (also a `ValueError`).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise NestedTooDeep(f"JSON nested deeper than {max_depth} levels") from None
    stack = [(value, 0)]
    while stack:  # without recursion: the point is a value too deep to recurse into
        item, depth = stack.pop()
        inside = item.values() if isinstance(item, dict) else item if isinstance(item, list) \
            else None
        if inside is None:
            continue
        if depth >= max_depth:
            raise NestedTooDeep(f"JSON nested deeper than {max_depth} levels")
        stack.extend((child, depth + 1) for child in inside)
    return value
