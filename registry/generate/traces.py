"""Agent traces (`generate --from`) turned into a compact account of the work for the teacher.

The formats (Claude Code and Codex JSONL, markdown or plain-text transcripts) are read into
steps by `trace_formats`. The account keeps what teaches, in this order: the goal (the first
user message), errors and how they were fixed (a failing tool result and what followed until
something succeeded), decisions and the user's corrections, the final files (last write or
edit per path) and the commands run; it is trimmed to a character budget in that order.
Common secret shapes are redacted before anything reaches a model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from registry.errors import GenerationError
from registry.evaluation.checks import extract_files
from registry.format.markdown import fenced_blocks
from registry.generate.trace_formats import PARSERS, Step, TraceFormat, detect_format

__all__ = ["DEFAULT_BUDGET", "TraceAccount", "build_account", "detect_format", "parse_trace",
           "read_trace", "redact"]

DEFAULT_BUDGET = 24_000
MAX_TRACE_BYTES = 64 * 2**20
_SHARES = (("goal", 0.1), ("fixes", 0.4), ("decisions", 0.2), ("files", 0.25),
           ("commands", 0.05))
_DECISION_WORDS = re.compile(r"\b(because|instead|rather than|prefer|decid|chose|should|must|"
                             r"the (?:issue|problem|fix|cause)|root cause|turns out|note|avoid|"
                             r"don't|never|always)", re.I)
_HEREDOC = re.compile(r"cat\s+>\s*([\w./-]+)\s*<<-?\s*['\"]?(\w+)['\"]?\n(.*?)\n\2\b", re.S)
_BARE_NAME = re.compile(r"^[*`]*(Dockerfile|Containerfile|Makefile|Justfile|Procfile|Gemfile|"
                        r"Rakefile|Vagrantfile)[*`]*:?$")
_SECRETS = (re.compile(r"\b(sk-ant-[\w-]{10,}|sk-[\w-]{20,}|hf_[A-Za-z0-9]{20,}|"
                       r"gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})"),
            re.compile(r"(?i)\b([\w-]*(?:api[_-]?key|token|secret|password))(\s*[=:]\s*)"
                       r"[\"']?[^\s\"']{8,}"))


@dataclass
class TraceAccount:
    """What a session teaches, before trimming."""

    format: TraceFormat
    goal: str = ""
    fixes: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)

    def render(self, budget: int = DEFAULT_BUDGET) -> str:
        """Markdown within `budget` characters; unused share flows to later sections."""
        sections = {
            "goal": ("Goal", [self.goal] if self.goal else []),
            "fixes": ("Errors and how they were fixed", self.fixes),
            "decisions": ("Decisions and corrections", self.decisions),
            "files": ("Final files", [f"path: {p}\n```\n{c.rstrip()}\n```"
                                      for p, c in self.files.items()]),
            "commands": ("Commands run", [f"`{c}`" for c in self.commands]),
        }
        parts, spare = [f"# Account of an agent session ({self.format})"], 0
        budget = max(0, budget - 200)  # titles and separators
        for key, share in _SHARES:
            title, items = sections[key]
            allowance = int(budget * share) + spare
            if key == "goal":  # the goal always fits: up to half the budget
                allowance = max(allowance, min(len(self.goal) + 2, budget // 2))
            text, used = _take(items, allowance)
            spare = allowance - used
            if text:
                parts.append(f"## {title}\n\n{text}")
        return "\n\n".join(parts) + "\n"


def _take(items: list[str], allowance: int) -> tuple[str, int]:
    chosen, used = [], 0
    for item in items:
        if used + len(item) + 2 > allowance:
            room = allowance - used - 20
            if room > 200:
                chosen.append(item[:room] + "\n[... trimmed]")
                used += room + 16
            break
        chosen.append(item)
        used += len(item) + 2
    return "\n\n".join(chosen), used


def _summary(step: Step) -> str:
    args = step.args
    if "command" in args:
        return f"{step.tool}: {str(args['command'])[:300]}"
    path = args.get("file_path") or args.get("path")
    if "old_string" in args:
        return (f"{step.tool} {path}: replace `{_clip(args['old_string'], 200)}` with "
                f"`{_clip(args.get('new_string', ''), 300)}`")
    if "patch" in args:
        return f"apply_patch:\n{_clip(args['patch'], 600)}"
    return f"{step.tool} {path or _clip(json.dumps(args), 200)}"


def _clip(text: Any, limit: int) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tail(text: str, limit: int) -> str:
    """The last lines of an error output: where the message usually is."""
    return text if len(text) <= limit else "…" + text[-limit:].split("\n", 1)[-1]


def _apply_file_ops(step: Step, files: dict[str, str]) -> None:
    args, tool = step.args, step.tool.lower()
    path = args.get("file_path") or args.get("path")
    if path and "content" in args and tool in ("write", "write_file", "create_file", "create"):
        files[str(path)] = str(args["content"])
    elif path and "old_string" in args:
        edits = args.get("edits") or [args]
        current = files.get(str(path), "")
        for edit in edits:
            old, new = str(edit.get("old_string", "")), str(edit.get("new_string", ""))
            current = current.replace(old, new, 1) if old and old in current \
                else current + f"\n[edited] {new}"
        files[str(path)] = current.lstrip("\n")
    elif path and "edits" in args:
        files[str(path)] = "\n".join(f"[edited] {e.get('new_string', '')}" for e in args["edits"])
    for match in re.finditer(r"\*\*\* Add File: (.+)\n((?:\+.*\n?)*)", args.get("patch", "")):
        files[match.group(1).strip()] = re.sub(r"^\+", "", match.group(2), flags=re.M)
    for match in re.finditer(r"\*\*\* Update File: (.+)\n((?:(?!\*\*\* ).*\n?)*)",
                             args.get("patch", "")):
        files.setdefault(match.group(1).strip(), "")
        files[match.group(1).strip()] += "[patched]\n" + match.group(2)
    for match in _HEREDOC.finditer(str(args.get("command", ""))):
        files[match.group(1)] = match.group(3) + "\n"


def _prose(text: str) -> str:
    """Assistant text without its code blocks (files are listed apart)."""
    lines = re.sub(r"\r\n?", "\n", text.strip()).split("\n")
    for block in reversed(fenced_blocks("\n".join(lines))):
        lines[block.start:block.end] = ["[code]"]
    return "\n".join(lines)


class _Builder:
    """Walks the steps once; an open fix collects what follows an error until the failing
    tool (or, in a chat, the user) reports success."""

    def __init__(self, fmt: TraceFormat) -> None:
        self.account = TraceAccount(fmt)
        self.last_call: Step | None = None
        self.fix: list[str] | None = None
        self.failing_tool = ""

    def close(self, outcome: str) -> None:
        if self.fix is not None:
            self.account.fixes.append("\n".join([*self.fix, outcome]))
            self.fix = None

    def user(self, step: Step) -> None:
        if not self.account.goal:
            self.account.goal = step.text.strip()
        elif step.is_error:
            self.error(step)
        else:
            self.close(f"Then the user said: {_clip(step.text.strip(), 300)}")
            self.account.decisions.append(f"User: {_clip(step.text.strip(), 600)}")

    def assistant(self, step: Step) -> None:
        self.account.files.update(extract_files(step.text))
        for block in fenced_blocks(step.text):  # names without a dot: Dockerfile, ...
            bare = _BARE_NAME.match(block.before)
            if bare:
                self.account.files[bare.group(1)] = block.body
        prose = _prose(step.text)
        if self.fix is not None:
            self.fix.append(f"Reasoning: {_clip(prose, 500)}")
        elif self.account.format == "text" or _DECISION_WORDS.search(prose):
            self.account.decisions.append(_clip(prose, 600))

    def call(self, step: Step) -> None:
        self.last_call = step
        _apply_file_ops(step, self.account.files)
        if "command" in step.args:
            self.account.commands.append(_clip(str(step.args["command"]).split("\n")[0], 160))
        if self.fix is not None:
            self.fix.append(f"Then: {_summary(step)}")

    def error(self, step: Step) -> None:
        self.close("Result: another error followed.")
        head = f"`{_summary(self.last_call)}` failed" if self.last_call else "An error"
        self.fix = [f"{head}:\n{_tail(step.text.strip(), 400)}"]
        self.failing_tool = self.last_call.tool if self.last_call else ""

    def success(self) -> None:
        call = self.last_call
        if self.fix is not None and call is None:
            self.close("Result: resolved.")
        if self.fix is None or call is None or call.tool != self.failing_tool:
            return
        if self.fix[-1] == f"Then: {_summary(call)}":
            self.fix.pop()
        self.close(f"Result: `{_summary(call)}` then succeeded.")


def build_account(steps: list[Step], fmt: TraceFormat) -> TraceAccount:
    """The account of a list of steps (see the module docstring)."""
    builder = _Builder(fmt)
    for step in steps:
        if step.kind == "user":
            builder.user(step)
        elif step.kind == "assistant":
            builder.assistant(step)
        elif step.kind == "call":
            builder.call(step)
        elif step.is_error:
            builder.error(step)
        else:
            builder.success()
    builder.close("Result: not resolved in the trace.")
    account = builder.account
    account.commands = list(dict.fromkeys(account.commands))[-15:]
    return account


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace known secret values and common key shapes with `[redacted]`."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    text = _SECRETS[0].sub("[redacted]", text)
    return _SECRETS[1].sub(lambda m: f"{m.group(1)}{m.group(2)}[redacted]", text)


def parse_trace(text: str, fmt: TraceFormat | None = None) -> TraceAccount:
    """The account of a trace's text (its format detected when not given)."""
    fmt = fmt or detect_format(text)
    return build_account(PARSERS[fmt](text), fmt)


def read_trace(path: str | Path, *, budget: int = DEFAULT_BUDGET,
               secrets: Iterable[str] = ()) -> str:
    """A trace file's account as markdown, redacted, within `budget` characters.

    Raises:
        GenerationError: the file cannot be read or is too large.
    """
    file = Path(path)
    try:
        if file.stat().st_size > MAX_TRACE_BYTES:
            raise GenerationError(f"{file}: larger than {MAX_TRACE_BYTES // 2**20} MiB",
                                  hint="export a shorter session or a markdown summary")
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise GenerationError(f"cannot read trace {file}: {exc.strerror or exc}") from None
    return redact(parse_trace(redact(text, secrets)).render(budget), secrets)
