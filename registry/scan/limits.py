"""`SizeLimits`: the one type for caps on a skill's files (bytes per file, in total, count).

Two instances serve everyone: `STORE_LIMITS` is what a store accepts on publish and what a pull
or an upload installs (past it, `UnsafeSkill`); `SCAN_LIMITS` bounds what the scanner reads
(past it, the scan stops and reports a high finding). Callers with their own caps (the Space's
uploads, a test's tiny store) make their own instance.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from registry.errors import UnsafeSkill

LARGE_HINT = "keep large assets out of skills; link to them instead"


@dataclass(frozen=True)
class SizeLimits:
    """Caps on a skill's files, checked before anything is downloaded and again on disk."""

    max_file_bytes: int = 20 * 1024 * 1024
    max_total_bytes: int = 100 * 1024 * 1024
    max_files: int = 1000

    def check(self, sizes: Iterable[tuple[str, int]], *, hint: str = LARGE_HINT) -> None:
        """Refuse a listing of (path, size) over any cap.

        Raises:
            UnsafeSkill: too many files, a file too large, or too many bytes in total.
        """
        listed = list(sizes)
        if len(listed) > self.max_files:
            raise UnsafeSkill(f"the skill has {len(listed)} files (max {self.max_files})",
                              hint=hint)
        budget = self.budget(hint=hint)
        for rel, size in listed:
            budget.take(rel, size)

    def budget(self, *, hint: str = LARGE_HINT) -> Budget:
        """A running count for files read one at a time."""
        return Budget(self, hint)


class Budget:
    """Counts files and bytes as they are read; refuses the first one past a cap."""

    def __init__(self, limits: SizeLimits, hint: str = LARGE_HINT) -> None:
        self.limits, self.hint = limits, hint
        self.files = self.total = 0

    def take(self, rel: str, size: int) -> None:
        """Account for one file of `size` bytes.

        Raises:
            UnsafeSkill: the file, the running total or the file count is over its cap.
        """
        self.files += 1
        self.total += size
        if size > self.limits.max_file_bytes:
            raise UnsafeSkill(f"{rel} is {size} bytes (max {self.limits.max_file_bytes} per "
                              "file)", hint=self.hint)
        if self.total > self.limits.max_total_bytes:
            raise UnsafeSkill(f"the skill is over {self.limits.max_total_bytes} bytes in total",
                              hint=self.hint)
        if self.files > self.limits.max_files:
            raise UnsafeSkill(f"the skill has more than {self.limits.max_files} files",
                              hint=self.hint)


STORE_LIMITS = SizeLimits()
SCAN_LIMITS = SizeLimits(max_file_bytes=1_000_000, max_total_bytes=20_000_000, max_files=500)
