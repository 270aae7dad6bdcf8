"""A content-addressed response cache in sqlite, so reruns and resumed runs cost nothing.

The key is a hash of everything that determines a completion: the model reference, the
endpoint that serves it (two servers behind one `local/` name are two models), the full request
(messages, tools, sampling parameters, seed) and the repeat index, so independent repeats never
share an answer. Values are scrubbed of secrets before they are stored, like everything else
written to disk.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from registry.providers import Completion, Message, ToolCall, ToolSpec, Usage
from registry.secrets import scrub


def completion_key(*, model: str, endpoint: str | None, tools: Sequence[ToolSpec] = (),
                   **request: Any) -> str:
    """sha256 over the canonical JSON of the model, its endpoint and the request's parts.

    `endpoint` is the provider's base URL (None for the embedded model); it is required so no
    caller can forget it. `tools` are the request's `ToolSpec`s, keyed as `asdict` gives them
    (without its deep copy of each schema: an agent lists the same tools on every turn).
    """
    tool_dicts = [{"name": t.name, "description": t.description, "parameters": t.parameters}
                  for t in tools]
    parts = {"model": model, "endpoint": (endpoint or "").rstrip("/"), "tools": tool_dicts,
             **request}
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _enable_wal(db: sqlite3.Connection, attempts: int = 50) -> None:
    """Switch a new database to WAL. The switch takes an exclusive lock without waiting on the
    busy timeout, so two runs opening the same new cache at once can see "database is locked":
    wait a moment and try again (once it is WAL, the pragma is a no-op)."""
    for attempt in range(attempts):
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            busy = getattr(err, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY,
                                                               sqlite3.SQLITE_LOCKED)
            if not busy or attempt == attempts - 1:
                raise
            time.sleep(0.01 * (attempt + 1))


class ResponseCache:
    """sqlite key → JSON value store, safe across threads and processes (WAL mode)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=30)
        _enable_wal(self._db)
        # WAL + NORMAL survives a killed process (what resume needs) without an fsync per put,
        # which would otherwise stall the event loop for every completion.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )
        self._db.commit()

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached value, or None."""
        with self._lock:
            row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store a value, scrubbed (first writer wins; values for one key are interchangeable)."""
        text = scrub(json.dumps(value))
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO responses (key, value) VALUES (?, ?)", (key, text))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


def completion_to_dict(completion: Completion) -> dict[str, Any]:
    """A completion as the cache stores it."""
    return asdict(completion)


def completion_from_dict(data: dict[str, Any]) -> Completion:
    """A cached completion back as a `Completion`."""
    data = dict(data)
    data["usage"] = Usage(**data.get("usage") or {})
    data["tool_calls"] = [ToolCall(**call) for call in data.get("tool_calls") or []]
    return Completion(**data)


def message_dict(message: Message) -> dict[str, Any]:
    """A message as it enters the cache key."""
    return asdict(message)
