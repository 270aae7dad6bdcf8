"""Where coding agents read skills (agent table, detection, `--agent`), and placing skills there.

Real files always go to `.agents/skills/<name>` (or `~/.agents/skills/<name>`). An agent that
reads that folder itself needs nothing more; every other selected agent gets a relative symlink
(or a copy) in its own folder. The table is `agent_table.py` (`project` and `user` are the
folders we link into, relative to the project root or to HOME; `markers` are what
`detect_agents` looks for). `Transaction` places folders and links so that a failure at any
step can be undone exactly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from registry.errors import HubskillsError
from registry.install.agent_table import AGENTS, ALIASES, SKILLS_DIR, Agent

log = logging.getLogger(__name__)


def agent_names() -> list[str]:
    """Every valid `--agent` name, in table order."""
    return list(AGENTS)


def parse_agents(names: str | Iterable[str]) -> list[Agent]:
    """Agents from `claude,cursor` (or a list of names); aliases accepted, order kept.

    Raises:
        HubskillsError: an unknown name; the message lists the valid ones.
    """
    items = names.split(",") if isinstance(names, str) else list(names)
    chosen: list[Agent] = []
    for raw in items:
        key = raw.strip().lower()
        if not key:
            continue
        agent = AGENTS.get(ALIASES.get(key, key))
        if agent is None:
            raise HubskillsError(f"unknown agent '{raw.strip()}'; valid agents: "
                                 + ", ".join(agent_names()),
                                 hint="hubskills pull NS/NAME --agent claude,cursor  (or --all)")
        if agent not in chosen:
            chosen.append(agent)
    return chosen


def detect_agents(root: Path, *, global_: bool = False) -> list[Agent]:
    """Agents whose marker exists under `root` (a project, or HOME for global installs); with
    `global_` also those whose command is on PATH or whose moved config folder exists."""
    return [a for a in AGENTS.values() if why_detected(a, root, global_=global_)]


def why_detected(agent: Agent, root: Path, *, global_: bool = False) -> str | None:
    """What shows `agent` is in use under `root` (`.claude`, `claude on PATH`), or None."""
    for marker in agent.markers:
        if (root / marker).exists() or (root / marker).is_symlink():
            return marker
    if global_ and agent.config_env and os.environ.get(agent.config_env):
        folder = Path(os.environ[agent.config_env]).expanduser()
        if folder.is_dir():
            return f"${agent.config_env}"
    if global_:
        return next((f"{b} on PATH" for b in agent.binaries if shutil.which(b)), None)
    return None


def select_agents(root: Path, names: str | Sequence[str] | None = None, *,
                  all_agents: bool = False, global_: bool = False) -> list[Agent]:
    """The agents a pull serves: `--all`, the `--agent` list, or `.agents` + those detected.

    Raises:
        HubskillsError: an unknown agent name.
    """
    if all_agents:
        return list(AGENTS.values())
    if names:
        chosen = parse_agents(names)
    else:
        chosen = detect_agents(root, global_=global_)
    if AGENTS["agents"] not in chosen:
        chosen.insert(0, AGENTS["agents"])
    return chosen


def readers(root: Path, served: Iterable[str], *, global_: bool) -> list[Agent]:
    """Agents that will see a skill in `.agents/skills` under `root` plus the folders of the
    `served` agents: those reading one of those folders (or a link to one)."""
    seen = {(root / SKILLS_DIR).resolve()}
    seen |= {AGENTS[name].folder(root, global_=global_).resolve() for name in served}
    return [a for a in AGENTS.values() if a.folder(root, global_=global_).resolve() in seen]


def link_folders(agents: Iterable[Agent], root: Path, *, global_: bool) -> dict[Path, list[str]]:
    """Folders that need a link, each with the agents it serves.

    `.agents/skills` itself needs none, nor does a folder that is a link to it (a project may
    link `.claude/skills` to `.agents/skills`).
    """
    skills_dir = (root / SKILLS_DIR).resolve()
    folders: dict[Path, list[str]] = {}
    for agent in agents:
        folder = agent.folder(root, global_=global_)
        if not agent.is_native(global_=global_) and folder.resolve() != skills_dir:
            folders.setdefault(folder, []).append(agent.name)
    return folders


def all_folders(root: Path, *, global_: bool) -> list[Path]:
    """Every folder any known agent reads under `root`, `.agents/skills` first, no repeats.

    Folders that are links to one already listed are left out: it is the same folder.
    """
    seen: dict[Path, Path] = {}
    for agent in AGENTS.values():
        folder = agent.folder(root, global_=global_)
        seen.setdefault(folder.resolve(), folder)
    return list(seen.values())


def check_inside(folder: Path, root: Path) -> None:
    """Refuse `folder` when a link on the way to it from `root` leads outside `root`.

    A link that stays inside (`.claude/skills -> ../.agents/skills`) is fine: writing through
    it writes inside the project (or HOME) all the same.

    Raises:
        HubskillsError: a link leads outside `root`; nothing may be written through it.
    """
    if not folder.is_relative_to(root):  # a folder the user moved by name (CLAUDE_CONFIG_DIR)
        root = folder.parent
    base = root.resolve()
    current = root
    for part in folder.relative_to(root).parts:
        current = current / part
        if current.is_symlink() and not current.resolve().is_relative_to(base):
            where = "your home folder" if base == Path.home().resolve() else "the project"
            raise HubskillsError(
                f"{current} is a link to {os.readlink(current)}, outside {where} ({root}); "
                "hubskills never writes through it",
                hint="replace the link with a real folder (or remove it), then pull again")
        if not current.is_symlink() and not current.exists():
            return  # nothing further down exists yet: it will be created inside


def check_folders(scope_root: Path, agents: Iterable[Agent], *, global_: bool) -> None:
    """Refuse when `.agents/skills` or a selected agent's folder leads outside `scope_root`.

    Raises:
        HubskillsError: see `check_inside`.
    """
    check_inside(scope_root / SKILLS_DIR, scope_root)
    for folder in link_folders(agents, scope_root, global_=global_):
        check_inside(folder, scope_root)


# --- placing a skill folder where agents read it ----------------------------------------------

STAGING_PREFIX = ".hubskills-staging-"
ASIDE_PREFIX = ".hubskills-old-"


@dataclass(frozen=True)
class Placement:
    """Where a skill is visible: the real folder (`files`), a `symlink` or a `copy`."""

    path: Path
    mode: str
    agents: tuple[str, ...]


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

    def link(self, dest: Path, plan: LinkPlan, copy: bool) -> Placement:
        """Place `dest` at `plan.path` as a relative symlink (a copy with `copy` or no links)."""
        if plan.action == "keep":
            return Placement(plan.path, "symlink", plan.agents)
        make_dirs(plan.path.parent, self.created)
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
        return Placement(plan.path, mode, plan.agents)

    def rollback(self) -> None:
        """Undo everything done, newest first: the previous state comes back."""
        for path in reversed(self.created):
            delete_path(path)
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
