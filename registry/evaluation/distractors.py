"""The other skills a trigger eval lists beside the one it measures.

By default a bundled set (`data/distractors.json`: realistic names and descriptions covering
common coding-agent tasks, written for hubskills); with a folder, the skills installed there
(`.agents/skills`, `~/.claude/skills`, ...), as the user's own agent would list them. The skill
under test is never its own distractor.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from registry.errors import HubskillsError, InvalidSkill
from registry.format.folder_names import plain_name
from registry.format.skill import SKILL_FILE, load_skill


@dataclass(frozen=True)
class Listed:
    """A skill as an agent's listing shows it: its name and description."""

    name: str
    description: str


def bundled_distractors() -> list[Listed]:
    """The bundled distractor skills, in file order."""
    text = resources.files("registry.evaluation").joinpath(
        "data", "distractors.json").read_text("utf-8")
    return [Listed(s["name"], s["description"]) for s in json.loads(text)["skills"]]


def folder_distractors(folder: str | os.PathLike[str]) -> list[Listed]:
    """Every skill in `folder` (one subfolder each with a SKILL.md), sorted by name; folders
    whose SKILL.md does not load, has no description or a name that is no folder name
    (`plain_name`: a session lists each skill as a folder of its name), are left out.

    Raises:
        HubskillsError: the folder holds no usable skill.
    """
    root = Path(folder).expanduser()
    found = []
    for entry in sorted(root.iterdir()) if root.is_dir() else []:
        if not (entry / SKILL_FILE).is_file():
            continue
        try:
            skill = load_skill(entry)
        except InvalidSkill:
            continue
        if plain_name(skill.name) and skill.description:  # listed as a folder of its name
            found.append(Listed(skill.name, skill.description))
    if not found:
        raise HubskillsError(f"no skills in {root} to list as distractors (a distractor folder "
                             "holds one folder per skill, each with a SKILL.md)",
                             hint="hubskills list   # shows where your skills are installed")
    return found


def distractors_for(skill_name: str, folder: str | os.PathLike[str] | None = None
                    ) -> list[Listed]:
    """The distractors for `skill_name`: `folder`'s skills, or the bundled set without it."""
    listed = folder_distractors(folder) if folder is not None else bundled_distractors()
    return [d for d in listed if d.name != skill_name]


def distractors_hash(listed: list[Listed]) -> str:
    """`sha256:` over the names and descriptions (a run records which set it listed)."""
    canonical = json.dumps([[d.name, d.description] for d in listed], separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
