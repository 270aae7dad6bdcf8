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


def test_a_line_the_schema_cannot_take_leaves_out_that_line_alone():
    """Red-team round 4 and a review: one bad value (a string repeat, an int over 64 bits, a
    byte not UTF-8, a lone surrogate escape) emptied every row parsed with it or crashed the
    board for everyone; only its own line is left out now."""
    from registry.stores.frame import parse_jsonl

    good = rows_to_jsonl([ResultRow(run_id="r", skill_name="s", model="m", arm="skill",
                                    case_id=f"c{i}", passed=True) for i in range(3)]).encode()
    first, *rest = good.splitlines(keepends=True)
    for bad in (first.replace(b'"repeat":0', b'"repeat":"0"'),
                first.replace(b'"repeat":0', b'"repeat":%d' % 2**70),
                first.replace(b'"case_id":"c0"', b'"case_id":"c0\xff"'),
                first.replace(b'"case_id":"c0"', b'"case_id":"c0\\ud800"')):
        assert bad != first
        table = parse_jsonl(bad + b"".join(rest))
        assert table["case_id"].to_pylist() == ["c1", "c2"], bad
        table.to_pandas()  # converts: nothing left that pandas refuses
