"""The one blocking policy, used by publish, pull and `hubskills scan` alike.

A committed secret always blocks, whatever the caller allows; findings at or above `fail_on`
(high by default) block unless the caller accepts the risk (`--allow-risky`). Either way the
error is a `ScanFailed` carrying the blocking findings, so every command can list them.
"""

from __future__ import annotations

from registry.errors import UnsafeSkill
from registry.scan.findings import RANK, Finding, Severity, is_secret


class ScanFailed(UnsafeSkill):
    """A scan found something the caller refuses; `findings` holds the blocking ones."""

    def __init__(self, message: str, *, findings: list[Finding], threshold: Severity,
                 hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.findings = findings
        self.threshold = threshold


def check_findings(findings: list[Finding], fail_on: Severity = "high", *,
                   subject: str = "the skill", action: str = "accepted",
                   allow_risky: bool = False, secret_hint: str | None = None,
                   risky_hint: str | None = None) -> None:
    """Raise `ScanFailed` when the findings block `action`; return quietly otherwise.

    Args:
        findings: what the scan found.
        fail_on: the lowest severity that blocks.
        subject: what was scanned, for the message (`acme/x@3f2a9c1d`, a folder).
        action: what is refused, for the message (`published`, `installed`).
        allow_risky: accept findings at or above `fail_on` (never secrets).
        secret_hint, risky_hint: the next step to print for each kind of refusal.

    Raises:
        ScanFailed: a secret, or (without `allow_risky`) a finding at or above `fail_on`.
    """
    secrets = [f for f in findings if is_secret(f)]
    if secrets:
        raise ScanFailed(f"{subject} contains secrets ({describe(secrets)}); refused: secrets "
                         f"are never {action}, even with --allow-risky", findings=secrets,
                         threshold="high",
                         hint=secret_hint or "remove the secret and revoke it at its issuer")
    blocking = [f for f in findings if RANK[f.severity] >= RANK[fail_on]]
    if blocking and not allow_risky:
        raise ScanFailed(f"{subject} has {len(blocking)} finding(s) at or above {fail_on} "
                         f"severity: {describe(blocking)}", findings=blocking, threshold=fail_on,
                         hint=risky_hint or "fix or remove the files listed above; --fail-on "
                                            "sets the bar")


def describe(findings: list[Finding], limit: int = 3) -> str:
    """`path:line code` of the first few findings, and how many more there are."""
    shown = [f"{f.where} {f.code}" for f in findings[:limit]]
    more = f" and {len(findings) - limit} more" if len(findings) > limit else ""
    return "; ".join(shown) + more
