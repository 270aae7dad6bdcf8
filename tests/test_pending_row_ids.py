"""The pending view shows a pull request's rows under the run its file names, on the fake Hub.

A red-team round (24): the pending rows were keyed by the `run_id` each row states, the badges
by the run id each file's path names. A file at `data/evals/2026-01/copy.jsonl` whose rows say
`"run_id": "<a genuine pending run>"` was summed into that run on the Pending view and the
`leaderboard --pending` table: its forged verdicts counted under the genuine run's `replayed`
badge, from another pull request, by anyone who can open one. A row is the submitter's text; the
path its file sits at is what the gate, the replay and the badge go by.
"""

from __future__ import annotations

import json
import os
import re

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from review_setup import MALLORY, open_pr, propose_as_alice  # noqa: E402
from test_verify_hub import evaluate, hub  # noqa: E402, F401

from registry.config import Settings  # noqa: E402
from registry.results.board import Board, to_entries  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from registry.stores.verifications import pending_badges  # noqa: E402
from registry.verify.admission import replay_pending  # noqa: E402
from registry.verify.pending import pending_view  # noqa: E402

PASSED = re.compile(r'"passed":\s*false')


def test_rows_naming_another_pending_run_stay_under_their_own_files_run(hub, tmp_path):  # noqa: F811
    run_id = evaluate(tmp_path)
    settings = Settings.from_env()
    genuine = (settings.runs_dir / run_id / "rows.jsonl").read_text()
    forged = PASSED.sub('"passed": true', genuine)  # every sample passes, in both arms
    assert forged != genuine
    propose_as_alice(tmp_path, run_id)  # pull request #1, replayed clean below
    hub.add_user("mallory", MALLORY)
    open_pr(hub, MALLORY, {"data/evals/2026-01/copy.jsonl": forged.encode()})
    store = HubStore(settings)
    replay_pending(store, settings, comment=False)
    badges = pending_badges(store)
    assert badges[run_id].verification == "replayed", badges
    assert badges["copy"].verification != "replayed", badges  # its own replay: a mismatch

    frame, _ = pending_view(store)
    by_run = frame["run_id"].astype(str).value_counts().to_dict()
    lines = len(genuine.splitlines())
    assert by_run == {run_id: lines, "copy": lines}, by_run  # not 2 x lines under the genuine
    board = Board.build(frame, badges=badges)
    [entry] = [e for e in to_entries(board.select()) if e.run_id == run_id]
    rows = [json.loads(line) for line in genuine.splitlines()]
    stored = sum(1 for r in rows if r["arm"] == "baseline" and r["passed"]) / entry.cases
    # before: mallory's later rows replaced alice's under her badge (baseline 100%, by mallory)
    assert (entry.verification, entry.produced_by) == ("replayed", "alice")
    assert entry.baseline == stored < 1.0


def test_a_frame_read_with_run_ids_files_each_sources_rows_under_its_own(tmp_path):
    """`load_frame(..., run_ids)`: two files of one pull request, the second's rows naming the
    first's run, stay two runs (each source parsed alone), read fresh and from the cache."""
    from registry.stores.frame import load_frame

    row = {"run_id": "good", "skill_repo": "boss/s", "model": "m", "arm": "skill",
           "case_id": "c", "repeat": 0, "passed": True}
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text(json.dumps(row) + "\n")
    bad.write_text(json.dumps(row) + "\n" + json.dumps({**row, "case_id": "d"}))  # no newline
    sources = {"data/evals/2026-01/good.jsonl:1": lambda: good,
               "data/evals/2026-01/bad.jsonl:2": lambda: bad}
    run_ids = {"data/evals/2026-01/good.jsonl:1": "good", "data/evals/2026-01/bad.jsonl:2": "bad"}
    for _ in range(2):  # parsed, then from the shard it wrote
        frame = load_frame(sources, tmp_path / "cache", run_ids)
        assert frame["run_id"].astype(str).value_counts().to_dict() == {"bad": 2, "good": 1}
