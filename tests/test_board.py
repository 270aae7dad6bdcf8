"""`registry.results.board`: entries aggregated once equal `leaderboard.entries` per filter."""

from __future__ import annotations

import pandas as pd
import pytest
from result_frames import rows_frame
from test_leaderboard import FEB, MAR, _random_rows, run_rows

from registry.results.board import Board, to_entries
from registry.results.leaderboard import entries, skill_history


def _as_store(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame as the stores return it: strings categorical, times parsed."""
    strings = frame.select_dtypes(include=["object", "string"]).columns
    store = frame.astype({c: "category" for c in strings if c != "created_at"})
    store["created_at"] = pd.to_datetime(frame["created_at"], utc=True)
    store["passed"] = frame["passed"].astype("boolean")
    return store


def _mixed_rows():
    """Many skills on two models, reruns, a newer subset and a partial run, a skill without a
    repo and one whose repo holds rows under two names."""
    return (_random_rows(5, (12, 20, 9, 30, 15, 11))
            + run_rows(2, 9, run="x1") + run_rows(2, 11, run="x2", created=FEB)
            + run_rows(0, 6, run="x3", created=MAR, cases=6, suite=12)
            + run_rows(1, 9, run="p1", skill_name="part", skill_repo="me/part", repeats=2)[:30]
            + run_rows(11, 1, run="n1", skill_name="cuda", skill_repo=None, model="org/model-1")
            + run_rows(3, 8, run="t1", skill_name="two", skill_repo="me/two", model="org/model-10")
            + run_rows(3, 4, run="t2", skill_name="other", skill_repo="me/two",
                       model="org/model-10", created=FEB))


TAGS = {"me/csv": ["data"], "cuda": ["gpu", "data"], "me/s3": ["GPU"]}
FILTERS = [{}, {"skill": "S1"}, {"skill": "cuda"}, {"skill": "me/"}, {"model": "a"},
           {"model": "org/model-1"}, {"model": "MODEL-1"}, {"model": "zzz"},
           {"verdict": "helps"}, {"verdict": "too few"}, {"tag": "gpu"}, {"tag": "data"},
           {"skill": "s", "model": "b", "verdict": "no detectable"}, {"skill": "nothing"}]


@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("chunk_rows", [1, 150, 10**9])
def test_select_equals_entries_for_every_filter(categorical: bool, chunk_rows: int):
    frame = rows_frame(_mixed_rows())
    frame = _as_store(frame) if categorical else frame
    board = Board.build(frame, chunk_rows=chunk_rows)
    for filters in FILTERS:
        expected = entries(frame, tags=TAGS, **filters)
        found = to_entries(board.select(tags=TAGS, **filters))
        assert repr(found) == repr(expected), filters  # repr: NaN equals NaN
    assert any(e.rank is None for e in to_entries(board.entries))
    assert sum(e.rank is not None for e in to_entries(board.entries)) > 5


@pytest.mark.parametrize("chunk_rows", [1, 10**9])
def test_skill_history_equals_the_frame_path(chunk_rows: int):
    frame = _as_store(rows_frame(_mixed_rows()))
    board = Board.build(frame, chunk_rows=chunk_rows)
    for skill in ("me/csv", "csv", "me/two", "other", "two", "cuda", "me/s2", "nope"):
        assert repr(board.skill_history(skill)) == repr(skill_history(frame, skill)), skill
    assert len(board.skill_history("me/csv")) == 3


def test_counts_models_and_an_empty_board():
    frame = rows_frame(_mixed_rows())
    board = Board.build(frame)
    assert board.models == ("a", "b", "m", "org/model-1", "org/model-10")
    assert board.runs == frame["run_id"].nunique() == 13
    empty = Board.build(rows_frame([]))
    assert to_entries(empty.select()) == [] and empty.skill_history("me/csv") == []
    assert (empty.models, empty.runs) == ((), 0)
    with pytest.raises(ValueError, match="tags"):
        board.select(tag="gpu")
