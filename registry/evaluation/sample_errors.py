"""One mapping of what can go wrong in a sample to the failed row that records it.

Three kinds, told apart because they count differently (see `ResultRow.error_kind`):

- `arm`: the arm itself failed (its context overflowed, its workspace outgrew its bounds, it
  kept calling tools, the model refused): a graded failure of that arm.
- `transport`: no answer came (the provider failed after its retries): a lost sample, out of
  pass rates, asked again on `--resume`.
- `check`: the checks could not start (the sandbox session did not): not the model's doing.
"""

from __future__ import annotations

from registry.errors import ContextOverflow, ProviderError
from registry.results.runs import ResultRow


def arm_failure(row: ResultRow, reason: str) -> ResultRow:
    """`row` as a graded failure of its arm, for `reason`."""
    row.error, row.error_kind, row.passed, row.score = reason, "arm", False, 0.0
    return row


def failed_row(row: ResultRow, exc: Exception) -> ResultRow:
    """`row` as the failed sample `exc` made of it (see the module's three kinds).

    Raises:
        TypeError: `exc` is none of the errors a sample records (a bug: let it propagate).
    """
    if isinstance(exc, ContextOverflow):
        return arm_failure(row, str(exc))
    if isinstance(exc, ProviderError):  # no answer: none came from the cache either
        row.error, row.error_kind, row.cached = str(exc), "transport", False
        return row
    # Agent mode's own errors: their modules are loaded only by an agent-mode run.
    from registry.agent.bounds import WorkspaceOverLimit
    from registry.sandbox.session import SessionNotStarted

    if isinstance(exc, WorkspaceOverLimit):
        return arm_failure(row, str(exc))
    if isinstance(exc, SessionNotStarted):  # before any command of the agent's
        row.error, row.error_kind = str(exc), "check"
        return row
    raise TypeError(f"a sample does not record {type(exc).__name__} as a failed row") from exc
