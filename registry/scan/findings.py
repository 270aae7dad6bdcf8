"""What a scan reports: `Finding`, severities, and summaries of a list of findings.

What each severity proves is stated in `_doc` (and docs/pulling.md's scan paragraph).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Severity = Literal["high", "medium", "low", "info"]
SEVERITIES: tuple[Severity, ...] = ("high", "medium", "low", "info")
RANK = {"high": 3, "medium": 2, "low": 1, "info": 0}


@dataclass(frozen=True)
class Finding:
    """One finding: a stable rule `code`, its severity, and where (posix path inside the skill)."""

    code: str
    severity: Severity
    message: str
    path: str
    line: int | None = None

    @property
    def where(self) -> str:
        """`path:line`, or the path alone."""
        return f"{self.path}:{self.line}" if self.line else self.path


def summarize(findings: Iterable[Finding]) -> dict[str, int]:
    """Count findings per severity; every severity is present, zero or not."""
    counts: dict[str, int] = dict.fromkeys(SEVERITIES, 0)
    for finding in findings:
        counts[finding.severity] += 1
    return counts


def worst(findings: Iterable[Finding]) -> Severity | None:
    """Return the highest severity among the findings, or None when there are none."""
    return max((f.severity for f in findings), key=RANK.__getitem__, default=None)


def is_secret(finding: Finding) -> bool:
    """Whether the finding is a committed credential."""
    return finding.code.startswith("secret-")


def has_secrets(findings: Iterable[Finding]) -> bool:
    """Tell whether any finding is a committed credential (nothing carrying one is accepted)."""
    return any(is_secret(f) for f in findings)


def sort_key(f: Finding) -> tuple[str, int, int, str]:
    """Findings in reading order: path, line, worst first, then code."""
    return (f.path, f.line or 0, -RANK[f.severity], f.code)
