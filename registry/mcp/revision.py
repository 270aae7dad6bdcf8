"""One revision of a skill as the MCP server holds it: its files' bytes, their digests and the
content key its kept facts go by; how a file is read from a folder and typed, and how a revision
is scanned."""

from __future__ import annotations

import functools
import hashlib
import mimetypes
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from registry.mcp.facts import content_key
from registry.mcp.uris import file_uri


@dataclass(frozen=True)
class Revision:
    """One fetched revision of a skill: its files' bytes, keyed by posix path, and its
    frontmatter as the SKILL.md says it."""

    repo: str
    sha: str
    version: str | None
    name: str
    frontmatter: dict[str, Any]
    files: dict[str, bytes]
    executable: frozenset[str] = frozenset()  # paths with an exec bit
    digests: dict[str, str] = field(default_factory=dict)  # path -> "sha256:..." (set on fetch)
    key: str = ""  # the content key of `files` and `executable` (`facts.content_key`)

    def __post_init__(self) -> None:
        if not self.digests:  # a revision never changes: its digests are computed once
            self.digests.update({path: "sha256:" + hashlib.sha256(data).hexdigest()
                                 for path, data in self.files.items()})
        if not self.key:
            object.__setattr__(self, "key", content_key(self.digests, self.executable))

    def uri(self, path: str = "SKILL.md") -> str:
        """The `skill://` URI of `path` in this revision."""
        return file_uri(self.repo, self.sha, self.name, path)


class ServedFiles(dict[str, tuple[bytes, str]]):
    """(bytes, MIME type) of files by their exact URI (a read of one is a lookup), added and
    dropped a whole revision at a time."""

    def add(self, rev: Revision) -> None:
        """Every file of `rev`."""
        root = rev.uri("")
        self.update({root + path: (data, mime_type(path)) for path, data in rev.files.items()})

    def drop(self, rev: Revision) -> None:
        """Every file of `rev` out (nothing when it is not here)."""
        root = rev.uri("")
        if root + "SKILL.md" in self:
            for path in rev.files:
                self.pop(root + path, None)


def read_folder(root: Path, paths: list[str]) -> tuple[dict[str, bytes], frozenset[str]]:
    """The bytes of `paths` under `root`, and those with an exec bit."""
    files = {rel: (root / rel).read_bytes() for rel in paths}
    return files, frozenset(rel for rel in paths if (root / rel).stat().st_mode & 0o111)


@functools.lru_cache(maxsize=4096)
def mime_type(path: str) -> str:
    """The MIME type a file is served with (markdown and unknown text as the extension says)."""
    if path.endswith(".md"):
        return "text/markdown"
    guessed, _ = mimetypes.guess_type(path)
    return guessed or "application/octet-stream"


def scan_summary(rev: Revision) -> dict[str, Any]:
    """The scan's findings on `rev`'s files, by severity (what `hubskills scan` would say of
    them, written to a temporary folder)."""
    from registry.scan import scan_folder  # only here: even a kept module's import statement
    # costs more than the rest of a kept scan's lookup (the catalog calls this on a miss)

    with tempfile.TemporaryDirectory(prefix="hubskills-mcp-scan-") as tmp:
        root = Path(tmp) / rev.name
        for rel, data in rev.files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
        findings = scan_folder(root)
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    return {"findings": len(findings), "by_severity": counts}
