"""Path safety for untrusted skill files: which relative paths are acceptable, and a writer
that never follows a link or leaves its target folder. Stores, pulls and uploads all use these.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from registry.errors import UnsafeSkill

_DRIVE = re.compile(r"^[A-Za-z]:")


def check_relpath(path: str) -> str:
    """Refuse a repository path that could escape a folder or touch git metadata.

    Raises:
        UnsafeSkill: empty, absolute, backslash, drive letter, NUL, `.`/`..`/empty parts, `.git`.
    """
    bad = (not path or "\\" in path or "\0" in path or path.startswith("/")
           or _DRIVE.match(path) is not None)
    parts = path.split("/")
    if bad or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        raise UnsafeSkill(f"refusing unsafe path in skill repository: {path!r}",
                          hint="the repository is malformed or hostile; do not install it")
    return path


def write_file(dest: Path, rel: str, data: bytes) -> Path:
    """Create `dest/rel` (which must not exist) without following links or leaving `dest`.

    Raises:
        UnsafeSkill: the path is unsafe or resolves outside `dest`.
    """
    check_relpath(rel)
    root = dest.resolve()
    target = root.joinpath(*rel.split("/"))
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.parent.resolve().is_relative_to(root):
        raise UnsafeSkill(f"refusing to write {rel!r} outside {dest}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return target
