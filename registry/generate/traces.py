"""Agent traces (`generate --from`) turned into a compact account of the work for the teacher.

Formats: Claude Code session JSONL (`type` user/assistant events whose `message.content`
holds text, tool_use and tool_result blocks), Codex rollout JSONL (`session_meta`,
`response_item` messages, function calls and their outputs, `event_msg`), and markdown or
plain-text transcripts. The account keeps what teaches, in this order: the goal (the first
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
from typing import Any, Literal

from registry.errors import GenerationError
from registry.evaluation.checks import extract_files
from registry.secrets import MASK, scrub

TraceFormat = Literal["claude-code", "codex", "markdown", "text"]
DEFAULT_BUDGET = 24_000
MAX_TRACE_BYTES = 64 * 2**20
_SHARES = (("goal", 0.1), ("fixes", 0.4), ("decisions", 0.2), ("files", 0.25),
           ("commands", 0.05))
_CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context"}
_ERROR_TEXT = re.compile(r"Traceback \(most recent|\b\w*Error\b:|\berror:|\b(?-i:FAILED)\b|"
                         r"\bexit (?:code|status) [1-9]|command not found|No such file", re.I)
_DECISION_WORDS = re.compile(r"\b(because|instead|rather than|prefer|decid|chose|should|must|"
                             r"the (?:issue|problem|fix|cause)|root cause|turns out|note|avoid|"
                             r"don't|never|always)", re.I)
_ROLE = (r"(user|human|you|me|assistant|ai|claude|codex|agent|model|chatgpt|tool(?: output)?|"
         r"tool result|output|system)")
_ROLE_LINE = re.compile(rf"^(?:#{{1,6}}\s+{_ROLE}\b.*|\*\*{_ROLE}\s*:?\*\*\s*:?\s*(.*)|"
                        r"(user|human|assistant|ai|claude|codex|agent|tool)\s*:\s*(.*))$", re.I)
_HEREDOC = re.compile(r"cat\s+>\s*([\w./-]+)\s*<<-?\s*['\"]?(\w+)['\"]?\n(.*?)\n\2\b", re.S)
_BARE_NAMES = re.compile(r"^[*`]*(Dockerfile|Containerfile|Makefile|Justfile|Procfile|Gemfile|"
                         r"Rakefile|Vagrantfile)[*`]*:?[ \t]*\n(`{3,}|~{3,})[^\n]*\n(.*?)\n\2",
                         re.M | re.S)
_SECRETS = (re.compile(r"\b(sk-ant-[\w-]{10,}|sk-[\w-]{20,}|hf_[A-Za-z0-9]{20,}|"
                       r"gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})"),
            re.compile(r"(?i)\b([\w-]*(?:api[_-]?key|token|secret|password))(\s*[=:]\s*)"
                       r"[\"']?[^\s\"']{8,}"))


@dataclass
class Step:
    """One normalized event: a user or assistant message, a tool call, or a tool result."""

    kind: Literal["user", "assistant", "call", "result"]
    text: str = ""
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False


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


def detect_format(text: str) -> TraceFormat:
    """Which format a trace is in, from its first JSON lines or its markers."""
    for line in text.lstrip("\ufeff").splitlines()[:50]:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") in _CODEX_TYPES and "payload" in event:
            return "codex"
        if isinstance(event, dict) and ("message" in event or "sessionId" in event):
            return "claude-code"
    if any(_ROLE_LINE.match(line.strip()) for line in text.splitlines()):
        return "markdown"
    return "text"


def _blocks_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_blocks_text(b.get("text", b.get("content", "")))
                         for b in content if isinstance(b, dict))
    return ""


def _jsonl(text: str) -> Iterable[dict[str, Any]]:
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def _claude_steps(text: str) -> list[Step]:
    steps = []
    for event in _jsonl(text):
        root = str(event.get("cwd") or "\0").rstrip("/") + "/"
        role = event.get("type")
        content = (event.get("message") or {}).get("content")
        if role not in ("user", "assistant") or event.get("isMeta"):
            continue
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks or []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and not block.get("text", "").lstrip().startswith(
                    ("<command-", "<local-command", "Caveat:")):
                steps.append(Step(role, block["text"]))
            elif kind == "tool_use":
                args = dict(block.get("input") or {})
                if str(args.get("file_path", "")).startswith(root):
                    args["file_path"] = args["file_path"][len(root):]
                steps.append(Step("call", tool=block.get("name", ""), args=args))
            elif kind == "tool_result":
                steps.append(Step("result", _blocks_text(block.get("content")),
                                  is_error=bool(block.get("is_error"))))
    return steps


def _codex_call(payload: dict[str, Any]) -> Step:
    name = payload.get("name", "")
    if "input" in payload:  # custom_tool_call (apply_patch)
        return Step("call", tool=name, args={"patch": str(payload["input"])})
    try:
        args = json.loads(payload.get("arguments") or "{}")
    except ValueError:
        args = {"raw": payload.get("arguments")}
    command = args.get("command") if isinstance(args, dict) else None
    if isinstance(command, list):
        if command and command[0] == "apply_patch":
            return Step("call", tool="apply_patch", args={"patch": command[-1]})
        command = command[-1] if command[:2] in (["bash", "-lc"], ["bash", "-c"]) \
            else " ".join(map(str, command))
        args = {**args, "command": command}
    return Step("call", tool=name, args=args if isinstance(args, dict) else {})


def _codex_result(payload: dict[str, Any]) -> Step:
    output, code = payload.get("output", ""), None
    if isinstance(output, str) and output.lstrip().startswith("{"):
        try:
            data = json.loads(output)
            output, code = data.get("output", output), (data.get("metadata") or {}).get(
                "exit_code")
        except (ValueError, AttributeError):
            pass
    text = _blocks_text(output)
    match = re.match(r"Exit code:\s*(\d+)", text)
    code = int(match.group(1)) if code is None and match else code
    return Step("result", text, is_error=bool(code) or (code is None and "error" in text[:80]))


def _codex_steps(text: str) -> list[Step]:
    steps, prompts = [], []
    for event in _jsonl(text):
        payload = event.get("payload") or {}
        kind = payload.get("type")
        if event.get("type") == "event_msg" and kind == "user_message":
            prompts.append(Step("user", str(payload.get("message", ""))))
        if event.get("type") != "response_item":
            continue
        if kind == "message" and payload.get("role") in ("user", "assistant"):
            body = _blocks_text(payload.get("content"))
            if not body.lstrip().startswith("<"):  # environment context, AGENTS.md
                steps.append(Step(payload["role"], body))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            steps.append(_codex_call(payload))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            steps.append(_codex_result(payload))
    if not any(s.kind == "user" for s in steps):
        steps = prompts[:1] + steps
    return steps


def _markdown_steps(text: str) -> list[Step]:
    steps: list[Step] = []
    role, lines = "system", []  # a title before the first role marker is not the goal
    roles = {"tool": "result", "tool output": "result", "tool result": "result",
             "output": "result", "system": "system"}

    def flush() -> None:
        body = "\n".join(lines).strip()
        if body and role != "system":
            kind = "user" if role in ("user", "human", "you", "me") else roles.get(role,
                                                                                "assistant")
            steps.append(Step(kind, body, is_error=kind != "assistant"
                              and bool(_ERROR_TEXT.search(body))))

    for line in text.splitlines():
        match = _ROLE_LINE.match(line.strip())
        if match:
            flush()
            role = next(g for g in (match.group(1), match.group(2), match.group(4)) if g).lower()
            lines = [match.group(3) or match.group(5) or ""]
        else:
            lines.append(line)
    flush()
    return steps


def _text_steps(text: str) -> list[Step]:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    steps = [Step("user", paragraphs[0])] if paragraphs else []
    for paragraph in paragraphs[1:]:
        if _ERROR_TEXT.search(paragraph):
            steps.append(Step("result", paragraph, is_error=True))
        else:
            steps.append(Step("assistant", paragraph))
            if steps[-2].is_error:  # in notes, the paragraph after an error is its fix
                steps.append(Step("result"))
    return steps


_PARSERS = {"claude-code": _claude_steps, "codex": _codex_steps, "markdown": _markdown_steps,
            "text": _text_steps}


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
    return re.sub(r"^([`~]{3,}).*?^\1[ \t]*$", "[code]", text.strip(), flags=re.M | re.S)


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
        for match in _BARE_NAMES.finditer(step.text):  # names without a dot: Dockerfile, ...
            self.account.files[match.group(1)] = match.group(3) + "\n"
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
    """Mask every secret the process knows (`registry.secrets.scrub`, plus `secrets`) and,
    since a trace may quote someone else's keys, common key shapes too."""
    text = _SECRETS[0].sub(MASK, scrub(text, secrets))
    return _SECRETS[1].sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)


def parse_trace(text: str, fmt: TraceFormat | None = None) -> TraceAccount:
    """The account of a trace's text (its format detected when not given)."""
    fmt = fmt or detect_format(text)
    return build_account(_PARSERS[fmt](text), fmt)


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
