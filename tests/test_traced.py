"""`traced.traced_peak` measures what it says, and no other test traces in the suite's process
(where `tracemalloc.stop()` can crash Python 3.11: see `traced`)."""

from __future__ import annotations

import re

from conftest import REPO_ROOT
from traced import traced_peak


def test_the_peak_is_what_the_measured_code_allocated():
    peak, size = traced_peak("chunk = 16", "data = bytes(chunk * 2**20); result = len(data)")
    assert size == 16 * 2**20 and 16 * 2**20 <= peak < 18 * 2**20
    small, _ = traced_peak("data = bytes(64 * 2**20)", "result = len(data)")
    assert small < 2**20  # what the setup allocated is not counted


def test_no_test_starts_or_stops_tracing_in_the_suites_process():
    calls = re.compile(r"tracemalloc\.(start|stop)\(")
    found = [path.name for path in sorted((REPO_ROOT / "tests").rglob("*.py"))
             if path.name not in {"traced.py", "test_traced.py"}
             and calls.search(path.read_text(encoding="utf-8"))]
    assert found == []
