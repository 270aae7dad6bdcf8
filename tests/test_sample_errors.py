"""One mapping of a sample's errors to its failed row (`evaluation/sample_errors.py`), used by
the chat engine and agent mode alike."""

from __future__ import annotations

import pytest

from registry.agent.bounds import WorkspaceOverLimit
from registry.errors import ContextOverflow, HubskillsError, ProviderError
from registry.evaluation.sample_errors import failed_row
from registry.results.runs import ResultRow
from registry.sandbox.session import SessionNotStarted


def _row() -> ResultRow:
    return ResultRow(run_id="r", skill_name="s", model="local/m", arm="skill", case_id="c",
                     cached=True, cost_usd=0.0)


@pytest.mark.parametrize(("exc", "kind", "graded"), [
    (ContextOverflow("prompt too long"), "arm", True),
    (WorkspaceOverLimit("too many files"), "arm", True),
    (ProviderError("502 after retries"), "transport", False),
    (SessionNotStarted("the sandbox did not start"), "check", False),
])
def test_each_sample_error_makes_its_kind_of_failed_row(exc, kind, graded):
    row = failed_row(_row(), exc)
    assert (row.error, row.error_kind) == (str(exc), kind)
    assert row.is_error is not graded  # an arm's failure counts, as a fail
    assert (row.passed, row.score) == ((False, 0.0) if graded else (None, None))
    assert row.cached is (kind != "transport")  # a lost answer came from no cache


def test_an_error_no_sample_records_propagates():
    with pytest.raises(TypeError, match="HubskillsError"):
        failed_row(_row(), HubskillsError("not a sample's error"))
