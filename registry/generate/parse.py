"""Turning teacher replies into skill folders and suites, robustly.

A reply may wrap blocks in prose, nest three-backtick code inside a three-backtick markdown
block, write invalid YAML (`description: Use when: ...`) or stray keys. What is trivially
fixable is fixed here (name slug, quoting, keys moved under `metadata`); anything else raises
`TeacherFormatError`, whose message goes back to the teacher in one repair round.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from registry._io import atomic_write_text
from registry.format.markdown import fenced_blocks
from registry.format.skill import (
    AGENT_KEYS,
    SKILL_FILE,
    SPEC_KEYS,
    SkillFormatError,
    dump_frontmatter,
    parse_frontmatter,
    split_frontmatter,
)
from registry.format.validate import has_errors, validate_skill
from registry.generate.files import copy_without_links
from registry.generate.teacher import TeacherFormatError
from registry.secrets import scrub

RESOURCE_DIRS = ("references", "scripts", "assets")
MAX_DESCRIPTION = 1024
_PATH_LABEL = re.compile(
    r"^[#>*_`\s-]*(?:path|file(?:name)?)\s*[:=]\s*[*_`\"']*([\w./-]+?)[*_`\"']*\s*$", re.I)
_INFO_PATH = re.compile(r"(?:path|file|title)\s*[:=]\s*[\"']?([\w./-]+)", re.I)
_TOP_KEY = re.compile(r"^([A-Za-z][\w-]*)\s*:\s*(.*)$")
_NESTED_KEY = re.compile(r"^\s+([A-Za-z][\w.-]*)\s*:\s*(.*)$")


@dataclass
class Block:
    """A fenced block: its info string, body, and the file path it is labelled with."""

    info: str
    body: str
    path: str | None = None


def labelled_blocks(text: str) -> list[Block]:
    """Fenced blocks of a reply, read leniently (three-backtick code inside a three-backtick
    markdown block survives), each with the path its label line or info string names."""
    blocks = []
    for fence in fenced_blocks(text, lenient=True):
        label = _PATH_LABEL.match(fence.before)
        info_path = _INFO_PATH.search(fence.info)
        path = label.group(1) if label else (info_path.group(1) if info_path else None)
        blocks.append(Block(fence.info, fence.body, path))
    return blocks


@dataclass
class SkillDraft:
    """A parsed reply: SKILL.md's frontmatter and body, and extra files by relative path."""

    frontmatter: dict[str, Any]
    body: str
    files: dict[str, str] = field(default_factory=dict)


def parse_skill_reply(text: str) -> SkillDraft:
    """Find SKILL.md (a labelled or frontmatter-led block, else the bare reply) and files.

    Raises:
        TeacherFormatError: no SKILL.md with YAML frontmatter in the reply.
    """
    blocks = labelled_blocks(text)
    skill_md = next((b.body for b in blocks if (b.path or "").endswith(SKILL_FILE)), None)
    if skill_md is None:
        led = [b for b in blocks if b.body.lstrip().startswith("---")]
        skill_md = next((b.body for b in led if not b.path), led[0].body if led else None)
    if skill_md is None:
        start = re.search(r"^---\s*\n(?=[\s\S]*?^name\s*:)", text, re.M)
        skill_md = text[start.start():] if start else None
    if skill_md is None:
        raise TeacherFormatError("no SKILL.md found: expected a ````markdown block that starts "
                                 "with '---' YAML frontmatter")
    files = {}
    for block in blocks:
        rel = safe_resource_path(block.path) if block.path else None
        if rel:
            files[rel] = block.body
    frontmatter, body = _parse_skill_md(skill_md.lstrip())
    return SkillDraft(frontmatter, body, files)


