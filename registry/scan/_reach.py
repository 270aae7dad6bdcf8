"""Rules for what a skill reaches beyond itself: tool grants and links out of its folder."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any

from registry.errors import InvalidSkill
from registry.format.skill import parse_frontmatter, split_frontmatter
from registry.scan._doc import Doc, clip
from registry.scan.findings import Finding

_LINK = re.compile(r"\]\([ \t]*<?([^()\[\]\s>]+)|\b(?:src|href)=[\"']([^\"']+)"
                   r"|^ {0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)", re.M)
_FRONTMATTER = re.compile(r"---[ \t]*\n(.*?)\n---[ \t]*(?:\n|$)", re.S)
_ALLOWED_TOOLS = re.compile(r"^allowed-tools:([^\n]*(?:\n[ \t-][^\n]*)*)", re.M)  # + list lines
_TOOL = re.compile(r"[A-Za-z_][\w.-]*(?:\([^)\n]*\))?|\*")


def _front(doc: Doc) -> str | None:
    """SKILL.md's frontmatter text as the loader finds it (`split_frontmatter`: a BOM, CRLF
    lines; a review note: the scan's own pattern missed both, and the hooks in them), or the
    pattern's where the loader finds none; None elsewhere."""
    if doc.path != "SKILL.md":
        return None
    try:
        return split_frontmatter(doc.text)[0]
    except InvalidSkill:
        front = _FRONTMATTER.match(doc.text)
        return front.group(1) if front else None


def _frontmatter(doc: Doc) -> tuple[dict[str, Any], dict[str, int]] | None:
    """SKILL.md's frontmatter as YAML reads it (a quoted `"hooks":` or a flow mapping
    `{hooks: …}` is the same key to an agent), with each key's line; None elsewhere, or where
    it is not valid (the skill then does not load: the rules below fall back to its lines)."""
    text = _front(doc)
    if text is None:
        return None
    try:
        return parse_frontmatter(text)
    except InvalidSkill:
        return None


def allowed_tools(doc: Doc) -> Iterator[Finding]:
    """`*`, `Bash`, `Bash(*)` grant everything (medium); `Bash(git status:*)` is scoped."""
    text = _front(doc)
    if text is None:
        return
    parsed = _frontmatter(doc)
    if parsed is not None:
        value, line = parsed[0].get("allowed-tools"), parsed[1].get("allowed-tools", 2)
        items = value if isinstance(value, list) else [value] if value is not None else []
        tools = [tool for item in items for tool in _TOOL.findall(str(item))]
    elif (m := _ALLOWED_TOOLS.search(text)) is not None:
        tools, line = _TOOL.findall(m.group(1)), text.count("\n", 0, m.start()) + 2
    else:
        return
    for tool in tools:
        name, _, args = tool.partition("(")
        if "*" in name or tool == "Bash" or args.rstrip(")").strip() in {"*", ":*"}:
            yield Finding("wildcard-allowed-tools", "medium", f"allowed-tools grants {tool!r}, "
                          "which is unrestricted; scope it, e.g. Bash(git status:*)",
                          doc.path, line)


_HOOKS = re.compile(r"^hooks[ \t]*:", re.M)


def hooks(doc: Doc) -> Iterator[Finding]:
    """Frontmatter `hooks` (high): commands the agent runs by itself whenever an event they
    name happens (a session starts, a tool is called), never shown in the skill's body."""
    text = _front(doc)
    if text is None:
        return
    parsed = _frontmatter(doc)
    if parsed is not None:
        line = parsed[1].get("hooks") if "hooks" in parsed[0] else None
    elif (m := _HOOKS.search(text)) is not None:
        line = text.count("\n", 0, m.start()) + 2
    else:
        line = None
    if line is not None:
        yield Finding("hooks", "high", "the frontmatter declares hooks: commands the agent runs "
                      "by itself on the events they name; read each one before installing",
                      doc.path, line)


def links_outside(doc: Doc) -> Iterator[Finding]:
    """Links in prose or HTML to absolute paths, `file:` URLs or `../` out of the folder."""
    for m in _LINK.finditer(doc.text) if doc.is_prose or doc.ext in {".html", ".htm"} else ():
        target = next(g for g in m.groups() if g)
        is_file_url = target.lower().startswith("file:")
        if not is_file_url and (":" in target.split("/")[0] or target[:1] in "#?"):
            continue  # https:, mailto:, anchors
        inside = posixpath.join(posixpath.dirname(doc.path), re.split(r"[#?]", target)[0])
        if is_file_url or target[:1] in "/~" or posixpath.normpath(inside).startswith(".."):
            yield doc.find("path-outside", "medium",
                           f"links to {clip(target)!r}, outside the skill folder", m.start())
