"""A sample's workspace: a fresh folder seeded with the case's files (and, in the skill arm, the
skill at `.agents/skills/<name>/`), and what the agent changed in it.

The workspace is written to by untrusted code (the agent's commands run in the sandbox with it
as their only writable folder), so reading it back never follows a symlink: a link is reported
as a link, never read through. It is read within `WorkspaceBounds`: past them, `diff` raises
`WorkspaceOverLimit` (the sample's arm failed) before reading what is over, and a file larger
than the read cap (a sparse file claiming 250 MB, say) is listed with its size, never read.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from registry.agent.bounds import (
    CHUNK,
    DEFAULT_BOUNDS,
    FILE_FLAGS,
    WorkspaceBounds,
    measure,
    open_folder,
)
from registry.format.folder_names import folder_name
from registry.format.inputs import InputFile, is_relative
from registry.format.skill import Skill

SKILLS_FOLDER = ".agents/skills"
EVALS_FOLDER = "evals"  # a skill's test suite: left out of the workspace
MAX_DIFF_BYTES = 64 * 1024  # a text file larger than this is listed in a diff, not shown
_KEPT_BYTES = 32 << 20  # small files' bytes one snapshot keeps for diffs, all together


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


@dataclass(frozen=True)
class _Seen:
    """A workspace entry as one snapshot saw it: a file's size, digest and (small) bytes."""

    kind: Literal["file", "other"]
    size: int = 0
    stamp: tuple[int, int] = (0, 0)  # (size, mtime_ns): compared for a file too large to read
    digest: str = ""  # sha256 of a file that was read, "" when not read
    data: bytes | None = None  # the bytes of a file small enough to diff


@dataclass
class Workspace:
    """A seeded workspace folder and the state it was seeded with."""

    path: Path
    skill_path: str | None = None  # relative: `.agents/skills/<name>`, None in the baseline
    bounds: WorkspaceBounds = DEFAULT_BOUNDS
    _seeded: dict[str, _Seen] = field(default_factory=dict, repr=False)

    def files(self) -> dict[str, bytes | None]:
        """Every file now in the workspace: its bytes when small enough to diff, else None
        (also for a symlink or special file).

        Raises:
            WorkspaceOverLimit: the workspace is past `bounds`.
        """
        return {rel: seen.data for rel, seen in _snapshot(self.path, self.bounds).items()}

    def diff(self) -> list[FileChange]:
        """What changed since seeding, sorted by path; the skill folder itself is left out.

        Raises:
            WorkspaceOverLimit: the workspace is past `bounds` (nothing over them is read).
        """
        now = _snapshot(self.path, self.bounds)
        changes = []
        for rel in sorted(set(now) | set(self._seeded)):
            before, after = self._seeded.get(rel), now.get(rel)
            if after is None:
                changes.append(FileChange(rel, "deleted", 0))
            elif before is None:
                changes.append(_change(rel, "added", None, after))
            elif not _same(before, after):
                changes.append(_change(rel, "modified", before, after))
        return changes


def seed_workspace(root: Path, files: dict[str, str | InputFile], *,
                   skill: Skill | None = None, required: Sequence[Skill] = (),
                   bounds: WorkspaceBounds = DEFAULT_BOUNDS) -> Workspace:
    """Create `root` (which must not exist) with the case's `files`, bytes preserved, and the
    skill folder's files under `.agents/skills/<name>/` when `skill` is given (all but its
    `evals/`: the agent never sees the checks that grade it), each skill it `required` beside
    it, as a pull installs them."""
    root.mkdir(parents=True)
    for name, file in files.items():
        if not is_relative(name):
            raise ValueError(f"case file {name!r} is not a relative path")
        data = file.encode("utf-8") if isinstance(file, str) else file.data
        _write(root, name, data)
    skill_path = None
    if skill is not None:
        skill_path = _place_skill(root, skill)
        for other in required:
            _place_skill(root, other)
    workspace = Workspace(root, skill_path, bounds)
    workspace._seeded = _snapshot(root, bounds)
    return workspace


def _place_skill(root: Path, skill: Skill) -> str:
    """Copy `skill` (but its `evals/`) to `.agents/skills/<name>/`; that folder, relative.

    Raises:
        InvalidSkill: a name that is no folder name (`../../home/me` would copy the skill's
            files over the host's own, before any sandbox runs).
    """
    skill_path = f"{SKILLS_FOLDER}/{folder_name(skill)}"
    for rel in skill.files():
        if PurePosixPath(rel).parts[0] == EVALS_FOLDER:
            continue  # the suite and its checks are the grader's, never the agent's
        source = skill.path / rel
        target = root / skill_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target, follow_symlinks=False)
        if not target.is_symlink():  # a chmod would follow it out, to the host's file
            target.chmod(source.stat().st_mode & 0o755 | 0o600)
    return skill_path


def _write(root: Path, rel: str, data: bytes) -> None:
    target = root.joinpath(*PurePosixPath(rel).parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def _snapshot(root: Path, bounds: WorkspaceBounds) -> dict[str, _Seen]:
    """Every file, link and special file under `root` (folders are implied by their files).

    A regular file is read in chunks, and only when it is at most `bounds.read_bytes` long:
    a sparse file's claimed size is never read out; only a small file's bytes are kept.
    """
    found: dict[str, _Seen] = {}
    kept = 0
    top = open_folder(root)
    try:
        for entry in measure(top, bounds):
            if entry.is_dir:
                continue
            if not entry.is_file:
                found[entry.rel] = _Seen("other")
                continue
            size = entry.info.st_size
            seen = _Seen("file", size, (size, entry.info.st_mtime_ns))
            if size <= bounds.read_bytes:
                digest, data = _read(entry.dir_fd, entry.name, keep=kept < _KEPT_BYTES)
                seen = _Seen("file", size, seen.stamp, digest, data)
                kept += len(data or b"")
            found[entry.rel] = seen
    finally:
        os.close(top)
    return found


def _read(dir_fd: int, name: str, *, keep: bool) -> tuple[str, bytes | None]:
    """(sha256, the bytes when at most MAX_DIFF_BYTES and `keep`) of a regular file."""
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError:
        return "", None  # gone or replaced meanwhile: shown without a diff
    digest, head, size = hashlib.sha256(), bytearray(), 0
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "", None
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            size += len(chunk)
            if keep and size <= MAX_DIFF_BYTES:
                head += chunk
    return digest.hexdigest(), bytes(head) if keep and size <= MAX_DIFF_BYTES else None


def _same(before: _Seen, after: _Seen) -> bool:
    if before.kind != after.kind or before.kind == "other":
        return before.kind == after.kind
    if before.digest and after.digest:
        return before.digest == after.digest
    return before.stamp == after.stamp


def _change(rel: str, status: Literal["added", "modified"], before: _Seen | None,
            after: _Seen) -> FileChange:
    if after.kind == "other":
        return FileChange(rel, status, 0, note="symlink or special file, not read")
    if not after.digest:
        return FileChange(rel, status, after.size, note=f"too large to read ({after.size:,} "
                                                         "bytes)")
    if after.data is None or (before is not None and before.data is None):
        return FileChange(rel, status, after.size, note="too large to show")
    try:
        old = before.data.decode("utf-8") if before is not None and before.data else ""
        new = after.data.decode("utf-8")
    except UnicodeDecodeError:
        return FileChange(rel, status, after.size, note=f"binary, sha256 {after.digest[:12]}")
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=f"a/{rel}", tofile=f"b/{rel}")
    return FileChange(rel, status, after.size, diff="".join(lines))