def safe_resource_path(path: str) -> str | None:
    """`references/x.md`-style paths inside a resource folder; anything else is None."""
    path = path.strip()
    pure = PurePosixPath(path[2:] if path.startswith("./") else path)
    if (pure.is_absolute() or ".." in pure.parts or "\\" in path or len(pure.parts) < 2
            or len(pure.parts) > 3 or pure.parts[0] not in RESOURCE_DIRS):
        return None
    return str(pure)


def _parse_skill_md(text: str) -> tuple[dict[str, Any], str]:
    try:
        yaml_text, body, _ = split_frontmatter(text)
    except SkillFormatError as exc:
        raise TeacherFormatError(f"SKILL.md: {exc.detail}") from None
    try:
        data, _ = parse_frontmatter(yaml_text)
    except SkillFormatError as exc:
        data = _lenient_frontmatter(yaml_text)
        if not data:
            raise TeacherFormatError(f"SKILL.md frontmatter: {exc.detail}") from None
    return data, body


def _lenient_frontmatter(yaml_text: str) -> dict[str, Any]:
    """`key: value` lines read literally (one level of nesting), for YAML that fails only
    because a value needed quotes."""
    data: dict[str, Any] = {}
    parent: str | None = None
    for line in yaml_text.splitlines():
        nested = _NESTED_KEY.match(line)
        if nested and parent is not None:
            data[parent][nested.group(1)] = _unquote(nested.group(2))
            continue
        top = _TOP_KEY.match(line)
        if not top:
            continue
        key, value = top.group(1), _unquote(top.group(2))
        parent = key if not value else None
        data[key] = value if value else {}
    return {k: v for k, v in data.items() if v != {}}


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def slugify(text: str, limit: int = 64) -> str:
    """A valid skill name from any text (`""` when nothing usable is left)."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(slug) > limit:
        slug = slug[:limit].rsplit("-", 1)[0] if "-" in slug[:limit] else slug[:limit]
    return slug.strip("-")


#: Words that start a trailing phrase: a name ends before them ("write-commit-messages", not
#: "write-commit-messages-in-the-conventional").
_PHRASE_BREAKS = frozenset({"a", "an", "and", "as", "at", "by", "for", "from", "in", "into",
                            "of", "on", "or", "the", "to", "using", "via", "when", "with"})


def name_from_task(task: str) -> str:
    """A name from the task's first words, ending at a word boundary before a trailing phrase
    (and never on a connecting word); "to" or "into" before a capitalised word goes on, as the
    target of a conversion ("convert-csv-to-parquet", not "convert-csv")."""
    words: list[str] = []
    found = re.findall(r"[A-Za-z0-9]+", task)[:6]
    for i, word in enumerate(found):
        target = word.lower() in ("to", "into") and i + 1 < len(found) \
            and found[i + 1][:1].isupper()
        if word.lower() in _PHRASE_BREAKS and len(words) >= 2 and not target:
            break
        words.append(word)
    while words and words[-1].lower() in _PHRASE_BREAKS:
        words.pop()
    return slugify("-".join(words), 48) or "generated-skill"


#: Frontmatter keys a teacher's reply never sets: they let a skill run commands unasked.
AUTHORS_ONLY = frozenset({"hooks", "allowed-tools"})


def normalize_frontmatter(data: dict[str, Any], *, task: str, name: str | None = None,
                          base: dict[str, Any] | None = None) -> dict[str, Any]:
    """A frontmatter that validates: base keys kept, the teacher's values on top, the name a
    slug, unknown keys moved under `metadata` as strings, metadata values quoted strings.
    What the skill may run without asking (`hooks`, `allowed-tools`) is never the teacher's:
    its values are dropped, the base skill's kept (a red-team teacher added hooks that read
    the user's keys on every session start)."""
    merged: dict[str, Any] = dict(base or {})
    for key, value in data.items():
        if key in AUTHORS_ONLY:
            continue
        if key == "metadata" and isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[str(key)] = value
    description = str(merged.pop("description", None) or "").strip()
    if not description:
        description = f"{task.strip().rstrip('.')}. Use when the user asks to do this."
    proposed = slugify(str(merged.pop("name", None) or ""))
    merged = {"name": name or proposed or name_from_task(task),
              "description": _clip_sentence(description, MAX_DESCRIPTION), **merged}
    metadata = merged.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
    for key in [k for k in merged if k not in SPEC_KEYS and k not in AGENT_KEYS]:
        value = merged.pop(key)
        metadata.setdefault(key, value)
    merged["metadata"] = {str(k): _as_string(v) for k, v in metadata.items()}
    for key in ("license", "compatibility", "allowed-tools"):
        if key in merged and not isinstance(merged[key], str):
            merged[key] = _as_string(merged[key])
    return merged


