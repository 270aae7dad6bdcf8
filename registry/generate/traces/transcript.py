"""Markdown chat transcripts and plain-text notes: the formats a person writes or pastes.

A markdown transcript has role markers (`## User`, `**Assistant:**`, `User: ...`); tool output
under a role marker is a result, an error when it reads like one. Plain notes are paragraphs:
the first is the goal, one that reads like an error is a failure and the one after it its fix.
"""

from __future__ import annotations

import re

from registry.generate.traces.events import Parsed, Step, StepKind

ERROR_TEXT = re.compile(r"Traceback \(most recent|\b\w*Error\b:|\berror:|\b(?-i:FAILED)\b|"
                        r"\bexit (?:code|status) [1-9]|command not found|No such file", re.I)
_ROLE = (r"(user|human|you|me|assistant|ai|claude|codex|agent|model|chatgpt|tool(?: output)?|"
         r"tool result|output|system)")
ROLE_LINE = re.compile(rf"^(?:#{{1,6}}\s+{_ROLE}\b.*|\*\*{_ROLE}\s*:?\*\*\s*:?\s*(.*)|"
                       r"(user|human|assistant|ai|claude|codex|agent|tool)\s*:\s*(.*))$", re.I)
# a "system" block is not a step (`parse_markdown` skips it)
_RESULT_ROLES: dict[str, StepKind] = {"tool": "result", "tool output": "result",
                                      "tool result": "result", "output": "result"}


def is_markdown(text: str) -> bool:
    """Whether any line is a role marker."""
    return any(ROLE_LINE.match(line.strip()) for line in text.splitlines())


def parse_markdown(text: str) -> Parsed:
    """The steps of a markdown transcript; each role block is one event."""
    parsed = Parsed()
    role = "system"  # a title before the first role marker is not the goal
    lines: list[str] = []

    def flush() -> None:
        body = "\n".join(lines).strip()
        if not body:
            return
        parsed.events += 1
        if role != "system":
            kind: StepKind = "user" if role in ("user", "human", "you", "me") \
                else _RESULT_ROLES.get(role, "assistant")
            parsed.add(Step(kind, body, is_error=kind != "assistant"
                            and bool(ERROR_TEXT.search(body))))

    for line in text.splitlines():
        match = ROLE_LINE.match(line.strip())
        if match:
            flush()
            role = next(g for g in (match.group(1), match.group(2), match.group(4)) if g).lower()
            lines = [match.group(3) or match.group(5) or ""]
        else:
            lines.append(line)
    flush()
    return parsed


def parse_text(text: str) -> Parsed:
    """The steps of plain notes; each paragraph is one event."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    parsed = Parsed(events=len(paragraphs))
    if paragraphs:
        parsed.add(Step("user", paragraphs[0]))
    for paragraph in paragraphs[1:]:
        if ERROR_TEXT.search(paragraph):
            parsed.add(Step("result", paragraph, is_error=True))
        else:
            parsed.add(Step("assistant", paragraph))
            if parsed.steps[-2].is_error:  # in notes, the paragraph after an error is its fix
                parsed.steps.append(Step("result"))
    return parsed
