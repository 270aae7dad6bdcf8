"""The files a model wrote in its answer: named fenced code blocks (`extract_files`).

Code checks and workspace checks grade them (chat mode writes them into a temp workspace), the
agent loop and traces read them too.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from registry.format.markdown import fenced_blocks

_MAX_NAME = 200
_MAX_LINE = 300  # longest info string or label line searched for a file name
_NAME = r"[\w.+@~/\\-]*[./\\][\w.+@~/\\-]*"  # a path-like token: has a dot or a slash
_INFO_ATTR = re.compile(r"\b(?:title|file(?:name)?|name|path)\s*=\s*[\"']?([^\"'\s}]+)")
_INFO_NAME = re.compile(rf"^(?:[\w+#-]+[\s:]+)?({_NAME})(?:\s|$)")
_LABEL = re.compile(
    rf"^(?:#+\s*)?[*_`]*(?:(?:file(?:name)?|path)\s*:\s*)?[*_`]*({_NAME})[*_`]*:?[*_`]*$", re.I
)
_COMMENT = re.compile(
    rf"^\s*(?://|#|--|/\*|<!--|;)\s*(?:(?:file(?:name)?|path)\s*:\s*)?({_NAME})\s*(?:\*/|-->)?\s*$",
    re.I,
)


def _block_name(info: str, body: str, before: str) -> str | None:
    """The file name a block declares, by the first convention that names one."""
    first = body.split("\n", 1)[0]
    for pattern, text in ((_INFO_ATTR, info), (_INFO_NAME, info), (_LABEL, before),
                          (_COMMENT, first)):
        found = pattern.search(text) if len(text) <= _MAX_LINE else None  # bounds backtracking
        if found:
            return found.group(1)
    return None


def _safe_name(name: str) -> str | None:
    """The normalised relative path, or None for anything that could escape a folder."""
    path = PurePosixPath(name)
    if (
        not name or len(name) > _MAX_NAME or "\\" in name or ":" in name or path.is_absolute()
        or ".." in path.parts or path.name.endswith(".") or any(ord(c) < 32 for c in name)
        or not re.search(r"[^\W_]", name)
    ):
        return None
    return str(path)


def extract_files(output: str) -> dict[str, str]:
    """Files the model wrote as named fenced code blocks; later blocks with a name win.

    A block is named by its info string (```` ```python title="k.cu" ````, ```` ```cuda k.cu
    ````, ```` ```k.cu ````), by the line just before it (``**k.cu**``, ``File: k.cu``,
    ``# k.cu``, ```` `k.cu`: ````) or by a comment on its first line (``// k.cu``,
    ``# file: build.toml``). Absolute names, ``..``, backslashes and names over 200 characters
    are ignored.
    """
    files: dict[str, str] = {}
    for block in fenced_blocks(output):
        name = _block_name(block.info, block.body, block.before)
        safe = _safe_name(name) if name else None
        if safe:
            files[safe] = block.body
    return files
