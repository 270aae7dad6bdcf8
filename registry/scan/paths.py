"""Path safety for untrusted skill files: which relative paths are acceptable, and a writer
that never follows a link or leaves its target folder. Stores, pulls and uploads all use these.

A path is acceptable only as a plain relative POSIX path that means the same thing on every
system and after any decoding a tool might apply: checked as given *and* after NFKC
normalisation (fullwidth `．．` becomes `..`), with no `%`-escaped dot, separator or NUL, no
control or invisible characters, no Windows device name (`CON`, `aux.txt`) or trailing dot or
space (Windows strips those, so two paths would collide), and short enough for any filesystem.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

from registry.errors import UnsafeSkill

_DRIVE = re.compile(r"^[A-Za-z]:")
_ENCODED = re.compile(r"%(?:2e|2f|5c|00)", re.I)  # `.`, `/`, `\`, NUL written as escapes
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
WINDOWS_DEVICES = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
                             *(f"lpt{i}" for i in range(10))})
MAX_NAME_BYTES = 255  # NAME_MAX on Linux and macOS
MAX_PATH_BYTES = 1024  # leaves room under PATH_MAX (4096) for the install and cache prefixes


def path_problem(path: str) -> str | None:
    """Why `path` is not an acceptable relative skill path (None when it is)."""
    if not path:
        return "it is empty"
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        return f"it is longer than {MAX_PATH_BYTES} bytes"
    if "\\" in path or path.startswith("/") or _DRIVE.match(path):
        return "it is not a relative POSIX path"
    if _ENCODED.search(path):
        return "it holds a %-escaped dot, separator or NUL"
    odd = next((c for c in path if unicodedata.category(c) in _INVISIBLE
                or (unicodedata.category(c) == "Zs" and c != " ")), None)
    if odd is not None:
        return f"it holds the control or invisible character U+{ord(odd):04X}"
    normal = unicodedata.normalize("NFKC", path)
    for candidate in dict.fromkeys((path, normal)):
        if "\\" in candidate or candidate.count("/") != path.count("/"):
            return "a character in it becomes a separator after Unicode normalisation"
        for part in candidate.split("/"):
            if problem := _part_problem(part):
                return problem if candidate == path else f"{problem} after Unicode normalisation"
    return None


def _part_problem(part: str) -> str | None:
    if part in ("", ".", ".."):
        return f"it has a {part!r} part" if part else "it has an empty part"
    if part.lower() == ".git":
        return "it touches git metadata"
    if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        return f"a name in it is longer than {MAX_NAME_BYTES} bytes"
    if part.split(".")[0].rstrip(" ").lower() in WINDOWS_DEVICES:
        return f"{part!r} is a Windows device name"
    if part.endswith((".", " ")):
        return f"{part!r} ends with a dot or space"
    return None


def check_relpath(path: str) -> str:
    """Refuse a repository path that is not a plain relative POSIX path (see the module doc).

    Raises:
        UnsafeSkill: the path, naming the reason.
    """
    if problem := path_problem(path):
        raise UnsafeSkill(f"refusing unsafe path in skill repository: {path!r} ({problem})",
                          hint="the repository is malformed or hostile; do not install it")
    return path


def write_file(dest: Path, rel: str, data: bytes) -> Path:
    """Create `dest/rel` (which must not exist) without following links or leaving `dest`.

    Raises:
        UnsafeSkill: the path is unsafe or resolves outside `dest`, or it is already there (a
            name given twice, or as a file and as a folder: an archive may hold both).
    """
    check_relpath(rel)
    root = dest.resolve()
    target = root.joinpath(*rel.split("/"))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.parent.resolve().is_relative_to(root):
            raise UnsafeSkill(f"refusing to write {rel!r} outside {dest}")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(target, flags, 0o644)
    except (FileExistsError, NotADirectoryError) as err:
        raise UnsafeSkill(f"{rel!r} is given twice, or as a file and as a folder",
                          hint="hold each path once") from err
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return target
