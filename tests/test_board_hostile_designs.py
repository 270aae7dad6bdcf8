"""A row's `design` is its writer's text: the boards survive any design, on the fake Hub too.

A red-team round (24): the board parsed every row's design label with `json.loads`, popped keys
off it and built the plan's arrays (cases x 2 arms x the design's runs) with no bound. A pull
request on the results dataset whose rows carried `"design": "[1]"` raised in the Space's
Pending view and `leaderboard --pending` for every visitor; `{"kind": "adaptive", "runs": N}`
asked N x cases x 2 bytes three times over of the process serving the board (a `runs` of 10**9
is gigabytes: the Space killed for memory on each click of "Show pending submissions"). A
design no hubskills could have run is no design on the board now (its replay refuses it), and
a plan past `grouping.RUN_CELLS` is not replayed there.
"""

from __future__ import annotations

import json
import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import pytest  # noqa: E402
from review_setup import MALLORY, open_pr  # noqa: E402
from test_verify_hub import hub  # noqa: E402, F401

from registry.results.board import Board, to_entries  # noqa: E402
from registry.results.grouping import RUN_CELLS  # noqa: E402
from registry.stores.frame import FRAME_COLUMNS, _to_pandas, parse_jsonl  # noqa: E402

HOSTILE = {
    "a list": "[1]",
    "not JSON": "{",
    "a number": "7",
    "an unknown parameter": json.dumps({"kind": "adaptive", "runs": 3, "evil": 1}),
    "an unhashable value": json.dumps({"kind": "adaptive", "runs": 3, "levels": [1]}),
    "runs of another type": json.dumps({"kind": "adaptive", "runs": "3"}),
    "cases not a list": json.dumps({"kind": "adaptive", "runs": 3, "cases": 5}),
    "10**12 runs": json.dumps({"kind": "adaptive", "runs": 10**12}),
    "a plan past the bound": json.dumps({"kind": "adaptive", "runs": RUN_CELLS // 20 + 1}),
}


def run_rows(run_id: str, design: str | None, mode: str = "inline") -> list[dict]:
    """A run of 10 cases where the skill arm passes and the baseline fails."""
    rows = []
    for case in range(10):
        for arm in ("baseline", "skill"):
            rows.append({"run_id": run_id, "skill_name": "s", "skill_repo": "acme/s",
                         "model": "m", "mode": mode, "arm": "skill" if mode == "trigger" else arm,
                         "case_id": f"c{case}", "repeat": 0 if arm == "baseline" else 1,
                         "passed": arm == "skill", "expect_skill": True, "design": design,
                         "created_at": "2026-11-01T00:00:00Z"})
    return rows


def frame_of(rows: list[dict]):
    text = "".join(json.dumps(row) + "\n" for row in rows).encode()
    return _to_pandas(parse_jsonl(text).select(list(FRAME_COLUMNS)))


@pytest.mark.parametrize("design", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("mode", ["inline", "trigger"])
def test_a_hostile_design_leaves_the_board_standing_and_the_other_runs_as_they_were(design,
                                                                                    mode):
    honest = Board.build(frame_of(run_rows("honest", None, mode)), badges={})
    board = Board.build(frame_of(run_rows("honest", None, mode) + run_rows("evil", design, mode)),
                        badges={})
    if mode == "trigger":
        assert [t.run_id for t in board.triggers] in (["honest"], ["honest", "evil"],
                                                       ["evil", "honest"])
        return
    [entry] = to_entries(board.select())  # one entry per skill and model: the honest run's
    [alone] = to_entries(honest.select())
    assert entry._replace(date=None) == alone._replace(date=None)


def test_a_pending_run_with_a_hostile_design_leaves_the_pending_view_standing(hub):  # noqa: F811
    """The attack as it came: a pull request any account can open, and the Space's view."""
    from registry.config import Settings
    from registry.stores.hub import HubStore
    from space.leaderboard_tab import pending
    from space.state import SpaceState

    hub.add_user("mallory", MALLORY)
    settings = Settings.from_env()
    store = HubStore(settings)
    store.results._ensure_dataset(store.results.repo())
    files = {f"data/evals/2026-11/{name}.jsonl":
             "".join(json.dumps(row) + "\n" for row in run_rows(name, design)).encode()
             for name, design in (("list", "[1]"), ("huge", HOSTILE["10**12 runs"]))}
    open_pr(hub, MALLORY, files)
    state = SpaceState(settings, store, on_space=False)
    try:
        table, note = pending(state)
    finally:
        state.data.stop()
    assert "Unreviewed" in note
    assert "acme/s" in json.dumps(table)  # the skill's entry, from one of the two runs
