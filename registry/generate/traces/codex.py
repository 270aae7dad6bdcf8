"""Codex rollout files: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`.

Recorded from Codex 0.169.0. Each line is `{"type", "payload"}`: `session_meta` and
`turn_context` carry the `cwd`; `response_item` payloads are messages (user, assistant,
developer), tool calls and their outputs; `event_msg`, `token_count`, `world_state` and the like
are metadata (a `user_message` event stands in for a lost prompt). Two generations of tools:

- today's `exec_command` takes `{"cmd": "..."}` and answers plain text with a
  `Process exited with code N` line; `apply_patch` is a `custom_tool_call` whose `input` is the
  patch, answered with `Exit code: N`;
- the older `shell` takes `{"command": ["bash", "-lc", "..."]}` and answers a JSON wrapper
  `{"output": ..., "metadata": {"exit_code": N}}` (also `shell_command`, `local_shell_call`).
"""

from __future__ import annotations

import json
from typing import Any

from registry.generate.traces.events import (
    Parsed,
    Step,
    blocks_text,
    exit_code,
    is_denial,
    load_json,
    read_jsonl,
    relative,
)

TYPES = {"session_meta", "response_item", "event_msg", "turn_context"}
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def parse(text: str) -> Parsed:
    """The steps of a Codex rollout (see the module docstring)."""
    parsed = Parsed()
    prompts, root = [], ""
    for event in read_jsonl(text, parsed):
        payload = event.get("payload")
        if not isinstance(payload, dict):
            payload = {}
        kind = payload.get("type")
        root = str(payload.get("cwd") or root) if event.get("type") in (
            "session_meta", "turn_context") else root
        if event.get("type") == "event_msg" and kind == "user_message":
            prompts.append(Step("user", str(payload.get("message", ""))))
        if event.get("type") != "response_item":
            continue
        if kind == "message" and payload.get("role") in ("user", "assistant"):
            body = blocks_text(payload.get("content"))
            if body.strip() and not body.lstrip().startswith(("<", "# AGENTS.md")):
                parsed.add(Step(payload["role"], body))  # not environment context
        elif kind in _CALLS:
            parsed.add(_call(payload, root))
        elif kind in _OUTPUTS:
            parsed.add(_result(payload))
    if not any(s.kind == "user" for s in parsed.steps) and prompts:
        parsed.steps.insert(0, prompts[0])
    return parsed


def _call(payload: dict[str, Any], root: str) -> Step:
    name = str(payload.get("name") or payload.get("type"))
    call_id = str(payload.get("call_id") or payload.get("id") or "")
    if "input" in payload:  # custom_tool_call: apply_patch's patch is its raw input
        return Step("call", tool=name, args={"patch": str(payload["input"])}, call_id=call_id)
    args = load_json(payload.get("arguments") or "{}")
    if not isinstance(args, dict):
        args = {"raw": str(payload.get("arguments"))}
    if payload.get("type") == "local_shell_call":
        args = {"command": (payload.get("action") or {}).get("command")}
    if name == "apply_patch" and "input" in args:
        return Step("call", tool=name, args={"patch": str(args["input"])}, call_id=call_id)
    command = args.pop("cmd", None) or args.get("command")
    if isinstance(command, list):
        if command and command[0] == "apply_patch":
            return Step("call", tool="apply_patch", args={"patch": str(command[-1])},
                        call_id=call_id)
        command = command[-1] if len(command) == 3 and command[1] in ("-lc", "-c") \
            else " ".join(map(str, command))
    if command is not None:
        args["command"] = str(command)
    for key in ("path", "file_path"):
        if key in args:
            args[key] = relative(args[key], root)
    return Step("call", tool=name, args=args, call_id=call_id)


def _result(payload: dict[str, Any]) -> Step:
    output, code = payload.get("output", ""), None
    if isinstance(output, str) and output.lstrip().startswith("{"):
        wrapper = load_json(output)  # the older shell tool's {"output", "metadata"} wrapper
        if isinstance(wrapper, dict) and "output" in wrapper:
            output = wrapper["output"]
            code = (wrapper.get("metadata") or {}).get("exit_code")
    text = output if isinstance(output, str) else blocks_text(output) or json.dumps(output)
    code = code if isinstance(code, int) else exit_code(text)
    _, marker, body = text.partition("\nOutput:\n")
    if marker and code is not None:  # exec_command's header: chunk id, wall time, exit code
        text = body
    denied = is_denial(text)
    failed = bool(code) if code is not None else denied or "error" in text[:80].lower()
    return Step("result", text, is_error=failed, exit_code=code, denied=denied,
                call_id=str(payload.get("call_id") or ""))
