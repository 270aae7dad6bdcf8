"""Rules for what a skill reaches beyond itself: tool grants and links out of its folder."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from registry.scan._doc import Doc, clip
from registry.scan.findings import Finding

_LINK = re.compile(r"\]\([ \t]*<?([^()\[\]\s>]+)|\b(?:src|href)=[\"']([^\"']+)"
                   r"|^ {0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)", re.M)
_FRONTMATTER = re.compile(r"---[ \t]*\n(.*?)\n---[ \t]*(?:\n|$)", re.S)
_ALLOWED_TOOLS = re.compile(r"^allowed-tools:([^\n]*(?:\n[ \t-][^\n]*)*)", re.M)  # + list lines
_TOOL = re.compile(r"[A-Za-z_][\w.-]*(?:\([^)\n]*\))?|\*")


def allowed_tools(doc: Doc) -> Iterator[Finding]:
    """`*`, `Bash`, `Bash(*)` grant everything (medium); `Bash(git status:*)` is scoped."""
    front = _FRONTMATTER.match(doc.text) if doc.path == "SKILL.md" else None
    m = _ALLOWED_TOOLS.search(front.group(1)) if front else None
    if front is None or m is None:
        return
    for tool in _TOOL.findall(m.group(1)):
        name, _, args = tool.partition("(")
        if "*" in name or tool == "Bash" or args.rstrip(")").strip() in {"*", ":*"}:
            yield Finding("wildcard-allowed-tools", "medium", f"allowed-tools grants {tool!r}, "
                          "which is unrestricted; scope it, e.g. Bash(git status:*)",
                          doc.path, front.group(1).count("\n", 0, m.start()) + 2)


_HOOKS = re.compile(r"^hooks[ \t]*:", re.M)


def hooks(doc: Doc) -> Iterator[Finding]:
    """Frontmatter `hooks` (high): commands the agent runs by itself whenever an event they
    name happens (a session starts, a tool is called), never shown in the skill's body."""
    front = _FRONTMATTER.match(doc.text) if doc.path == "SKILL.md" else None
    m = _HOOKS.search(front.group(1)) if front else None
    if front is not None and m is not None:
        yield Finding("hooks", "high", "the frontmatter declares hooks: commands the agent runs "
                      "by itself on the events they name; read each one before installing",
                      doc.path, front.group(1).count("\n", 0, m.start()) + 2)


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
