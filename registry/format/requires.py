"""The skills a skill needs: `metadata.requires` read as references `ns/name[@constraint]`.

The shape (docs/pulling.md#dependencies says why): a string in `metadata`, as the
specification's `metadata` is a map of strings, holding references separated by spaces or
commas, `requires: "acme/csv-base@^1.2 acme/units"`; a YAML list of the same references is
read too (`validate` then reports the list as the specification does, a pull only warns).

A reference names a registry skill, `namespace/name`, and optionally which versions do:
`@1.2.0` (exactly), `@^1.2` (1.2 up to, not including, 2.0; `^0.3` stops before 0.4),
`@~1.2` (1.2.x), `@>=1.2`, `@>1.2`, `@<2`, `@<=2.1`, or `@*` (any, as no `@`). A
pre-release is taken only when a constraint names it exactly. Pure: no store, no files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from registry._docs import doc
from registry.errors import HubskillsError
from registry.format.skill import Problem, Skill

MAX_REQUIRES = 64  # references one skill may list
_REF = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]{0,95})/([A-Za-z0-9][A-Za-z0-9._-]{0,95})"
                  r"(?:@(.*))?$")
_OP = re.compile(r"^(\^|~|>=|<=|>|<|=)?v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?$")
_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$")
HINT = ("write metadata.requires as \"ns/name ns/other@^1.2\": registry ids, each with an "
        f"optional @VERSION, @^X.Y, @~X.Y, @>=X.Y or @<X.Y ({doc('pulling', 'dependencies')})")


class BadRequirement(HubskillsError):
    """A `requires` entry that is not a reference; `entry` is the text."""

    def __init__(self, entry: str, why: str) -> None:
        super().__init__(f"'{entry[:120]}' in metadata.requires is not a skill reference: {why}",
                         hint=HINT)
        self.entry = entry


@dataclass(frozen=True)
class Constraint:
    """Which versions satisfy: `op` one of "", "^", "~", ">=", ">", "<=", "<", "=" over
    `version` (major, minor, patch), with how many parts were written (`parts`)."""

    text: str
    op: str = ""
    version: tuple[int, int, int] = (0, 0, 0)
    parts: int = 0
    pre: str | None = None

    @property
    def any(self) -> bool:
        """Whether every version (and an unversioned skill) satisfies it."""
        return self.parts == 0

    def allows(self, version: str | None) -> bool:
        """Whether `version` (a semantic version; None: the skill has none) satisfies it."""
        if self.any:
            return True
        match = _SEMVER.match(version or "")
        if match is None:
            return False
        have = (int(match[1]), int(match[2]), int(match[3]))
        if match[4] is not None:  # a pre-release only when named exactly
            return self.op in ("", "=") and self.parts == 3 and have == self.version \
                and match[4] == self.pre
        if self.pre is not None and self.op in ("", "="):
            return False
        return _compare(self.op, have, self.version, self.parts)


def _compare(op: str, have: tuple[int, int, int], want: tuple[int, int, int],
             parts: int) -> bool:
    major, minor, patch = want
    if op in ("", "="):
        return have[:parts] == want[:parts]
    if op == "^":  # the left-most non-zero part written stays
        if major > 0 or parts == 1:
            upper = (major + 1, 0, 0)
        elif minor > 0 or parts == 2:
            upper = (0, minor + 1, 0)
        else:
            upper = (0, 0, patch + 1)
        return want <= have < upper
    if op == "~":
        upper = (major + 1, 0, 0) if parts == 1 else (major, minor + 1, 0)
        return want <= have < upper
    return {">=": have >= want, ">": have > want, "<=": have <= want, "<": have < want}[op]


@dataclass(frozen=True)
class Requirement:
    """One reference: the skill `repo` (`ns/name`) and the versions that satisfy."""

    repo: str
    constraint: Constraint

    @property
    def namespace(self) -> str:
        """The publisher's namespace, `ns` of `ns/name`."""
        return self.repo.split("/")[0]

    @property
    def name(self) -> str:
        """The skill's name, `name` of `ns/name`."""
        return self.repo.split("/")[1]

    def __str__(self) -> str:
        return self.repo + ("" if self.constraint.any else f"@{self.constraint.text}")


