"""A scripted coding-agent model on 127.0.0.1, for recording the real agent CLIs offline.

    with ScriptedAgentServer(root="/work/relu-kernel") as server:   # server.url, no /v1
        ... run claude / codex / opencode / gemini against server.url ...

It speaks the wire formats today's CLIs use: Anthropic Messages (Claude Code; OpenCode through
`@ai-sdk/anthropic`), OpenAI Responses (Codex) and Gemini `generateContent` (Gemini CLI), as
one SSE body when the request streams. Every agent-loop request (one that offers a tool to
write files) gets the step of `SCRIPT` given by how many tool results the conversation
already holds, so side calls (titles, routing, token counts) never shift the script. The
script writes `build.toml` with an unclosed array, runs a check that fails, edits the file,
runs the check again and answers. Each step is rendered with the tools the CLI offers: its
own write/edit tools, else shell heredocs (the whole file again, as Codex does); Codex's
`apply_patch` when it offers one.
"""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer
from typing import Any

from .quiet_http import QuietHandler

__all__ = ["SCRIPT", "ScriptedAgentServer"]

BAD_TOML = ('[general]\nname = "relu"\nversion = "0.1.0"\n\n[kernel.relu]\n'
            'backend = "cuda"\nsrc = ["relu/relu.cu"\n')
GOOD_LINE, BAD_LINE = 'src = ["relu/relu.cu"]\n', 'src = ["relu/relu.cu"\n'
CHECK = "python3 -c \"import tomllib; print(tomllib.load(open('build.toml', 'rb'))['general'])\""
SCRIPT: list[dict[str, Any]] = [
    {"say": "I'll write build.toml for the relu kernel first.",
     "write": ("build.toml", BAD_TOML)},
    {"say": "Now I check that it parses.", "run": CHECK},
    {"say": "The src array is not closed, so tomllib stops at the end of the file. I'll "
            "close the bracket instead of rewriting the file.",
     "edit": ("build.toml", BAD_LINE, GOOD_LINE)},
    {"say": "Checking again.", "run": CHECK},
    {"say": "Done: build.toml declares the relu kernel (CUDA backend, source relu/relu.cu) "
            "and parses with tomllib. The first version failed because the src array was "
            "never closed; closing the bracket fixed it."},
]
# Which tool (and argument names) each CLI offers for writing, editing and running.
TOOLSETS = {
    "Write": {"write": ("Write", "file_path", "content"),
              "edit": ("Edit", "file_path", "old_string", "new_string"),
              "run": ("Bash", "command")},
    "write_file": {"write": ("write_file", "file_path", "content"),
                   "edit": ("replace", "file_path", "old_string", "new_string"),
                   "run": ("run_shell_command", "command")},
    "write": {"write": ("write", "filePath", "content"),
              "edit": ("edit", "filePath", "oldString", "newString"),
              "run": ("bash", "command")},
    "exec_command": {"run": ("exec_command", "cmd")},
    "shell": {"run": ("shell", "command")},
}
EXTRA_ARGS = {"replace": {"instruction": "Close the src array."},
              "Bash": {"description": "Run a shell command"},
              "bash": {"description": "Run a shell command"}}


