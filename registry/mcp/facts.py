"""What a `skills/list` entry needs from a revision besides its digests, kept per content.

Parsing a SKILL.md's frontmatter (the guarded YAML loader) and scanning the files were most of
a fresh server's first `skills/list` page. Both depend on the files' bytes alone, so they are
kept by *content key*: the SHA-256 of every path with its digest and exec bit, and of
`FACTS_VERSION` and hubskills' version (a new scanner or parser computes them again). They are
kept in memory and on disk, one JSON file each under `<HUBSKILLS_HOME>/cache/revision-facts/`
(`mcp-<key>.json`, beside `stores.revision_facts`' files), so a server started later answers a
first walk from them; a read-only home keeps them in memory alone.

Digests never come from here. The catalog hashes the bytes it serves whenever it reads a
revision from the store and looks the facts up by the key those digests make: a file that
changed since the facts were kept makes another key, so its entry is computed again and is
never served with a stale digest or frontmatter. A kept file names its own key, so a file
copied under another key's name is not used either.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from registry._version import __version__

FACTS_VERSION = 1  # bump when what is kept, or how it is computed, changes
_HEADER = f"hubskills-mcp-facts {FACTS_VERSION} {__version__}\n"
MEMORY_MAX = 16_384  # entries kept in memory (the oldest go first; the disk keeps them all)
_CHUNK = 16_384  # bytes a facts file is read by


def content_key(digests: dict[str, str], executable: Iterable[str]) -> str:
    """The key of a revision's content: its paths, their digests and its exec bits."""
    text = "".join([_HEADER, *[f"{path}\0{digests[path]}\n" for path in sorted(digests)],
                    *[f"{path}\0+x\n" for path in sorted(executable)]])
    return hashlib.sha256(text.encode()).hexdigest()


class FactsCache:
    """Facts per content key: in memory, and under `folder` when given (thread-safe)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._prefix = f"{folder}{os.sep}mcp-" if folder is not None else None  # a str: a
        # fresh server's first read of a revision reads its file (no pathlib on that path)
        self._memory: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path | None:
        return Path(f"{self._prefix}{key}.json") if self._prefix is not None else None

    def get(self, key: str) -> dict[str, Any]:
        """What is kept for `key` ({} for nothing, or a file that is damaged or not its own)."""
        with self._lock:
            if (hit := self._memory.get(key)) is not None:
                return hit
        if self._prefix is None:
            return {}
        try:
            data = json.loads(_read(f"{self._prefix}{key}.json"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.pop("key", None) != key:
            return {}
        with self._lock:
            self._remember(key, data)
        return data

    def put(self, key: str, facts: dict[str, Any], *, disk: bool = True) -> dict[str, Any]:
        """Keep `facts` for `key` (replacing what was), on disk too unless `disk` is false
        (the caller writes them once it has them all); returns them."""
        with self._lock:
            self._remember(key, facts)
        path = self._path(key) if disk else None
        if path is not None:
            try:
                _write(path, json.dumps({**facts, "key": key}, sort_keys=True))
            except OSError:  # a read-only home: memory alone
                pass
        return facts

    def forget(self) -> None:
        """Drop what is in memory (the disk keeps it): what a server started now would see."""
        with self._lock:
            self._memory.clear()

    def _remember(self, key: str, facts: dict[str, Any]) -> None:
        self._memory[key] = facts
        self._memory.move_to_end(key)
        while len(self._memory) > MEMORY_MAX:
            self._memory.popitem(last=False)


def _read(path: str) -> bytes:
    """A file's bytes in three system calls (open, read, close) for a file under `_CHUNK`,
    where `open()` takes eight (fstat, isatty, lseek, a second read): a fresh server's first
    read of a revision reads its facts file."""
    fd = os.open(path, os.O_RDONLY)  # not inherited (PEP 446)
    try:
        data = os.read(fd, _CHUNK)
        if len(data) == _CHUNK:  # larger: the rest, to the end
            data += b"".join(iter(lambda: os.read(fd, _CHUNK), b""))
        return data
    finally:
        os.close(fd)


def _write(path: Path, text: str) -> None:
    """Replace `path` by a rename, unsynced: a cache file lost or cut short in a crash reads
    as damaged and is computed again (an fsync per entry would cost a first walk more)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
