"""What is safe to accept from an untrusted skill: findings, size limits, paths, one policy.

- `scan_folder` / `scan_text`: security findings (`Finding`, with a severity).
- `check_findings`: the one blocking policy (secrets always block; high findings unless the
  caller allows risk), raising `ScanFailed`.
- `SizeLimits` (`STORE_LIMITS`, `SCAN_LIMITS`): the one type for caps on files and bytes.
- `check_relpath` / `write_file`: paths that cannot escape, written without following links.

The rules (many compiled regexes) load on first use of `scan_folder` / `scan_text`, so code that
needs only the limits or the paths does not pay for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from registry.scan.findings import (
    SEVERITIES,
    Finding,
    Severity,
    has_secrets,
    is_secret,
    summarize,
    worst,
)
from registry.scan.limits import SCAN_LIMITS, STORE_LIMITS, Budget, SizeLimits
from registry.scan.paths import check_relpath, write_file
from registry.scan.policy import ScanFailed, check_findings, describe

if TYPE_CHECKING:
    from registry.scan.rules import scan_text
    from registry.scan.scanner import scan_folder

__all__ = [
    "SCAN_LIMITS", "SEVERITIES", "STORE_LIMITS", "Budget", "Finding", "ScanFailed", "Severity",
    "SizeLimits", "check_findings", "check_relpath", "describe", "has_secrets", "is_secret",
    "scan_folder", "scan_text", "summarize", "worst", "write_file",
]


def __getattr__(name: str) -> Any:
    """`scan_folder` and `scan_text`, loaded on first use."""
    if name == "scan_folder":
        from registry.scan.scanner import scan_folder

        return scan_folder
    if name == "scan_text":
        from registry.scan.rules import scan_text

        return scan_text
    raise AttributeError(f"module 'registry.scan' has no attribute {name!r}")
