"""What every trace parser produces: normalized steps, plus an honest count of what was read.

A parser turns one format into `Step`s (a user or assistant message, a tool call, a tool
result) and counts the records it read, the ones that gave a step, and the lines it could not
read at all (`Damage`: a JSON line cut mid-way or otherwise broken). Nothing is dropped
without being counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from registry._io import MAX_JSON_DEPTH, loads_bounded

TraceFormat = Literal["claude-code", "codex", "opencode", "gemini-cli", "markdown", "text"]

_DENIAL = re.compile(
    r"requires approval|haven't granted it|doesn't want to proceed with this tool use|"
    r"tool use was rejected|rejected permission|permission to use \S+ (?:has been|was) denied|"
    r"(?:denied|rejected) by (?:the )?(?:user|policy|a hook)|execution denied", re.I)
_EXIT = re.compile(r"^(?:Process exited with code|Exit code:?|Exit Code:)\s*(-?\d+)\b", re.M)
_TYPE = re.compile(r'"type"\s*:\s*"(\w+)"')
_NAME = re.compile(r'"name"\s*:\s*"(\w+)"')
_PATH = re.compile(r'"(?:file_?[pP]ath|path)"\s*:\s*"([^"]{1,200})"')


MAX_DEPTH = MAX_JSON_DEPTH
"""How deep a trace's JSON may nest (the recorded CLIs' events nest 8 deep). The parsers walk
what they read recursively: one line of `[[[...]]]` ended `generate --from` and `trace show`
with a traceback (a red-team note). A value nested deeper is a damaged line."""


def loads(text: str) -> Any:
    """`json.loads` of a trace's line or document.

    Raises:
        ValueError: not JSON, or JSON nested deeper than `MAX_DEPTH` levels.
    """
    return loads_bounded(text, MAX_DEPTH)


StepKind = Literal["user", "assistant", "call", "result"]
Role = Literal["user", "assistant"]  # who wrote a message (a text step's kind)


@dataclass
class Step:
    """One normalized event; `call_id` pairs a result with its call."""

    kind: StepKind
    text: str = ""
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False
    exit_code: int | None = None
    denied: bool = False
    call_id: str = ""


@dataclass
class Damage:
    """A line that could not be read; `cut` when it is the file's last line, without its end."""

    line: int
    size: int
    cut: bool
    looks_like: str = ""

    def describe(self) -> str:
        """`line 7 (cut mid-line, 812 bytes; it looked like a tool_use Write of build.toml)`."""
        what = "cut mid-line" if self.cut else "not valid JSON"
        if self.looks_like == "a JSON document":
            return f"line {self.line} ({'cut before its end' if self.cut else what}, " \
                f"{self.size} bytes in all)"
        seen = f"; it looked like {self.looks_like}" if self.looks_like else ""
        return f"line {self.line} ({what}, {self.size} bytes{seen})"


@dataclass
class Parsed:
    """A parser's output: the steps and the counts behind them."""

    steps: list[Step] = field(default_factory=list)
    events: int = 0
    used: int = 0
    damaged: list[Damage] = field(default_factory=list)

    def add(self, *steps: Step) -> None:
        """Append steps; a record that gives at least one counts as used."""
        if steps:
            self.steps.extend(steps)
            self.used += 1


def read_jsonl(text: str, parsed: Parsed) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL text; unreadable lines are recorded in `parsed.damaged`."""
    records = []
    lines = text.lstrip("\ufeff").split("\n")
    last = len(lines) - (1 if text.endswith("\n") else 0)
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except ValueError:
            parsed.damaged.append(Damage(number, len(line.encode()), number == last,
                                         _looks_like(line)))
            continue
        if isinstance(record, dict):
            records.append(record)
    parsed.events = len(records)
    return records


def _looks_like(line: str) -> str:
    """What a damaged line seems to have held, from the keys still readable in it."""
    kinds = [k for k in _TYPE.findall(line) if k not in ("text", "message")]
    name, path = _NAME.search(line), _PATH.search(line)
    parts = [kinds[-1] if kinds else "", name.group(1) if name else "",
             f"of {path.group(1).rsplit('/', 1)[-1]}" if path else ""]
    return " ".join(p for p in parts if p)


def blocks_text(content: Any) -> str:
    """The text of a string or a list of content blocks (`text`, `content`, nested)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(blocks_text(b.get("text", b.get("content", "")))
                         for b in content if isinstance(b, dict))
    return ""


def exit_code(text: str) -> int | None:
    """The exit status a tool output states (`Process exited with code 1`, `Exit code 1`)."""
    match = _EXIT.search(text)
    return int(match.group(1)) if match else None


def is_denial(text: str) -> bool:
    """Whether a tool result says a permission prompt or policy refused the call."""
    return bool(_DENIAL.search(text[:400]))


def relative(path: Any, root: str) -> str:
    """`path` relative to the session's folder when inside it (machine paths stay out)."""
    text, root = str(path), root.rstrip("/")
    return text[len(root) + 1:] if root and text.startswith(root + "/") else text


def load_json(text: str) -> Any:
    """`loads`, or None."""
    try:
        return loads(text)
    except ValueError:
        return None