class ScriptedAgentServer:
    """The script above behind a local HTTP server; `root` makes paths absolute."""

    def __init__(self, root: str, script: list[dict[str, Any]] | None = None) -> None:
        self.root, self.script = root.rstrip("/"), script or SCRIPT
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._ids, self._lock = 0, threading.Lock()
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedAgentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def next_id(self, prefix: str) -> str:
        """A fresh id like `call_3`."""
        with self._lock:
            self._ids += 1
            return f"{prefix}{self._ids}"

    def step(self, tools: set[str], done: int) -> tuple[str, list[tuple[str, Any]]]:
        """Text and tool calls (name, arguments) for step `done` of the script."""
        if done >= len(self.script):
            return "Nothing more to do.", []
        step = self.script[done]
        key = next((k for k in TOOLSETS if k in tools), "exec_command")
        kit = TOOLSETS[key]
        calls: list[tuple[str, Any]] = []
        if "write" in step:
            path, content = step["write"]
            if "write" in kit:
                name, p, c = kit["write"]
                calls.append((name, {p: f"{self.root}/{path}", c: content}))
            else:
                calls.append(self._shell(kit, f"cat > {path} <<'EOF'\n{content}EOF"))
        if "edit" in step:
            path, old, new = step["edit"]
            if "edit" in kit:
                name, p, o, n = kit["edit"]
                calls.append((name, {p: f"{self.root}/{path}", o: old, n: new,
                                     **EXTRA_ARGS.get(name, {})}))
            elif "apply_patch" in tools:
                calls.append(("apply_patch", f"*** Begin Patch\n*** Update File: {path}\n@@\n"
                              f"-{old}+{new}*** End Patch\n"))
            else:  # as Codex does without apply_patch: write the whole file again
                content = self._written(done, path).replace(old, new)
                calls.append(self._shell(kit, f"cat > {path} <<'EOF'\n{content}EOF"))
        if "run" in step:
            calls.append(self._shell(kit, step["run"]))
        return step["say"], calls

    def _written(self, done: int, path: str) -> str:
        """The content the script gave `path` before step `done`."""
        content = ""
        for step in self.script[:done]:
            if step.get("write", ("",))[0] == path:
                content = step["write"][1]
            if step.get("edit", ("",))[0] == path:
                content = content.replace(step["edit"][1], step["edit"][2])
        return content

    @staticmethod
    def _shell(kit: dict[str, tuple[str, ...]], command: str) -> tuple[str, Any]:
        name, arg = kit["run"]
        if name == "shell":
            return name, {arg: ["bash", "-lc", command]}
        return name, {arg: command, **EXTRA_ARGS.get(name, {})}

    def handle(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        """(content type, body) for one request."""
        with self._lock:
            self.requests.append((path, body))
        if path.endswith("/count_tokens") or path.endswith(":countTokens"):
            return _json({"input_tokens": 100, "totalTokens": 100})
        if path.endswith("/v1/messages"):
            return self._anthropic(body)
        if path.endswith("/v1/responses"):
            return self._responses(body)
        if ":generateContent" in path or ":streamGenerateContent" in path:
            return self._gemini(body, stream=":stream" in path)
        return _json({"error": {"message": f"no route {path}"}})

    # -- Anthropic Messages ---------------------------------------------------------------
    def _anthropic(self, body: dict[str, Any]) -> tuple[str, bytes]:
        tools = {t.get("name", "") for t in body.get("tools") or []}
        done = sum(1 for m in body.get("messages", []) if isinstance(m.get("content"), list)
                   for b in m["content"] if b.get("type") == "tool_result")
        text, calls = self.step(tools, done) if _is_agent(tools) else ("Relu build file", [])
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        content += [{"type": "tool_use", "id": self.next_id("toolu_"), "name": n, "input": a}
                    for n, a in calls]
        message = {"id": self.next_id("msg_"), "type": "message", "role": "assistant",
                   "model": body.get("model", "fake"), "content": content,
                   "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                   "usage": {"input_tokens": 100, "output_tokens": 20}}
        if not body.get("stream"):
            return _json(message)
        events = [("message_start", {"message": {**message, "content": [],
                                                 "stop_reason": None}})]
        for i, block in enumerate(content):
            start = {**block, "input": {}} if block["type"] == "tool_use" else \
                {"type": "text", "text": ""}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])} \
                if block["type"] == "tool_use" else {"type": "text_delta", "text": block["text"]}
            events += [("content_block_start", {"index": i, "content_block": start}),
                       ("content_block_delta", {"index": i, "delta": delta}),
                       ("content_block_stop", {"index": i})]
        events += [("message_delta", {"delta": {"stop_reason": message["stop_reason"],
                                                "stop_sequence": None},
                                      "usage": {"output_tokens": 20}}),
                   ("message_stop", {})]
        return _sse([(e, {"type": e, **d}) for e, d in events])

    # -- OpenAI Responses -----------------------------------------------------------------
    def _responses(self, body: dict[str, Any]) -> tuple[str, bytes]:
        tools = {t.get("name", "") for t in body.get("tools") or []}
        items = body.get("input") or []
        done = sum(1 for i in items if isinstance(i, dict)
                   and i.get("type") in ("function_call_output", "custom_tool_call_output"))
        text, calls = self.step(tools, done) if _is_agent(tools) else ("Relu build file", [])
        output: list[dict[str, Any]] = [{
            "type": "message", "id": self.next_id("msg_"), "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}]
        for name, args in calls:
            call_id = self.next_id("call_")
            output.append({"type": "custom_tool_call", "id": self.next_id("ctc_"),
                           "call_id": call_id, "name": name, "input": args, "status": "completed"}
                          if isinstance(args, str) else
                          {"type": "function_call", "id": self.next_id("fc_"), "call_id": call_id,
                           "name": name, "arguments": json.dumps(args), "status": "completed"})
        response = {"id": self.next_id("resp_"), "object": "response", "status": "completed",
                    "model": body.get("model", "fake"), "output": output,
                    "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens": 20,
                              "output_tokens_details": {"reasoning_tokens": 0},
                              "total_tokens": 120}}
        if not body.get("stream"):
            return _json(response)
        events: list[tuple[str, dict[str, Any]]] = [
            ("response.created", {"response": {**response, "status": "in_progress",
                                               "output": []}})]
        for index, item in enumerate(output):
            events.append(("response.output_item.added", {"output_index": index, "item": item}))
            if item["type"] == "message":
                events.append(("response.output_text.delta", {
                    "output_index": index, "item_id": item["id"], "content_index": 0,
                    "delta": text}))
            events.append(("response.output_item.done", {"output_index": index, "item": item}))
        events.append(("response.completed", {"response": response}))
        return _sse([(e, {"type": e, **d}) for e, d in events])

    # -- Gemini generateContent -----------------------------------------------------------
    def _gemini(self, body: dict[str, Any], *, stream: bool) -> tuple[str, bytes]:
        tools = {f.get("name", "") for t in body.get("tools") or []
                 for f in t.get("functionDeclarations") or []}
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        done = sum(1 for c in body.get("contents") or [] for p in c.get("parts") or []
                   if "functionResponse" in p)
        if schema:  # routing and next-speaker checks: an object that fits the schema
            parts: list[dict[str, Any]] = [{"text": json.dumps(_sample(schema))}]
        else:
            text, calls = self.step(tools, done) if _is_agent(tools) else ("Relu build file", [])
            parts = [{"text": text}] + [{"functionCall": {"name": n, "args": a}}
                                        for n, a in calls]
        chunk = {"candidates": [{"content": {"role": "model", "parts": parts},
                                 "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20,
                                   "totalTokenCount": 120}, "modelVersion": "fake"}
        return _sse([("", chunk)]) if stream else _json(chunk)


def _is_agent(tools: set[str]) -> bool:
    return any(name in tools for name in TOOLSETS)


def _sample(schema: dict[str, Any]) -> Any:
    """A value that fits a JSON schema (enums prefer "user": the model never keeps the turn)."""
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    if kind == "object":
        return {k: _sample(v) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    return {"string": "flash", "integer": 1, "number": 1, "boolean": False}.get(kind, None)


def _json(payload: Any) -> tuple[str, bytes]:
    return "application/json", json.dumps(payload).encode()


def _sse(events: list[tuple[str, dict[str, Any]]]) -> tuple[str, bytes]:
    lines = [(f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
             for name, data in events]
    return "text/event-stream", "".join(lines).encode()


class _Handler(QuietHandler):
    fake: ScriptedAgentServer

    def _serve(self) -> None:
        raw = self.read_body()
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        kind, payload = self.fake.handle(self.path.split("?", 1)[0], body)
        status, kind = self._status(kind)
        self.reply(status, {"content-type": kind}, payload)

    @staticmethod
    def _status(kind: str) -> tuple[int, str]:
        """The HTTP status and content type of an answer `handle` gave as `kind` (200 here; a
        subclass may answer some kinds as errors)."""
        return 200, kind

    do_GET = do_POST = _serve
