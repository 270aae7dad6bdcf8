"""Answers a harness's model requests from the response cache, so a rerun calls no model.

A CLI's requests are not byte-identical from one run to the next even when the conversation is:
they carry session and device ids, ids of tool calls the CLI made up, and (Codex) a random chunk
id and the wall time in each tool result. Measured on the four pinned CLIs against the scripted
fake model, everything else in a request is the same. So a request's key is its body with those
parts taken out (`VOLATILE_PATHS`, only there: the same names elsewhere, a tool's `id`
parameter and its description, a call's arguments, are what the model reads; the adapter's
`volatile` patterns in any string), plus the sample's own key (`Harness._replay`: CLI, model,
endpoint, repeat, arm, the skills it was given, case): two samples never share an answer, and a
conversation that really differs (another tool output, another prompt) misses and is asked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

# Where the pinned CLIs put what differs between two identical runs (paths from the body's top;
# "*" is any item of a list). Nothing of that name elsewhere is dropped.
VOLATILE_PATHS: tuple[tuple[str, ...], ...] = (
    ("metadata",), ("user",), ("session_id",),  # Claude Code: device and session; end users
    ("client_metadata",), ("prompt_cache_key",),  # Codex: session, turn, installation ids
    ("input", "*", "id"), ("input", "*", "call_id"),  # Codex: its items' and calls' ids
    ("messages", "*", "content", "*", "id"),  # Anthropic tool_use blocks (Claude, OpenCode)
    ("messages", "*", "content", "*", "tool_use_id"),  # and the tool_result blocks answering
    ("messages", "*", "tool_calls", "*", "id"), ("messages", "*", "tool_call_id"),  # Chat
    ("contents", "*", "parts", "*", "functionCall", "id"),  # Gemini CLI: its calls' ids
    ("contents", "*", "parts", "*", "functionResponse", "id"),
)
_Trie = dict[str, "_Trie | None"]  # None: drop this key


def _trie(paths: Sequence[tuple[str, ...]]) -> _Trie:
    root: _Trie = {}
    for path in paths:
        node = root
        for part in path[:-1]:
            below = node.setdefault(part, {})
            assert below is not None
            node = below
        node[path[-1]] = None
    return root


_VOLATILE = _trie(VOLATILE_PATHS)


class ResponseStore(Protocol):
    """Where answers are kept (the evaluation's `ResponseCache`)."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, value: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class Recorded:
    """One model answer as the CLI received it."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; a text body stays text, so the cache's scrubber sees what it says."""
        data: dict[str, Any] = {"harness_status": self.status,
                                "headers": [list(h) for h in self.headers]}
        try:
            data["text"] = self.body.decode("utf-8")
        except UnicodeDecodeError:
            data["base64"] = base64.b64encode(self.body).decode("ascii")
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Recorded | None:
        if "harness_status" not in data:  # not a harness record: never replay it
            return None
        body = (data["text"].encode("utf-8") if "text" in data
                else base64.b64decode(data["base64"]))
        return cls(data["harness_status"], [(k, v) for k, v in data["headers"]], body)


class Replay:
    """The cache seen from one sample: keys its requests, counts hits and misses.

    With `read=False` (`--no-cache`) nothing is answered from it, but every answer is still
    kept, as the tool loop does: a resumed or later run repeats none of those calls."""

    def __init__(self, store: ResponseStore, sample: str, volatile: Sequence[str] = (), *,
                 read: bool = True) -> None:
        self.store, self.sample, self.read = store, sample, read
        self.volatile = [re.compile(pattern) for pattern in volatile]
        self.hits = self.misses = 0

    def key(self, target: str, body: bytes) -> str:
        """The cache key of a request to `target` (path and query) with `body`."""
        try:
            content: Any = _stable(json.loads(body), self.volatile)
        except (ValueError, UnicodeDecodeError):
            content = hashlib.sha256(body).hexdigest()
        text = json.dumps([self.sample, target, content], sort_keys=True, ensure_ascii=False)
        return "harness:" + hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str) -> Recorded | None:
        found = self.store.get(key) if self.read else None
        recorded = Recorded.from_dict(found) if found is not None else None
        if recorded is None:
            self.misses += 1
        else:
            self.hits += 1
        return recorded

    def put(self, key: str, recorded: Recorded) -> None:
        if recorded.status == 200:  # errors are asked again next time
            self.store.put(key, recorded.to_dict())

    @property
    def all_replayed(self) -> bool:
        """Every model request of the sample was answered from the cache."""
        return self.hits > 0 and self.misses == 0


def _stable(value: Any, volatile: list[re.Pattern[str]], at: _Trie | None = _VOLATILE) -> Any:
    """`value` without what `at` (the rest of `VOLATILE_PATHS` there) drops, its strings
    without the volatile patterns."""
    here: _Trie = at or {}
    if isinstance(value, dict):
        return {k: _stable(v, volatile, {} if k == "*" else here.get(k, {}))
                for k, v in value.items() if k == "*" or here.get(k, {}) is not None}
    if isinstance(value, list):
        return [_stable(v, volatile, here.get("*", {})) for v in value]
    if isinstance(value, str):
        for pattern in volatile:
            value = pattern.sub("", value)
    return value
