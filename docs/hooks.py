"""MkDocs hook: the Python API page lists every public name of `registry/__init__.py`.

The page holds the marker `<!-- public-api -->`; this hook replaces it with one mkdocstrings
block per name of `registry._EXPORTS`, grouped under the comments that group them there, so a
name added to (or moved within) the public face shows up here without editing the page.
"""

from __future__ import annotations

import re
from pathlib import Path

MARKER = "<!-- public-api -->"
INIT = Path(__file__).resolve().parent.parent / "registry" / "__init__.py"
_ENTRY = re.compile(r'^\s*"(\w+)": "([\w.]+)(?::(\w+))?",')
_COMMENT = re.compile(r"^\s*# ?(.*)$")


def _groups() -> list[tuple[str, str, list[tuple[str, str]]]]:
    """(heading, note, [(public name, dotted target)]) in the order of `_EXPORTS`."""
    source = INIT.read_text(encoding="utf-8")
    block = source.split("_EXPORTS: dict[str, str] = {", 1)[1].split("\n}", 1)[0]
    groups: list[tuple[str, str, list[tuple[str, str]]]] = []
    comment: list[str] = []
    for line in block.splitlines():
        if entry := _ENTRY.match(line):
            if comment or not groups:
                title, _, note = " ".join(comment).partition(": ")
                groups.append((title or "Other", note, []))
                comment = []
            name, module, attribute = entry.groups()
            groups[-1][2].append((name, f"{module}.{attribute}" if attribute else module))
        elif found := _COMMENT.match(line):
            comment.append(found[1].strip())
    return groups


def public_api_markdown() -> str:
    """The generated part of the API page: a section per group, a block per public name."""
    parts = []
    for title, note, names in _groups():
        parts.append(f"## {title[:1].upper()}{title[1:]}\n")
        if note:
            parts.append(f"{note[:1].upper()}{note[1:]}.\n")
        for name, target in names:
            parts.append(f'::: {target}\n    options:\n      heading: "registry.{name}"\n'
                         f'      toc_label: "{name}"\n')
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, **_: object) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, public_api_markdown())
