"""What every scan rule shares: the `Finding` record, severities, and one file as a `Doc`.

Severities say what a finding proves (docs/pulling.md, the scan findings paragraph):

- high: a demonstrated harm: secret or user data sent out, code downloaded and run, files
  destroyed, instructions hidden from people, a live credential, a symlink out of the folder.
- medium: something a reviewer must read before trusting it (a key file read, a binary, a link
  out of the folder, an unrestricted tool grant).
- low: suspicious only in context (a dangerous command quoted in a warning, hidden text).
- info: worth knowing, proves nothing (the environment handed to a subprocess, a placeholder
  credential, a comment in a template).
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Iterable

from registry.scan.findings import Finding, Severity

PROSE_EXT = {".md", ".markdown", ".mdx", ".txt", ".rst"}
SCRIPT_EXT = {".sh", ".bash", ".zsh", ".fish", ".py", ".js", ".mjs", ".cjs", ".ts", ".ps1",
              ".psm1", ".rb", ".pl", ".php", ".bat", ".cmd", ".lua"}
_WARNING_WORDS = re.compile(r"\b(?:never|don't|do not|avoid|instead of|dangerous|unsafe)\b", re.I)


class Doc:
    """One text file plus what the rules share: its kind and an offset-to-line index."""

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text, self.lower = path, text, text.lower()
        self.ext = posixpath.splitext(path)[1].lower()
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.is_prose = self.ext in PROSE_EXT
        self.is_script = self.ext in SCRIPT_EXT or path.startswith("scripts/")

    def has(self, needles: Iterable[str]) -> bool:
        """Whether the lowercased text holds any needle (a cheap filter before a regex)."""
        return any(needle in self.lower for needle in needles)

    def line(self, offset: int) -> int:
        """The 1-based line number of a character offset."""
        return bisect.bisect_right(self.newlines, offset - 1) + 1

    def find(self, code: str, severity: Severity, message: str, offset: int) -> Finding:
        """A finding at `offset` in this file."""
        return Finding(code, severity, message, self.path, self.line(offset))

    def is_warning(self, text: str, offset: int, eol: int) -> bool:
        """Whether, in prose, the command at `offset` is quoted in backticks on a line that warns
        against it ("never", "do not", "avoid"...)."""
        bol = text.rfind("\n", 0, offset) + 1
        return (self.is_prose and text.count("`", bol, offset) % 2 == 1
                and bool(_WARNING_WORDS.search(text, bol, eol)))


def clip(text: str, limit: int = 80) -> str:
    """One line of at most `limit` characters, whitespace collapsed."""
    text = " ".join(text[: limit * 4].split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
