"""Placing folders and links so that a failure at any step can be undone exactly.

`Transaction` renames what it replaces aside instead of deleting it, so `rollback` restores the
previous state and `finish` deletes what was set aside. `make_dirs` and `remove_empty` create and
clean up the folders a step needs; `points_to` compares a link's target without following it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from registry.install.agents import AgentLink

log = logging.getLogger(__name__)

STAGING_PREFIX = ".hubskills-staging-"
ASIDE_PREFIX = ".hubskills-old-"


@dataclass(frozen=True)
class LinkPlan:
    """One agent folder entry to place: `create` it, `keep` it, or `replace` what is there."""

    path: Path
    agents: tuple[str, ...]
    action: str


def points_to(link: Path, dest: Path) -> bool:
    """Whether the symlink `link` leads to `dest` (compared lexically, never followed)."""
    target = os.readlink(link)
    return os.path.normpath(os.path.join(link.parent, target)) == os.path.normpath(dest)


class Transaction:
    """Renames aside, creations and links, undone together by `rollback` (`with Transaction()
    as txn:` rolls back on any exception and finishes otherwise).

    Nothing is deleted before `finish`: what a step replaces is renamed into a sibling
    `.hubskills-old-*` folder, so `rollback` can put it back exactly as it was.
    """

    def __init__(self) -> None:
        self.asides: list[tuple[Path, Path]] = []
        self.created: list[Path] = []
        self.made: list[Path] = []  # agent folders made for links (`made.note` records them)

    def _aside(self, path: Path) -> None:
        aside = Path(tempfile.mkdtemp(prefix=ASIDE_PREFIX, dir=path.parent)) / "old"
        os.rename(path, aside)
        self.asides.append((path, aside))

    def swap(self, dest: Path, staged: Path) -> None:
        """Move `dest` aside (if present) and rename `staged` into its place."""
        if dest.exists() or dest.is_symlink():
            self._aside(dest)
        os.rename(staged, dest)
        self.created.append(dest)

    def remove(self, path: Path) -> None:
        """Take `path` away (kept aside until `finish`)."""
        self._aside(path)

    def link(self, dest: Path, plan: LinkPlan, copy: bool) -> AgentLink:
        """Place `dest` at `plan.path` as a relative symlink (a copy with `copy` or no links)."""
        if plan.action == "keep":  # a link to `dest`, or a copy holding its files already
            return AgentLink(plan.path, "symlink" if plan.path.is_symlink() else "copy",
                             plan.agents)
        make_dirs(plan.path.parent, self.made)
        if plan.action == "replace":
            self._aside(plan.path)
        mode = "copy" if copy else "symlink"
        if not copy:
            try:
                os.symlink(os.path.relpath(dest, plan.path.parent), plan.path,
                           target_is_directory=True)
            except OSError as err:  # no symlinks here (Windows without privilege, some FS)
                log.info("cannot link %s (%s); copying instead", plan.path, err)
                mode = "copy"
        if mode == "copy":
            tmp = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=plan.path.parent))
            try:
                shutil.copytree(dest, tmp / "copy", symlinks=True)
                os.rename(tmp / "copy", plan.path)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        self.created.append(plan.path)
        return AgentLink(plan.path, mode, plan.agents)

    def rollback(self) -> None:
        """Undo everything done, newest first: the previous state comes back."""
        for path in reversed(self.created):
            delete_path(path)
        remove_empty(self.made)
        for path, aside in reversed(self.asides):
            if not (path.exists() or path.is_symlink()):
                os.rename(aside, path)
            shutil.rmtree(aside.parent, ignore_errors=True)

    def finish(self) -> None:
        """Delete what was moved aside."""
        for _, aside in self.asides:
            shutil.rmtree(aside.parent, ignore_errors=True)

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        """`rollback` on any exception (Ctrl-C included), `finish` otherwise."""
        if kind is None:
            self.finish()
        else:
            self.rollback()


def delete_path(path: Path) -> None:
    """Delete a link, a file or a folder (a link is removed, never followed)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)


def make_dirs(folder: Path, created: list[Path]) -> None:
    """`mkdir -p`, appending each folder it creates (outermost first) to `created`."""
    missing = []
    for parent in [folder, *folder.parents]:
        if parent.exists() or parent.is_symlink():
            break
        missing.append(parent)
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:  # made meanwhile by someone else: not ours to remove
            continue
        created.append(path)


def remove_empty(folders: list[Path]) -> None:
    """Remove those of `folders` that are empty, innermost (last created) first."""
    for path in reversed(folders):
        with contextlib.suppress(OSError):
            path.rmdir()
