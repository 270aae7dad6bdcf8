"""Validation of a skill folder against the Agent Skills rules, as located findings."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote

from registry.errors import InvalidSkill
from registry.format.requires import check_requires
from registry.format.skill import (
    _LINK_RE,
    AGENT_KEYS,
    NAME_RE,
    SKILL_FILE,
    SPEC_KEYS,
    Problem,
    Skill,
    SkillFormatError,
    estimate_tokens,
    load_skill,
)
from registry.format.triggers import check_triggers

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
MAX_BODY_LINES = 500
MAX_BODY_TOKENS = 5000
RESERVED_WORDS = ("anthropic", "claude")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def validate_skill(path: str | os.PathLike[str] | Skill) -> list[Problem]:
    """Every finding for a skill folder (or a skill loaded already); an empty list means it
    follows the specification."""
    try:
        skill = path if isinstance(path, Skill) else load_skill(path)
    except InvalidSkill as exc:
        return [_problem_from_error(exc)]
    problems: list[Problem] = []
    for rule in _RULES:
        problems.extend(rule(skill))
    return problems


#: The spec's errors a pull shows as warnings instead (`validate` and `publish` keep the letter):
#: agents load such a skill all the same. Claude Code, Codex and the others read `name` and
#: `description` and ignore other keys; no agent interprets `metadata` or `compatibility` (it is
#: for people and tools choosing an environment); a link out
#: of the folder dangles after install (or points at the user's own files, which the scanner
#: judges, not the validator). Everything else (a name or description agents cannot use,
#: unparseable frontmatter) still refuses a pull.
TOLERATED_AT_PULL: dict[str, str] = {
    "unknown-key": "agents ignore keys the specification does not list",
    "metadata-not-string": "agents do not read metadata",
    "metadata-not-mapping": "agents do not read metadata",
    "reference-outside": "the link will not resolve once installed",
    "compatibility-invalid": "agents do not read compatibility",
    "requires-prose": "read as a note, not as dependencies",
}


def at_pull(problems: list[Problem]) -> list[Problem]:
    """`problems` as a pull judges them: the errors in `TOLERATED_AT_PULL` become warnings
    (their message says why an agent loads the skill anyway)."""
    return [Problem(p.code, "warning", f"{p.message} ({TOLERATED_AT_PULL[p.code]}; publish "
                    "refuses it)", p.file, p.line)
            if p.severity == "error" and p.code in TOLERATED_AT_PULL else p for p in problems]


def has_errors(problems: list[Problem]) -> bool:
    """Whether any finding is an error (warnings do not block publishing)."""
    return any(p.severity == "error" for p in problems)


def _problem_from_error(exc: InvalidSkill) -> Problem:
    if isinstance(exc, SkillFormatError):
        return Problem(exc.code, "error", exc.detail, exc.file, exc.line)
    return Problem("load-error", "error", exc.message, SKILL_FILE, None)


def _at(skill: Skill, key: str) -> int | None:
    return skill.key_lines.get(key)


def _check_keys(skill: Skill) -> list[Problem]:
    problems = []
    for key in skill.frontmatter:
        key = str(key)
        if key in SPEC_KEYS:
            continue
        if key in AGENT_KEYS:
            problems.append(Problem(
                "agent-specific-key", "warning",
                f"'{key}' is an agent-specific key, not part of the specification "
                "(kept, but other agents ignore it)", line=_at(skill, key)))
        else:
            where = "metadata.version" if key == "version" else "metadata"
            problems.append(Problem(
                "unknown-key", "error",
                f"unknown frontmatter key '{key}' (allowed: {', '.join(SPEC_KEYS)}; "
                f"put it under {where})", line=_at(skill, key)))
    return problems


def _check_name(skill: Skill) -> list[Problem]:
    name = skill.frontmatter.get("name")
    line = _at(skill, "name")
    if name is None or name == "":
        return [Problem("name-missing", "error", "the 'name' key is required", line=line or 2)]
    if not isinstance(name, str):
        return [Problem("name-not-string", "error", "'name' must be a string", line=line)]
    problems = []
    if len(name) > MAX_NAME:
        problems.append(Problem(
            "name-too-long", "error", f"name is {len(name)} characters (max {MAX_NAME})",
            line=line))
    if not NAME_RE.match(name):
        problems.append(Problem(
            "name-invalid", "error",
            f"name '{name[:80]}' must be lowercase letters, digits and single hyphens "
            "(e.g. pdf-tools)", line=line))
    if name != skill.path.resolve().name:
        problems.append(Problem(
            "name-mismatch", "error",
            f"name '{name[:80]}' does not match the folder name '{skill.path.resolve().name}'",
            line=line))
    if any(word in name for word in RESERVED_WORDS):
        problems.append(Problem(
            "name-reserved", "warning",
            "names containing 'anthropic' or 'claude' are rejected by Anthropic's platform",
            line=line))
    return problems


def _check_description(skill: Skill) -> list[Problem]:
    value = skill.frontmatter.get("description")
    line = _at(skill, "description")
    if value is None or (isinstance(value, str) and not value.strip()):
        return [Problem(
            "description-missing", "error",
            "the 'description' key is required: say what the skill does and when to use it",
            line=line or 2)]
    if not isinstance(value, str):
        return [Problem("description-not-string", "error", "'description' must be a string",
                        line=line)]
    problems = []
    if len(value) > MAX_DESCRIPTION:
        problems.append(Problem(
            "description-too-long", "error",
            f"description is {len(value)} characters (max {MAX_DESCRIPTION})", line=line))
    if "<" in value or ">" in value:
        problems.append(Problem(
            "description-angle-brackets", "warning",
            "description contains '<' or '>', which some validators reject", line=line))
    return problems


def _check_optional_fields(skill: Skill) -> list[Problem]:
    fm = skill.frontmatter
    problems = []
    if "license" in fm and not isinstance(fm["license"], str):
        problems.append(Problem("license-not-string", "error", "'license' must be a string",
                                line=_at(skill, "license")))
    if "compatibility" in fm:
        value = fm["compatibility"]
        if not isinstance(value, str) or not 1 <= len(value) <= MAX_COMPATIBILITY:
            problems.append(Problem(
                "compatibility-invalid", "error",
                f"'compatibility' must be a string of 1-{MAX_COMPATIBILITY} characters",
                line=_at(skill, "compatibility")))
    if "allowed-tools" in fm and not isinstance(fm["allowed-tools"], str):
        problems.append(Problem(
            "allowed-tools-not-string", "warning",
            "'allowed-tools' should be a space-separated string (e.g. \"Read Grep\")",
            line=_at(skill, "allowed-tools")))
    problems.extend(_check_metadata(skill))
    return problems


def _check_metadata(skill: Skill) -> list[Problem]:
    if "metadata" not in skill.frontmatter:
        return []
    metadata: Any = skill.frontmatter["metadata"]
    line = _at(skill, "metadata")
    if not isinstance(metadata, dict):
        return [Problem("metadata-not-mapping", "error",
                        "'metadata' must be a mapping of string keys to string values",
                        line=line)]
    return [
        Problem("metadata-not-string", "error", _metadata_message(key, value),
                line=_at(skill, f"metadata.{key}") or line)
        for key, value in metadata.items()
        if not isinstance(key, str) or not isinstance(value, str)
    ]


def _metadata_message(key: Any, value: Any) -> str:
    if isinstance(value, dict | list):
        return f"metadata.{key} must be a string: metadata is a flat map of strings to strings"
    return f"metadata.{key} must be a string: quote it (e.g. {key}: \"{value}\")"


def _check_body(skill: Skill) -> list[Problem]:
    body = skill.body
    problems = []
    if not body.strip():
        problems.append(Problem("body-empty", "warning",
                                "the body is empty: write the instructions the agent follows",
                                line=skill.body_line))
    lines = len(body.splitlines())
    if lines > MAX_BODY_LINES:
        problems.append(Problem(
            "body-too-long", "warning",
            f"body is {lines} lines (recommended < {MAX_BODY_LINES}); move detail to references/",
            line=skill.body_line))
    tokens = estimate_tokens(body)
    if tokens > MAX_BODY_TOKENS:
        problems.append(Problem(
            "body-too-many-tokens", "warning",
            f"body is about {tokens} tokens, an estimate (recommended < {MAX_BODY_TOKENS})",
            line=skill.body_line))
    problems.extend(_check_links(skill))
    return problems


def _check_links(skill: Skill) -> list[Problem]:
    problems = []
    root = skill.path.resolve()
    for offset, raw in _links(skill.body):
        target, line = unquote(raw), skill.body_line + offset
        if "://" in raw or raw.startswith(("mailto:", "data:")):
            continue
        try:
            resolved = (root / target).resolve()
            inside, exists = resolved.is_relative_to(root), resolved.exists()
        except (OSError, ValueError):
            inside, exists = False, False
        if target.startswith(("/", "~")) or not inside:
            problems.append(Problem("reference-outside", "error",
                                    f"link '{raw}' points outside the skill folder", line=line))
        elif not exists:
            problems.append(Problem("reference-missing", "warning",
                                    f"link '{raw}' points to a file that does not exist",
                                    line=line))
        elif len(resolved.relative_to(root).parts) > 2:
            problems.append(Problem("reference-deep", "warning",
                                    f"link '{raw}' is more than one level deep", line=line))
    return problems


def _links(body: str) -> Iterator[tuple[int, str]]:
    """(line offset, target) of each markdown link outside code blocks and code spans."""
    fence = ""
    for offset, text in enumerate(body.splitlines()):
        opening = _FENCE.match(text)
        if fence:
            if opening and opening[1][0] == fence[0] and len(opening[1]) >= len(fence):
                fence = ""
            continue
        if opening:
            fence = opening[1]
            continue
        for target in _LINK_RE.findall(_CODE_SPAN.sub("", text)):
            yield offset, target


_RULES: tuple[Callable[[Skill], list[Problem]], ...] = (
    _check_keys, _check_name, _check_description, _check_optional_fields, _check_body,
    check_requires,  # metadata.requires: references ns/name[@range] (docs/pulling.md)
    lambda skill: check_triggers(skill.path),  # evals/triggers.json, when the skill has one
)
