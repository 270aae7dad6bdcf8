"""Where coding agents read skills (agent table, detection, `--agent`), and placing skills there.

Real files always go to `.agents/skills/<name>` (or `~/.agents/skills/<name>`). An agent that
reads that folder itself needs nothing more; every other selected agent gets a relative symlink
(or a copy) in its own folder. The table is `agent_table.py` (`project` and `user` are the
folders we link into, relative to the project root or to HOME; `markers` are what
`detect_agents` looks for). `transaction.py` places the folders and links.
"""

from __future__ import annotations

import difflib
import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from registry.errors import HubskillsError
from registry.install.agent_table import AGENTS, ALIASES, SKILLS_DIR, Agent


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
            close = difflib.get_close_matches(key, [*agent_names(), *ALIASES], n=1)
            meant = f" (did you mean '{ALIASES.get(close[0], close[0])}'?)" if close else ""
            raise HubskillsError(f"unknown agent '{raw.strip()}'{meant}; valid agents: "
                                 + ", ".join(agent_names()),
                                 hint="hubskills agents  # each agent's name, and which are "
                                      "detected here")
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


@dataclass(frozen=True)
class AgentLink:
    """Where a skill is visible to `agents`: the real folder (`files`), a `symlink` or a `copy`."""

    path: Path
    mode: str
    agents: tuple[str, ...]
