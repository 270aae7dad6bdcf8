"""Fenced code blocks in markdown written by a model: the one parser.

Used wherever model output is read as markdown: the files a model wrote (`evaluation.checks`),
SKILL.md and suites in a teacher's reply (`generate.parse`, `generate.suite`) and code in agent
traces (`generate.traces`). Blocks are found by markdown-it-py's CommonMark block parser, so a
block is what a markdown viewer shows: backtick or tilde fences, longer fences holding shorter
ones, fences inside list items and block quotes (their bodies de-indented), an unclosed fence
running to the end, and a fence indented four spaces at the top level read as plain code.

`lenient=True` adds one repair for teacher replies, which often wrap a skill in a three-backtick
```` ```markdown ```` block that itself holds three-backtick code: when a block holds an opening
fence with an info string (```` ```bash ````), that inner fence opens a nested block, and the
outer block ends at the bare fence that balances it rather than at the first one.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_FENCE_LINE = re.compile(r"^ *(?:(`{3,})([^`]*)|(~{3,})(.*))$")


@dataclass(frozen=True)
class Fence:
    """One fenced block.

    Attributes:
        info: the info string after the opening fence, stripped (``python title="k.py"``).
        body: the content, de-indented as CommonMark does; every line ends in a newline.
        before: the last non-blank line before the block (since the previous block), stripped.
        start: the 0-based line of the opening fence.
        end: the 0-based line just after the block (its closing fence included).
    """

    info: str
    body: str
    before: str
    start: int
    end: int


def fenced_blocks(text: str, *, lenient: bool = False) -> list[Fence]:
    """Every fenced block of `text`, in order (see the module docstring for `lenient`)."""
    tokens = _parser().parse(text)
    lines = _lines(text)
    blocks: list[Fence] = []
    for token in tokens:
        if token.type != "fence" or token.map is None:
            continue
        start, end = token.map
        if blocks and start < blocks[-1].end:
            continue  # inside a block the lenient reading extended
        body = token.content
        if lenient and _holds_opener(body, token.markup):
            end = _balanced_end(lines, start, token.markup)
            body = _dedent(lines[start + 1:end], lines[start])
            end = min(end + 1, len(lines))
        if body and not body.endswith("\n"):
            body += "\n"
        previous = blocks[-1].end if blocks else 0
        before = next((line.strip() for line in reversed(lines[previous:start])
                       if line.strip()), "")
        blocks.append(Fence(token.info.strip(), body, before, start, end))
    return blocks


@functools.cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt  # loaded when model output is first read

    # Only the block rules that decide where a fence is; no inline parsing at all.
    return MarkdownIt("zero").enable(["fence", "code", "list", "blockquote"]).disable("inline")


def _lines(text: str) -> list[str]:
    """`text` split into lines as markdown-it numbers them (after its newline normalisation)."""
    return re.sub(r"\r\n?", "\n", text).replace("\0", "\ufffd").split("\n")


def _holds_opener(body: str, fence: str) -> bool:
    """Whether `body` holds an opening fence with an info string that `fence` would match."""
    return any(found is not None and found[1] and _same_kind(found[0], fence)
               for found in map(_fence_line, body.split("\n")))


def _balanced_end(lines: list[str], start: int, fence: str) -> int:
    """The line of the bare fence that closes the block opened at `start`, counting fences
    with an info string as nested openers; `len(lines)` when none does."""
    depth = 0
    for i in range(start + 1, len(lines)):
        found = _fence_line(lines[i])
        if found is None or not _same_kind(found[0], fence):
            continue
        if found[1]:
            depth += 1
        elif depth == 0:
            return i
        else:
            depth -= 1
    return len(lines)


def _fence_line(line: str) -> tuple[str, str] | None:
    """(fence, info string) when `line` is a fence line at any indentation."""
    found = _FENCE_LINE.match(line)
    if found is None:
        return None
    fence, info = (found[1], found[2]) if found[1] else (found[3], found[4])
    return fence, info.strip()


def _same_kind(candidate: str, fence: str) -> bool:
    return candidate[0] == fence[0] and len(candidate) >= len(fence)


def _dedent(body: list[str], opening: str) -> str:
    indent = len(opening) - len(opening.lstrip(" "))
    return "".join(re.sub(rf"^ {{0,{indent}}}", "", line) + "\n" for line in body)
