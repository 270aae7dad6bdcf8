"""A content-addressed response cache in sqlite, so reruns and resumed runs cost nothing.

The key is a hash of everything that determines a completion: the model reference, the full
request (messages, tools, sampling parameters, seed) and the repeat index, so independent
repeats never share an answer.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any


def cache_key(**parts: Any) -> str:
    """sha256 over the canonical JSON of the request's parts."""
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class ResponseCache:
    """sqlite key → JSON value store, safe across threads and processes (WAL mode)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
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
        """Store a value (first writer wins; values for one key are interchangeable)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO responses (key, value) VALUES (?, ?)",
                (key, json.dumps(value)),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
