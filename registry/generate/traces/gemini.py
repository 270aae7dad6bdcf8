"""Gemini CLI chats: `~/.gemini/tmp/<project>/chats/session-*.jsonl` (or the older `.json`).

Recorded from Gemini CLI 0.61.0. The first line is a header (`sessionId`, `projectHash`);
`{"$set": ...}` lines update it (the first one sets the opening `<session_context>` message,
which names the workspace folder). Message lines have an `id` and a `type` (`user`, `gemini`,
`info`, `error`); a message is written again each time it grows, so the last line with an id
wins. A `gemini` message's `toolCalls` hold each call's `args`, its `result` (function
responses) and `status`; shell output ends with `Exit Code: N` when it is not 0. The older
format is one JSON document with the same messages under `messages`.
"""

from __future__ import annotations

import re
from typing import Any

from registry.generate.traces.events import (
    Parsed,
    Step,
    blocks_text,
    exit_code,
    is_denial,
    read_jsonl,
    relative,
)

_WORKSPACE = re.compile(r"Workspace Directories:\*\*\s*\n\s*- (\S+)")
_WRAPPER = re.compile(r"</?untrusted_context>|^Output: |^Process Group PGID: \d+$", re.M)


def is_record(record: dict[str, Any]) -> bool:
    """Whether a JSON line belongs to a Gemini CLI chat."""
    return "projectHash" in record or "$set" in record or record.get("type") == "gemini"


def is_document(document: Any) -> bool:
    """Whether a JSON document is an older Gemini CLI chat."""
    return isinstance(document, dict) and "projectHash" in document \
        and isinstance(document.get("messages"), list)


def parse(text: str, document: dict[str, Any] | None = None) -> Parsed:
    """The steps of a Gemini CLI chat (see the module docstring)."""
    parsed = Parsed()
    records = document["messages"] if document else read_jsonl(text, parsed)
    if document:
        parsed.events = len(records)
    messages: dict[str, dict[str, Any]] = {}
    for record in records:
        for message in (record.get("$set") or {}).get("messages") or [record]:
            if isinstance(message, dict) and message.get("type"):
                messages[str(message.get("id") or len(messages))] = message
    root = ""
    for message in messages.values():
        body = message.get("content")
        text = body if isinstance(body, str) else blocks_text(body)
        if message["type"] == "user" and text.lstrip().startswith("<session_context>"):
            match = _WORKSPACE.search(text)
            root = match.group(1) if match else root
        elif message["type"] == "user" and text.strip():
            parsed.add(Step("user", text))
        elif message["type"] == "gemini":
            steps = [Step("assistant", text)] if text.strip() else []
            steps += [s for call in message.get("toolCalls") or [] for s in _call(call, root)]
            parsed.add(*steps)
    return parsed


def _call(call: dict[str, Any], root: str) -> list[Step]:
    args = dict(call.get("args") or {})
    for key in ("file_path", "absolute_path", "dir_path"):
        if key in args:
            args[key] = relative(args[key], root)
    call_id = str(call.get("id") or "")
    steps = [Step("call", tool=str(call.get("name") or ""), args=args, call_id=call_id)]
    responses = [r.get("functionResponse", {}).get("response", {})
                 for r in call.get("result") or [] if isinstance(r, dict)]
    if not responses and call.get("status") not in ("error", "cancelled"):
        return steps
    text = "\n".join(str(r.get("output") or r.get("error") or "") for r in responses)
    text = _WRAPPER.sub("", text).strip()
    code = exit_code(text)
    failed = call.get("status") in ("error", "cancelled") or bool(code)
    denied = call.get("status") == "cancelled" or (failed and is_denial(text))
    return steps + [Step("result", text or str(call.get("status")), is_error=failed,
                         exit_code=code, denied=denied, call_id=call_id)]
