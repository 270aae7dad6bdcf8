"""The sandbox inside a shard's Job: the same probe and policy as a local run, and how the
shard tells the client what it found.

A shard whose run executes code (code checks, agent mode) probes the sandbox exactly as a local
`hubskills eval` does (`registry.sandbox.choose`), before downloading the skill or calling any
model. It reports the outcome as one log line the client reads back:

    hubskills-sandbox SHARD STATUS       code runs there ("bwrap"), or the manifest's status
    hubskills-no-sandbox SHARD REASON    no sandbox works in the Job: the shard stops (exit 3)

`--sandbox none` never runs on a Job: the client refuses it, and a shard reading it from a plan
refuses it too.
"""

from __future__ import annotations

from registry.config import Settings
from registry.errors import HubskillsError
from registry.sandbox import SKIPPED_BY_USER, CodeChecks, SandboxUnavailable, choose

SANDBOX_LINE = "hubskills-sandbox"
NO_SANDBOX_LINE = "hubskills-no-sandbox"
EXIT_NO_SANDBOX = 3  # the shard's exit code when no sandbox works in its Job (not retried)
NO_SANDBOX = "no sandbox in the Job"  # how the run's note starts when shards stopped for it


def code_status(has_code: bool, code_checks: str) -> str | None:
    """The manifest's `code_checks` known before any Job runs (None: the Jobs' probe says)."""
    if not has_code:
        return "none in the suite"
    return SKIPPED_BY_USER if code_checks == "skip" else None


def probe(settings: Settings, *, has_code: bool, sandbox: str, code_checks: CodeChecks) -> str:
    """In the shard: the code-check status a local run would record (e.g. "bwrap").

    Raises:
        SandboxUnavailable: code must run and no sandbox works in this Job (`.reason` says why).
        HubskillsError: `--sandbox none` (never on a Job).
    """
    if sandbox == "none":
        raise HubskillsError("--sandbox none is refused on Hugging Face Jobs",
                             hint="hubskills eval SKILL --on jobs")
    return choose(sandbox, settings, has_code=has_code, code_checks=code_checks,
                  folder=None).status


def reason_of(error: HubskillsError) -> str:
    """The probe's reason, for the log line and the client."""
    return error.reason if isinstance(error, SandboxUnavailable) else str(error)


def reported(lines: list[str]) -> tuple[str | None, str | None]:
    """(sandbox status, reason it stopped) from one shard's log lines; None where not said."""
    status = stopped = None
    for line in lines:
        word, _, rest = line.partition(" ")
        if word == SANDBOX_LINE:
            status = rest.partition(" ")[2].strip() or None
        elif word == NO_SANDBOX_LINE:
            stopped = rest.partition(" ")[2].strip() or "no sandbox works in the Job"
    return status, stopped
