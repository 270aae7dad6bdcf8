"""A sample's workspace: a fresh folder seeded with the case's files (and, in the skill arm, the
skill at `.agents/skills/<name>/`), and what the agent changed in it.

The workspace is written to by untrusted code (the agent's commands run in the sandbox with it
as their only writable folder), so reading it back never follows a symlink: a link is reported
as a link, never read through.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from registry.format.inputs import InputFile, is_relative
from registry.format.skill import Skill

SKILLS_FOLDER = ".agents/skills"
EVALS_FOLDER = "evals"  # a skill's test suite: left out of the workspace
MAX_DIFF_BYTES = 64 * 1024  # a text file larger than this is listed in a diff, not shown


@dataclass(frozen=True)
class FileChange:
    """One path the agent added, modified or deleted; `diff` is a unified diff for text."""

    path: str
    status: Literal["added", "modified", "deleted"]
    size: int  # bytes after the change (0 when deleted)
    diff: str = ""
    note: str = ""  # why no diff is shown ("binary", "symlink", "too large")

    def to_dict(self) -> dict[str, object]:
        """JSON-ready, without empty fields."""
        data: dict[str, object] = {"path": self.path, "status": self.status, "size": self.size}
        if self.diff:
            data["diff"] = self.diff
        if self.note:
            data["note"] = self.note
        return data


@dataclass
class Workspace:
    """A seeded workspace folder and the state it was seeded with."""

    path: Path
    skill_path: str | None = None  # relative: `.agents/skills/<name>`, None in the baseline
    _seeded: dict[str, bytes] = field(default_factory=dict, repr=False)

    def files(self) -> dict[str, bytes | None]:
        """Every regular file now in the workspace (None for a symlink or special file)."""
        return _read_tree(self.path)

    def diff(self) -> list[FileChange]:
        """What changed since seeding, sorted by path; the skill folder itself is left out."""
        now = self.files()
        changes = []
        for rel in sorted(set(now) | set(self._seeded)):
            if self.skill_path and PurePosixPath(rel).is_relative_to(self.skill_path) \
                    and now.get(rel) == self._seeded.get(rel):
                continue
            before, after = self._seeded.get(rel), now.get(rel, b"")
            if rel not in now:
                changes.append(FileChange(rel, "deleted", 0))
            elif rel not in self._seeded:
                changes.append(_change(rel, "added", b"", after))
            elif before != after:
                changes.append(_change(rel, "modified", before or b"", after))
        return changes


def seed_workspace(root: Path, files: dict[str, str | InputFile], *,
                   skill: Skill | None = None) -> Workspace:
    """Create `root` (which must not exist) with the case's `files`, bytes preserved, and the
    skill folder's files under `.agents/skills/<name>/` when `skill` is given (all but its
    `evals/`: the agent never sees the checks that grade it)."""
    root.mkdir(parents=True)
    for name, file in files.items():
        if not is_relative(name):
            raise ValueError(f"case file {name!r} is not a relative path")
        data = file.encode("utf-8") if isinstance(file, str) else file.data
        _write(root, name, data)
    skill_path = None
    if skill is not None:
        skill_path = f"{SKILLS_FOLDER}/{skill.name}"
        for rel in skill.files():
            if PurePosixPath(rel).parts[0] == EVALS_FOLDER:
                continue  # the suite and its checks are the grader's, never the agent's
            source = skill.path / rel
            target = root / skill_path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target, follow_symlinks=False)
            target.chmod(source.stat().st_mode & 0o755 | 0o600)
    workspace = Workspace(root, skill_path)
    workspace._seeded = {rel: data for rel, data in _read_tree(root).items() if data is not None}
    return workspace


def _write(root: Path, rel: str, data: bytes) -> None:
    target = root.joinpath(*PurePosixPath(rel).parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def _read_tree(root: Path) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    for folder, dirs, names in os.walk(root, followlinks=False):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            full = os.path.join(folder, name)
            rel = PurePosixPath(os.path.relpath(full, root)).as_posix()
            info = os.lstat(full)
            found[rel] = _read_regular(full) if stat.S_ISREG(info.st_mode) else None
    return found


def _read_regular(full: str) -> bytes:
    fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def _change(rel: str, status: Literal["added", "modified"], before: bytes,
            after: bytes | None) -> FileChange:
    if after is None:
        return FileChange(rel, status, 0, note="symlink or special file, not read")
    if len(after) > MAX_DIFF_BYTES or len(before) > MAX_DIFF_BYTES:
        return FileChange(rel, status, len(after), note="too large to show")
    try:
        old, new = before.decode("utf-8"), after.decode("utf-8")
    except UnicodeDecodeError:
        return FileChange(rel, status, len(after), note=f"binary, sha256 "
                          f"{hashlib.sha256(after).hexdigest()[:12]}")
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/{rel}", tofile=f"b/{rel}")
    return FileChange(rel, status, len(after), diff="".join(lines))
