"""`registry.stores.frame`: the columnar cache of results files (more in test_local_store)."""

from __future__ import annotations

import threading
from pathlib import Path

from registry.results.runs import ResultRow, rows_to_jsonl
from registry.stores.frame import FETCHERS, load_frame


def test_missing_sources_are_fetched_at_once_not_one_after_another(tmp_path: Path):
    # Each fetch waits until FETCHERS fetches are under way: one at a time, the first would
    # wait forever (the barrier's timeout turns that into a failure).
    started = threading.Barrier(FETCHERS, timeout=10)
    count = FETCHERS * 2

    def fetch(i: int) -> Path:
        started.wait()
        path = tmp_path / f"run-{i}.jsonl"
        path.write_text(rows_to_jsonl([ResultRow(run_id=f"r{i}", skill_name="s", model="m",
                                                 arm=arm, case_id="c", passed=True)
                                       for arm in ("baseline", "skill")]))
        return path

    sources = {f"run-{i}:1": (lambda i=i: fetch(i)) for i in range(count)}
    frame = load_frame(sources, tmp_path / "cache")
    assert len(frame) == 2 * count and frame["run_id"].nunique() == count
    parsed = {key: (lambda: (_ for _ in ()).throw(AssertionError("fetched again")))
              for key in sources}
    assert len(load_frame(parsed, tmp_path / "cache")) == 2 * count  # parsed once, kept
