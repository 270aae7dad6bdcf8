"""Scan a skill folder: layout rules for every entry, content rules for every text file.

A scan reports findings; it never proves a skill safe. Symlinks are reported, never followed; the
walk stops at the first exceeded limit (`SCAN_LIMITS`). The content rules live in `rules.py`, the
policy that turns findings into a refusal in `policy.py`.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from registry.errors import InvalidSkill
from registry.scan.findings import Finding, Severity, has_secrets, sort_key, summarize, worst
from registry.scan.limits import SCAN_LIMITS, SizeLimits
from registry.scan.policy import ScanFailed, check_findings
from registry.scan.rules import scan_text

__all__ = ["Finding", "ScanFailed", "Severity", "check_findings", "has_secrets", "scan_folder",
           "scan_text", "summarize", "worst"]


_IMAGE_MAGIC = {".png": b"\x89PNG", ".jpg": b"\xff\xd8\xff", ".jpeg": b"\xff\xd8\xff",
                ".gif": b"GIF8", ".webp": b"RIFF", ".ico": b"\x00\x00\x01\x00"}
_BINARY_EXT = set(".exe .dll .so .dylib .bin .o .a .pyc .pyo .class .jar .war .wasm .zip .tar .gz"
                  " .tgz .bz2 .xz .7z .rar .whl .egg .deb .rpm .msi .dmg .iso .apk .pkl .pickle"
                  " .pt .pth .ckpt .npy .npz .elf .com .scr".split())


def scan_folder(root: Path, limits: SizeLimits = SCAN_LIMITS) -> list[Finding]:
    """Scan a skill folder: layout rules for every entry, content rules for every text file.

    Symlinks inside the folder are reported, never followed. `root` itself may be a link (agents
    link installed skills): its target is scanned and a low finding says so. The walk stops once
    more than `limits.max_files` entries (files and folders) or `limits.max_total_bytes` are
    seen, so 100k files cost about as much as 500. A `.git` folder is reported, not walked.

    Raises:
        InvalidSkill: `root` does not exist or is not a folder.
    """
    findings: list[Finding] = []
    if os.path.islink(root):
        findings.append(Finding("symlink", "low", f"the skill folder links to "
                                f"{os.readlink(root)!r}; scanned the target", "."))
    if not os.path.isdir(root):
        raise InvalidSkill(f"{root}: no such folder", hint="hubskills scan ./skills/<name>")
    total = 0
    for rel, full, st in _walk(str(root), limits.max_files):
        if st is None:
            findings.append(Finding("too-many-files", "high", f"more than {limits.max_files} "
                                    "files and folders; scan stopped early", "."))
            break
        total += st.st_size if stat.S_ISREG(st.st_mode) else 0
        if total > limits.max_total_bytes:
            findings.append(Finding("folder-too-large", "high", f"more than "
                                    f"{limits.max_total_bytes} bytes in total; scan stopped", "."))
            break
        shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in rel)
        if shown != rel:
            findings.append(Finding("unsafe-filename", "medium",
                                    "file name holds control or invisible characters", shown))
        findings += _entry_findings(shown, full, st, limits)
    return sorted(findings, key=sort_key)


def _walk(root: str, max_entries: int) -> Iterator[tuple[str, str, os.stat_result | None]]:
    """Yield (path inside root, full path, lstat) per non-folder entry; past the budget, stat None.

    Folders count against `max_entries`; os.scandir is read lazily, never listed in full.
    """
    stack, seen = [(root, "")], 0
    while stack:
        full_dir, rel_dir = stack.pop()
        with os.scandir(full_dir) as it:
            entries = sorted(islice(it, max_entries - seen + 1), key=lambda e: e.name)
        dirs = []
        for entry in entries:
            if (seen := seen + 1) > max_entries:
                yield "", "", None
                return
            rel = rel_dir + entry.name
            # A .git folder is VCS metadata, not part of the skill: reported, not walked.
            if not entry.is_dir(follow_symlinks=False) or entry.name == ".git":
                yield rel, entry.path, entry.stat(follow_symlinks=False)
            else:
                dirs.append((entry.path, rel + "/"))
        stack.extend(reversed(dirs))


def _entry_findings(rel: str, full: str, st: os.stat_result, limits: SizeLimits) -> list[Finding]:
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(full)  # reads the link itself, never what it points to
        inside = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
        outside = target.startswith("/") or inside.startswith("..")
        where = " (outside the skill folder)" if outside else ""
        return [Finding("symlink", "high", f"symlink to {target!r}{where}; not followed", rel)]
    if stat.S_ISDIR(st.st_mode):
        return [Finding("vcs-folder", "low", "git metadata, not scanned; it must not be "
                        "installed or published", rel)]
    if not stat.S_ISREG(st.st_mode):
        return [Finding("special-file", "high", "not a regular file (device, FIFO or socket)",
                        rel)]
    if st.st_size > limits.max_file_bytes:
        return [Finding("oversized-file", "high", f"{st.st_size} bytes, over the "
                        f"{limits.max_file_bytes}-byte limit; not read", rel)]
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:  # O_NOFOLLOW: no symlink can be swapped in between the lstat and the read
        with os.fdopen(os.open(full, flags), "rb") as f:
            data = f.read(limits.max_file_bytes + 1)
    except OSError as err:
        return [Finding("unreadable-file", "medium", f"cannot be read ({err.strerror})", rel)]
    if len(data) > limits.max_file_bytes:
        return [Finding("oversized-file", "high", "grew past the size limit while read", rel)]
    return _content_findings(rel, data)


def _content_findings(rel: str, data: bytes) -> list[Finding]:
    ext = posixpath.splitext(rel)[1].lower()
    if ext in _IMAGE_MAGIC and rel.startswith("assets/"):
        if data.startswith(_IMAGE_MAGIC[ext]):
            return []
        return [Finding("binary-file", "medium", f"does not look like a {ext} image", rel)]
    if ext in _BINARY_EXT or ext in _IMAGE_MAGIC or b"\0" in data:
        return [Finding("binary-file", "medium",
                        "binary file: agents may run it and nobody can review it", rel)]
    try:
        return scan_text(rel, data.decode("utf-8"))
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1  # still scanned: bad bytes must not hide text
        return [Finding("invalid-utf8", "medium", "not valid UTF-8 text", rel, line),
                *scan_text(rel, data.decode("utf-8", errors="replace"))]
