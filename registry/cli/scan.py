"""`hubskills scan`: report security findings in a skill folder."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict
from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._skill_ref import (
    SkillSource,
    looks_like_reference,
    no_such_folder,
    skill_folder,
)
from registry.errors import InvalidSkill, hint_command
from registry.scan import (
    SEVERITIES,
    Finding,
    Severity,
    check_findings,
    scan_folder,
    summarize,
    worst,
)

#: Hook for the REPO form: maps "ns/name[@version]" to a context manager yielding a local folder
#: (fetched to a temporary directory and removed on exit). Wired by the lead through
#: `make_scan_command(resolver=...)`; until then a REPO argument is a clear error.
Resolver = Callable[[str], AbstractContextManager[Path]]

NOTE = "A scan reports findings; it does not prove a skill is safe."


def resolve_target(target: str, resolver: Resolver | None) -> AbstractContextManager[Path]:
    """Turn PATH or REPO into a local folder: paths win, then REPO through `resolver`."""
    path = Path(target)
    if path.exists() or path.is_symlink():
        return nullcontext(path)
    if (looks_like_reference(target) or SkillSource.is_git(target)) and resolver is not None:
        return resolver(target)  # a registry reference or a git source, fetched
    if looks_like_reference(target):
        raise InvalidSkill(f"{target}: no such folder, and scanning registry skills (ns/name) "
                           "is not available yet.",
                           hint=f"{hint_command('pull', target)}, then hubskills scan the pulled "
                                "folder")
    raise no_such_folder(target, "scan")


def make_scan_command(resolver: Resolver | None = None) -> click.Command:
    """Build the `scan` command; `resolver` enables the REPO (ns/name) form."""

    @click.command("scan")
    @click.argument("target", metavar="PATH|NS/NAME[@VERSION]|GIT-SOURCE")
    @click.option("--json", "as_json", is_flag=True, help="Print findings as JSON.")
    @click.option("--fail-on", type=click.Choice(SEVERITIES), default="high",
                  show_default=True, help="Exit 1 when a finding is at or above this severity.")
    def scan_command(target: str, as_json: bool, fail_on: Severity) -> None:
        """Scan a skill folder for hidden instructions, download-and-run, secrets and more.

        \b
        Examples:
          hubskills scan hubskills/agent-skill-md
          hubskills scan ./my-skill --fail-on medium --json
        """
        with resolve_target(target, resolver) as folder:
            findings = scan_folder(folder)
        _render(target, findings, fail_on, as_json)
        check_findings(findings, fail_on, subject=target, action="accepted",
                       risky_hint="fix or remove the files listed above; --fail-on sets the bar")

    return scan_command


def _render(target: str, findings: list[Finding], fail_on: Severity, as_json: bool) -> None:
    counts = summarize(findings)
    if as_json:
        out.as_json({"target": target, "findings": [asdict(f) for f in findings],
                     "summary": counts, "worst": worst(findings), "fail_on": fail_on,
                     "note": NOTE})
        return
    if findings:
        out.table(["severity", "where", "finding"],
                  [(f.severity, escape(f"{f.path}:{f.line}" if f.line else f.path),
                    escape(f"{f.code}: {f.message}")) for f in findings],
                  wrap=["finding"])  # what was found is what a scan is read for
        noun = "finding" if len(findings) == 1 else "findings"
        out.result(f"{len(findings)} {noun} ("
                   + ", ".join(f"{counts[s]} {s}" for s in SEVERITIES) + ")")
    else:
        out.result("No findings.")
    out.result(NOTE)


def fetch_from_registry(spec: str) -> AbstractContextManager[Path]:
    """`ns/name[@ref]` from the configured registry in a temp folder, fetched as a pull does
    (not counted as a download; not refused for its findings: reporting them is the point)."""
    return skill_folder(spec, command="scan", scan=False)


scan_command = make_scan_command(resolver=fetch_from_registry)
