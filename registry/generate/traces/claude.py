"""Claude Code session files: `~/.claude/projects/<cwd slug>/<session id>.jsonl`.

Recorded from Claude Code 2.1.197. Each line is one event: `user` and `assistant` events carry
`message.content` (text, thinking, `tool_use` and `tool_result` blocks) and the session's
`cwd`; a result event's `toolUseResult` holds what the tool did (for an edit, the whole file
before it). `attachment`, `queue-operation`, `last-prompt`, `summary` and `system` events are
metadata. A failing Bash result starts with `Exit code N`; a call refused by a permission
prompt comes back as an error result that says so ("This command requires approval").
"""

from __future__ import annotations

from typing import Any

from registry.generate.traces.events import (
    Parsed,
    Role,
    Step,
    blocks_text,
    exit_code,
    is_denial,
    read_jsonl,
    relative,
)

_SKIP_TEXT = ("<command-", "<local-command", "Caveat:", "<system-reminder>")


def parse(text: str) -> Parsed:
    """The steps of a Claude Code session (see the module docstring)."""
    parsed = Parsed()
    records = read_jsonl(text, parsed)
    originals = _originals(records)
    for event in records:
        role = event.get("type")
        content = (event.get("message") or {}).get("content")
        if role not in ("user", "assistant") or event.get("isMeta") \
                or event.get("isCompactSummary"):
            continue
        root = str(event.get("cwd") or "")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parsed.add(*[s for b in blocks or [] if isinstance(b, dict)
                     for s in _block(role, b, root, originals)])
    if not any(s.kind == "user" for s in parsed.steps):
        prompt = next((r.get("content") or r.get("lastPrompt") for r in records
                       if r.get("type") in ("queue-operation", "last-prompt")
                       and (r.get("content") or r.get("lastPrompt"))), None)
        if prompt:  # the user event itself was lost: the queued prompt is the same text
            parsed.steps.insert(0, Step("user", str(prompt)))
    return parsed


def _block(role: Role, block: dict[str, Any], root: str,
           originals: dict[str, str]) -> list[Step]:
    kind = block.get("type")
    if kind == "text":
        body = str(block.get("text") or "")
        return [] if not body.strip() or body.lstrip().startswith(_SKIP_TEXT) \
            else [Step(role, body)]
    if kind == "tool_use":
        args = dict(block.get("input") or {})
        for key in ("file_path", "notebook_path", "path"):
            if key in args:
                args[key] = relative(args[key], root)
        call_id = str(block.get("id") or "")
        if call_id in originals:
            args["original"] = originals[call_id]
        return [Step("call", tool=str(block.get("name") or ""), args=args, call_id=call_id)]
    if kind == "tool_result":
        body = blocks_text(block.get("content"))
        error = bool(block.get("is_error"))
        return [Step("result", body, is_error=error, exit_code=exit_code(body),
                     denied=error and is_denial(body),
                     call_id=str(block.get("tool_use_id") or ""))]
    return []  # thinking, images, redacted thinking


def _originals(records: list[dict[str, Any]]) -> dict[str, str]:
    """Tool-use id -> the whole file before an edit, from each result's `toolUseResult`."""
    found = {}
    for event in records:
        result = event.get("toolUseResult")
        content = (event.get("message") or {}).get("content")
        if not isinstance(result, dict) or not isinstance(result.get("originalFile"), str) \
                or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found[str(block.get("tool_use_id"))] = result["originalFile"]
    return found
