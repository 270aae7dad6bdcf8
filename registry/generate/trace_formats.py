"""Agent trace formats read into one list of steps (`generate --from`).

Claude Code session JSONL (`type` user/assistant events whose `message.content` holds text,
tool_use and tool_result blocks), Codex rollout JSONL (`session_meta`, `response_item`
messages, function calls and their outputs, `event_msg`), and markdown or plain-text
transcripts each become `Step`s: user and assistant messages, tool calls and tool results.
`traces` turns the steps into an account of the work.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

TraceFormat = Literal["claude-code", "codex", "markdown", "text"]
_CODEX_TYPES = {"session_meta", "response_item", "event_msg", "turn_context"}
ERROR_TEXT = re.compile(r"Traceback \(most recent|\b\w*Error\b:|\berror:|\b(?-i:FAILED)\b|"
                        r"\bexit (?:code|status) [1-9]|command not found|No such file", re.I)
_ROLE = (r"(user|human|you|me|assistant|ai|claude|codex|agent|model|chatgpt|tool(?: output)?|"
         r"tool result|output|system)")
_ROLE_LINE = re.compile(rf"^(?:#{{1,6}}\s+{_ROLE}\b.*|\*\*{_ROLE}\s*:?\*\*\s*:?\s*(.*)|"
                        r"(user|human|assistant|ai|claude|codex|agent|tool)\s*:\s*(.*))$", re.I)


@dataclass
class Step:
    """One normalized event: a user or assistant message, a tool call, or a tool result."""

    kind: Literal["user", "assistant", "call", "result"]
    text: str = ""
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    is_error: bool = False


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
                              and bool(ERROR_TEXT.search(body))))

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
        if ERROR_TEXT.search(paragraph):
            steps.append(Step("result", paragraph, is_error=True))
        else:
            steps.append(Step("assistant", paragraph))
            if steps[-2].is_error:  # in notes, the paragraph after an error is its fix
                steps.append(Step("result"))
    return steps


PARSERS = {"claude-code": _claude_steps, "codex": _codex_steps, "markdown": _markdown_steps,
            "text": _text_steps}
