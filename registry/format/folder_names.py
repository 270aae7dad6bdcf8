"""A skill's name as a folder name.

hubskills makes folders of a skill's name: a workspace's `.agents/skills/<name>`, a trigger
session's listing, a scratch copy for `info`. The name is the submitter's text, and a red-team
skill named `../../../home/me` had its files copied over the host's `~/.bashrc` when its agent
workspace was seeded, before any sandbox ran; so each of those places takes the name through
`folder_name`, which refuses one that is not a single plain path component.
"""

from __future__ import annotations

from registry.errors import InvalidSkill
from registry.format.skill import Skill


def plain_name(name: str) -> bool:
    """Whether `name` is one plain path component: not empty, `.` or `..`, and without a
    slash, a backslash or a control or invisible character."""
    return name not in ("", ".", "..") and not any(c in "/\\" or not c.isprintable()
                                                   for c in name)


def folder_name(skill: Skill) -> str:
    """`skill`'s name, for a folder named after it.

    Raises:
        InvalidSkill: a name that is not one plain path component (`plain_name`).
    """
    name = skill.name
    if not plain_name(name):
        shown = name[:80].encode("unicode_escape").decode()
        raise InvalidSkill(f"{skill.path}: the skill's name '{shown}' is not a folder name "
                           "(one path component: no slash, backslash, '..' or control "
                           "character)", hint=f"hubskills validate {skill.path}")
    return name
