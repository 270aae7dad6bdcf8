"""OpenCode sessions, as `opencode export <session id>` writes them (one JSON document).

Recorded from OpenCode 1.18.33, which keeps sessions in SQLite (`opencode.db`): the export is
the file a user can hand over. `{"info": {"directory", ...}, "messages": [{"info": {"role"},
"parts": [...]}]}`; parts are `text`, `reasoning`, `step-start`/`step-finish` and `tool` parts
whose `state` holds the `input` (camelCase: `filePath`, `oldString`, `newString`), the
`output`, `status` (`completed` or `error`) and, for bash, `metadata.exit`.
"""

from __future__ import annotations

from typing import Any

from registry.generate.traces.events import (
    Parsed,
    Role,
    Step,
    exit_code,
    is_denial,
    relative,
)

_SNAKE = {"filePath": "file_path", "oldString": "old_string", "newString": "new_string",
          "replaceAll": "replace_all"}


def is_export(document: Any) -> bool:
    """Whether a JSON document is an OpenCode export."""
    return isinstance(document, dict) and isinstance(document.get("info"), dict) \
        and isinstance(document.get("messages"), list)


def parse(document: dict[str, Any]) -> Parsed:
    """The steps of an OpenCode export (see the module docstring)."""
    parsed = Parsed()
    root = str(document["info"].get("directory") or "")
    for message in document["messages"]:
        if not isinstance(message, dict):
            continue
        role = (message.get("info") or {}).get("role")
        for part in message.get("parts") or []:
            parsed.events += 1
            if isinstance(part, dict) and role in ("user", "assistant"):
                parsed.add(*_part(role, part, root))
    return parsed


def _part(role: Role, part: dict[str, Any], root: str) -> list[Step]:
    if part.get("type") == "text" and not part.get("synthetic"):
        text = str(part.get("text") or "")
        return [Step(role, text)] if text.strip() else []
    if part.get("type") != "tool":
        return []
    state = part.get("state") or {}
    args = {_SNAKE.get(k, k): v for k, v in (state.get("input") or {}).items()}
    if "file_path" in args:
        args["file_path"] = relative(args["file_path"], root)
    call_id = str(part.get("callID") or part.get("id") or "")
    call = Step("call", tool=str(part.get("tool") or ""), args=args, call_id=call_id)
    if state.get("status") not in ("completed", "error"):
        return [call]  # still running when the session ended: no result
    error = state.get("status") == "error"
    text = str(state.get("error") if error else state.get("output") or "")
    code = (state.get("metadata") or {}).get("exit")
    code = code if isinstance(code, int) else exit_code(text)
    return [call, Step("result", text, is_error=error or bool(code), exit_code=code,
                       denied=error and is_denial(text), call_id=call_id)]