def parse_requirement(entry: str) -> Requirement:
    """`ns/name[@constraint]` as a `Requirement`.

    Raises:
        BadRequirement: not a registry id, or a constraint that is no version range.
    """
    text = entry.strip()
    match = _REF.match(text)
    if match is None or ".." in text.partition("@")[0]:
        raise BadRequirement(entry, "a dependency is a registry skill 'namespace/name'")
    namespace, name, constraint = match[1], match[2], (match[3] or "").strip()
    if constraint in ("", "*", "latest"):
        return Requirement(f"{namespace}/{name}", Constraint(constraint or "*"))
    found = _OP.match(constraint)
    if found is None:
        raise BadRequirement(entry, f"'{constraint[:40]}' is no version or range")
    op, *numbers, pre = found.groups()
    written = [int(n) for n in numbers if n is not None]
    if pre is not None and len(written) < 3:
        raise BadRequirement(entry, "a pre-release needs a full version (1.2.0-rc.1)")
    padded = written + [0] * (3 - len(written))  # the pattern has at most three numbers
    version = (padded[0], padded[1], padded[2])
    return Requirement(f"{namespace}/{name}",
                       Constraint(constraint, op or "", version, len(written), pre))


def split_requires(value: Any) -> list[str]:
    """The entries of a `metadata.requires` value: a string split on spaces and commas, or a
    list of strings.

    Raises:
        BadRequirement: another type, an entry that is not a string, or too many entries.
    """
    if value is None:
        return []
    if isinstance(value, str):
        entries = [e for e in re.split(r"[\s,]+", value) if e]
    elif isinstance(value, list) and all(isinstance(e, str) for e in value):
        entries = [e.strip() for e in value if e.strip()]
    else:
        raise BadRequirement(str(value), "metadata.requires is a string of references "
                                         "(or a list of them)")
    if len(entries) > MAX_REQUIRES:
        raise BadRequirement(" ".join(entries[:3]) + " …",
                             f"{len(entries)} entries; a skill may list at most {MAX_REQUIRES}")
    return entries


def is_prose(value: Any) -> bool:
    """Whether a `metadata.requires` value names no skill reference at all: a sentence some
    publishers write there ("GPU node Blackwell, Hopper"), not a dependency list."""
    try:
        entries = split_requires(value)
    except BadRequirement:
        return False
    return bool(entries) and not any(_REF.match(e) for e in entries)


def requirements(frontmatter: dict[str, Any]) -> list[Requirement]:
    """Every reference in a skill's `metadata.requires`, in order, each repo once (none when
    the value is prose: `is_prose`).

    Raises:
        BadRequirement: an entry that is not a reference in a list that has some (the error
            names it), or two entries for one skill.
    """
    metadata = frontmatter.get("metadata")
    if not isinstance(metadata, dict) or is_prose(metadata.get("requires")):
        return []
    found: dict[str, Requirement] = {}
    for entry in split_requires(metadata.get("requires")):
        requirement = parse_requirement(entry)
        if requirement.repo in found:
            raise BadRequirement(entry, f"{requirement.repo} is listed twice")
        found[requirement.repo] = requirement
    return list(found.values())


def check_requires(skill: Skill) -> list[Problem]:
    """`validate`'s finding for `metadata.requires` entries that are not references: prose
    (`requires-prose`, which a pull only warns about: it declares no dependency) or a list
    with a bad entry (`requires-invalid`, which refuses a pull too)."""
    metadata = skill.frontmatter.get("metadata")
    value = metadata.get("requires") if isinstance(metadata, dict) else None
    if is_prose(value):
        return [Problem("requires-prose", "error",
                        f"metadata.requires names no skill reference ('{str(value)[:80]}'): "
                        "it declares dependencies as ns/name[@range]",
                        line=skill.key_lines.get("metadata.requires")
                        or skill.key_lines.get("metadata"))]
    try:
        requirements(skill.frontmatter)
    except BadRequirement as err:
        return [Problem("requires-invalid", "error", err.message,
                        line=skill.key_lines.get("metadata.requires")
                        or skill.key_lines.get("metadata"))]
    return []
