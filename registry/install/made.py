"""Agent folders a pull made for its links, so `remove` can take them away again once empty.

`pull --all` links a skill into every agent's folder, making `.augment/skills`, `.roo/skills`
… where they were missing; once the last skill is removed they would stay, empty, and count
as agents in use (`.augment` is how Augment is detected). The record is kept beside the
installs, in `.agents/.hubskills-made.json` of the project (or of HOME with `--global`):

    {"made": {".augment": [dev, inode], ".augment/skills": [dev, inode]}}

It holds each folder's device and inode as they were when made, so a folder is removed only
if it is the very folder the pull made (not one of the same name a teammate's checkout or
the user made later), and only while it is empty. The record is machine state, not part of
`skills.lock`: another machine makes its own folders.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from pathlib import Path

from registry._io import atomic_write_text

RECORD = Path(".agents") / ".hubskills-made.json"


def _read(root: Path) -> dict[str, tuple[int, int]]:
    try:
        data = json.loads((root / RECORD).read_text(encoding="utf-8"))["made"]
        return {str(k): (int(v[0]), int(v[1])) for k, v in data.items()
                if isinstance(v, list) and len(v) == 2}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}  # none, or not ours to trust: nothing is removed on its word


def _write(root: Path, made: dict[str, tuple[int, int]]) -> None:
    path = root / RECORD
    if not made:
        with contextlib.suppress(OSError):
            path.unlink()
        return
    if path.parent.is_dir() and not path.parent.is_symlink():
        text = json.dumps({"made": {k: list(v) for k, v in sorted(made.items())}}, indent=2)
        atomic_write_text(path, text + "\n")


def note(root: Path, folders: Iterable[Path]) -> None:
    """Record `folders` (just made by a pull, under `root`) as made by hubskills."""
    made = _read(root)
    added = False
    for folder in folders:
        if folder.is_symlink() or not folder.is_dir() or not folder.is_relative_to(root):
            continue  # a folder moved outside by name (CLAUDE_CONFIG_DIR) is not recorded
        stat = folder.stat()
        made[folder.relative_to(root).as_posix()] = (stat.st_dev, stat.st_ino)
        added = True
    if added:
        _write(root, made)


def prune(root: Path) -> list[Path]:
    """Remove the recorded folders that are still the ones made and are empty, innermost first;
    forget those gone or replaced. Returns the outermost folders removed."""
    made = _read(root)
    if not made:
        return []
    removed: list[Path] = []
    for rel in sorted(made, key=lambda r: r.count("/"), reverse=True):
        folder = root / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            made.pop(rel)
            continue
        try:
            stat = folder.lstat()
        except OSError:
            made.pop(rel)  # gone already
            continue
        if folder.is_symlink() or (stat.st_dev, stat.st_ino) != made[rel]:
            made.pop(rel)  # not the folder the pull made: never ours to remove
            continue
        with contextlib.suppress(OSError):
            folder.rmdir()  # only succeeds while empty
            made.pop(rel)
            removed = [p for p in removed if not p.is_relative_to(folder)] + [folder]
    _write(root, made)
    return sorted(removed)