def _as_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return " ".join(str(v) for v in value)
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


def _clip_sentence(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return cut[: cut.rfind(". ") + 1] if ". " in cut else cut[: limit - 1] + "…"


def write_skill(draft: SkillDraft, folder: Path, *, base_dir: Path | None = None) -> Path:
    """Write a draft into `folder` (replaced): the base folder's files first, then the
    draft's, then SKILL.md. The teacher's text is scrubbed of secrets. Returns the folder."""
    if folder.exists():
        shutil.rmtree(folder)
    if base_dir is not None:
        copy_without_links(base_dir, folder, skip=(".git", ".hubskills.json"))
    folder.mkdir(parents=True, exist_ok=True)
    root = folder.resolve()
    for rel, content in draft.files.items():
        if not (folder / rel).parent.resolve().is_relative_to(root):  # no link is left to
            raise TeacherFormatError(f"{rel} would be written outside the skill")  # follow
        atomic_write_text(folder / rel, scrub(content))
    body = draft.body.lstrip("\n")
    atomic_write_text(folder / SKILL_FILE,
                      scrub(f"---\n{dump_frontmatter(draft.frontmatter)}---\n\n{body}"))
    return folder


def validated(folder: Path) -> Path:
    """The folder when it validates without errors.

    Raises:
        TeacherFormatError: listing the errors (shown to the teacher on repair).
    """
    problems = validate_skill(folder)
    if has_errors(problems):
        problems = [p for p in problems if p.severity == "error"]
        listed = "; ".join(f"{p.location()}: {p.code}: {p.message}" for p in problems[:8])
        raise TeacherFormatError(f"the skill does not validate: {listed}")
    return folder


def fallback_draft(text: str, task: str, teacher: str) -> SkillDraft:
    """A valid skill built from whatever text a weak teacher wrote: name and description from
    the task, the cleaned text as the body, and a note that says so."""
    cleaned = clean_text(text)
    title = task.strip().rstrip(".")
    note = (f"> Drafted offline by `{teacher}`, which did not follow the skill format: this "
            "body is its raw text, cleaned. Review and rewrite it before relying on it.")
    body = f"\n# {title[:80]}\n\n{note}\n\n## Task\n\n{task.strip()}\n"
    if cleaned:
        body += f"\n## Notes from the teacher\n\n{cleaned}\n"
    frontmatter = normalize_frontmatter({"metadata": {"version": "0.1.0"}}, task=task)
    return SkillDraft(frontmatter, body)


def clean_text(text: str, limit: int = 4000) -> str:
    """Strip frontmatter-like and repeated lines and runaway repetition from model text."""
    text = re.sub(r"(\b[^\s]{1,40}[\s,;]+)\1{3,}", r"\1", text)  # "Linda, Linda, Linda, ..."
    lines, seen = [], set()
    for line in text.replace("\r", "").splitlines():
        key = line.strip()
        if key in seen and key and not key.startswith(("`", "~")):
            continue
        seen.add(key)
        lines.append(line.rstrip())
    cleaned = "\n".join(lines).strip()
    if cleaned.count("```") % 2:
        cleaned += "\n```"
    return cleaned[:limit]
