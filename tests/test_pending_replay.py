"""Pending submissions replayed for the owner (`publishing.review_replay`): on the fake Hub, a
contributor's pull request is replayed, its verification recorded and the result commented on
the pull request once per version of its rows; a mismatch is never merged by hubskills.

The dataset's owner ("boss") uses the hub's own token, a contributor ("alice") one that may only
open pull requests (the fixture and the run come from `test_verify_hub`).
"""

from __future__ import annotations

import json
import os
import re

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from fakes.hub_server import FakeHub  # noqa: E402
from spot_setup import ALICE, DATASET, SKILL, propose_as_alice  # noqa: E402
from test_verify_hub import evaluate, hub, verify  # noqa: E402, F401

from registry.cli import main  # noqa: E402
from registry.config import Settings  # noqa: E402
from registry.errors import HubskillsError  # noqa: E402
from registry.hub import HubClient  # noqa: E402
from registry.publishing.push import push_saved_run  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from registry.stores.verifications import pending_badges, read_records  # noqa: E402
from registry.verify.admission import merge_submission, replay_pending  # noqa: E402

PASSED = re.compile(r'"passed":\s*true')


def submit(tmp_path: Path) -> tuple[str, Settings]:
    """Evaluate boss's skill and let alice propose the run as pull request #1."""
    run_id = evaluate(tmp_path)
    propose_as_alice(tmp_path, run_id)
    return run_id, Settings.from_env()


def review(capsys, *args: str) -> tuple[int, str, str]:
    """`hubskills review ARGS` as the dataset's owner: exit code, stdout, stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main(["review", *args])
        raise SystemExit(0)
    found = capsys.readouterr()
    return int(exit_info.value.code or 0), found.out, found.err


def comments(server: FakeHub, num: int) -> list[str]:
    return [c["text"] for c in server.repo(DATASET, "dataset").pulls[num].comments]


def tamper(server: FakeHub, run_id: str) -> str:
    """Close alice's pull request #1 and propose its rows again as #2, one check's verdict
    flipped; returns the case it belongs to."""
    files = server.repo(DATASET, "dataset").resolve("refs/pr/1").files
    path = next(p for p in files if p.endswith(f"/{run_id}.jsonl"))
    lines = files[path].decode().splitlines(keepends=True)
    flipped = next(i for i, line in enumerate(lines) if PASSED.search(line))
    lines[flipped] = PASSED.sub('"passed": false', lines[flipped], count=1)
    server.close_pr(DATASET, 1, "dataset")
    client = HubClient(server.url, ALICE, Path(os.environ["HUBSKILLS_HOME"]) / "alice-cache")
    client.propose(DATASET, {path: "".join(lines).encode()}, message="edited",
                   repo_type="dataset")
    return str(json.loads(lines[flipped])["case_id"])


def test_a_pending_submission_is_replayed_recorded_and_commented_once(hub, tmp_path, capsys):  # noqa: F811
    run_id, settings = submit(tmp_path)
    store = HubStore(settings)

    [check] = replay_pending(store, settings)
    assert (check.num, check.author, check.run_id, check.status) == (1, "alice", run_id,
                                                                      "verified")
    assert check.commented
    [text] = comments(hub, 1)
    assert text.startswith(f"✅ **hubskills replay: verified** for run `{run_id}`")
    assert f"hubskills verify {SKILL} --run {run_id} --revision refs/pr/1" in text
    assert pending_badges(store)[run_id].verification == "replayed"
    [record] = [r for r in read_records(store) if r["run_id"] == run_id]
    assert (record["status"], record["rows_hash"]) == ("verified", check.rows_hash)

    [again] = replay_pending(store, settings)  # a refresh: nothing replayed or said again
    assert again.status == "verified" and not again.commented
    assert len(comments(hub, 1)) == 1
    assert len([r for r in read_records(store) if r["run_id"] == run_id]) == 1

    code, stdout, stderr = review(capsys, "pending", "--json")
    assert code == 0 and '"status": "verified"' in stdout and '"commented": false' in stdout
    code, stdout, stderr = review(capsys, "merge", "1")  # a verified submission is admitted
    assert code == 0 and "Merged pull request #1: its run files are on main" in stdout, stderr
    assert hub.repo(DATASET, "dataset").pulls[1].status == "closed"  # as replayed, on main
    [path] = [p for p in hub.repo(DATASET, "dataset").head.files if p.endswith(f"/{run_id}.jsonl")]
    assert hub.repo(DATASET, "dataset").head.files[path] == hub.repo(
        DATASET, "dataset").resolve("refs/pr/1").files[path]


def test_a_mismatched_submission_is_commented_and_never_merged(hub, tmp_path, capsys):  # noqa: F811
    run_id, settings = submit(tmp_path)
    case = tamper(hub, run_id)
    store = HubStore(settings)

    [check] = replay_pending(store, settings)
    assert (check.num, check.status) == (2, "mismatch")
    [text] = comments(hub, 2)
    assert text.startswith(f"❌ **hubskills replay: mismatch** for run `{run_id}`")
    # the flipped sample, by its check or by its own verdict (both differ; either may come first)
    first = re.compile(rf"First problem: `{case} #\d [a-z ]+ \(local/fake-student\): "
                       r"(check \d+ .*stored 'failed', regraded 'passed'|passed stored False, "
                       r"regraded True)")
    assert first.search(text), text
    assert "hubskills will not merge this pull request" in text

    with pytest.raises(HubskillsError) as refused:
        merge_submission(store, settings, 2)
    assert f"pull request #2 is not merged: run {run_id} is a mismatch" in str(refused.value)
    assert refused.value.hint == f"hubskills verify {SKILL} --run {run_id} --revision refs/pr/2"
    assert hub.repo(DATASET, "dataset").pulls[2].status == "open"
    assert len(comments(hub, 2)) == 1  # the refusal replayed nothing and said nothing again

    code, _, stderr = review(capsys, "merge", "2")
    assert code == 1 and f"pull request #2 is not merged: run {run_id} is a mismatch" in stderr
    assert f"Hint: hubskills verify {SKILL} --run {run_id} --revision refs/pr/2" in stderr
    assert hub.repo(DATASET, "dataset").pulls[2].status == "open"


def test_the_spaces_pending_view_replays_and_lists_what_it_found(hub, tmp_path):  # noqa: F811
    from space.leaderboard_tab import pending
    from space.pending_replay import PendingReplays
    from space.state import SpaceState

    run_id, settings = submit(tmp_path)
    state = SpaceState(settings, HubStore(settings), on_space=False)
    state.data.stop()  # no schedule: the worker's body runs here, in turn
    replays = PendingReplays(state)

    replays.run()
    table, note = pending(state, replays)
    shown = f"run <code>{run_id}</code>: <strong>verified</strong>"
    assert f"{shown} (commented on the pull request)" in note
    assert ">PR #1</a> by <code>alice</code>" in note
    assert "replayed" in str(table)  # the verified column of the pending table
    [text] = comments(hub, 1)
    assert text.startswith(f"✅ **hubskills replay: verified** for run `{run_id}`")

    replays.run()  # the next replay: listed, not commented again
    _, note = pending(state, replays)
    assert shown in note and "commented" not in note
    assert len(comments(hub, 1)) == 1


def test_a_skill_card_shows_each_entrys_verification(hub, tmp_path):  # noqa: F811
    run_id = evaluate(tmp_path)
    settings = Settings.from_env()
    pushed = push_saved_run(HubStore(settings), settings.runs_dir, run_id, settings=settings)
    assert pushed.verification == "verified"
    card = hub.repo(SKILL).resolve("main").files["README.md"].decode()
    assert "| verdict | verified | run |" in card
    [row] = [line for line in card.splitlines() if line.endswith(f"| {run_id} |")]
    assert row.endswith(f"| replayed | {run_id} |")


def test_hubskills_verify_records_its_replay_once(hub, tmp_path, capsys):  # noqa: F811
    run_id, settings = submit(tmp_path)
    code, stdout, stderr = verify(capsys, "--run", run_id, "--revision", "refs/pr/1")
    assert code == 0, stdout + stderr
    assert "recorded as verified in the results dataset's verifications" in stderr
    [record] = [r for r in read_records(HubStore(settings)) if r["run_id"] == run_id]
    assert (record["status"], record["verified_by"]) == ("verified", "boss")

    code, _, stderr = verify(capsys, "--run", run_id, "--revision", "refs/pr/1")
    assert code == 0 and "already recorded: verified by boss" in stderr
    [check] = replay_pending(HubStore(settings), settings)  # the Space replays nothing more
    assert check.status == "verified"
    assert len([r for r in read_records(HubStore(settings)) if r["run_id"] == run_id]) == 1


def test_the_space_replays_pending_submissions_in_the_background(hub, tmp_path):  # noqa: F811
    import threading
    import time

    from space.pending_replay import PendingReplays
    from space.state import SpaceState

    run_id, settings = submit(tmp_path)
    state = SpaceState(settings, HubStore(settings), refresh_every=0.01, on_space=False)
    replays = PendingReplays(state)
    replays.start()
    try:
        deadline, tick = time.monotonic() + 300, threading.Event()
        while not replays.found and time.monotonic() < deadline:  # set once it commented
            tick.wait(0.05)
    finally:
        state.data.stop()  # the loop ends with the Space's refreshes
    [text] = comments(hub, 1)
    assert text.startswith(f"✅ **hubskills replay: verified** for run `{run_id}`")
    assert [c.run_id for c in replays.found] == [run_id]


def test_a_submission_that_is_not_a_run_is_refused_and_said_once(hub, tmp_path):  # noqa: F811
    settings = Settings.from_env()
    store = HubStore(settings)
    store.results._ensure_dataset(DATASET)
    client = HubClient(hub.url, ALICE, tmp_path / "alice-cache")
    client.propose(DATASET, {"data/evals/2026-11/-not-a-run.jsonl": b"{}\n"},
                   message="odd", repo_type="dataset")

    [check] = replay_pending(store, settings)
    assert (check.num, check.status, check.commented) == (1, "refused", True)
    assert "data/evals/2026-11/-not-a-run.jsonl, which is not a new run file" in str(
        check.first_problem)
    [said] = comments(hub, 1)  # nothing replayed; the refusal said once
    assert said.startswith("🚫 **hubskills review: refused** pull request #1")
    with pytest.raises(HubskillsError, match="pull request #1 is refused"):
        merge_submission(store, settings, 1)
    assert hub.repo(DATASET, "dataset").pulls[1].status == "open"
    assert len(comments(hub, 1)) == 1


def test_two_pull_requests_adding_one_run_id_keep_their_own_badges_and_rows(hub, tmp_path):  # noqa: F811
    """A red-team note: pending badges were keyed by run id, so a forged copy of a genuine
    pending run, proposed first, was shown with the genuine one's `replayed` badge (and the
    two pull requests' rows summed as one run). The later one now waits as `RUN_ID (#N)`."""
    from review_setup import open_pr

    from registry.verify.pending import pending_view

    run_id = evaluate(tmp_path)
    settings = Settings.from_env()
    genuine = (settings.runs_dir / run_id / "rows.jsonl").read_text()
    forged = PASSED.sub('"passed": false', genuine)
    assert forged != genuine
    HubStore(settings).results._ensure_dataset(DATASET)
    first = open_pr(hub, ALICE, {f"data/evals/2026-01/{run_id}.jsonl": forged.encode()})
    pushed = propose_as_alice(tmp_path, run_id)  # the genuine rows, in a later pull request
    second = int(pushed.pr_url.rsplit("/", 1)[1])
    replay_pending(HubStore(settings), settings, comment=False)
    shown = pending_badges(HubStore(settings))
    later = f"{run_id} (#{second})"
    assert shown[later].verification == "replayed", shown
    assert shown[run_id].verification != "replayed", shown  # the forged copy's own badge
    frame, _ = pending_view(HubStore(settings))
    assert set(frame["run_id"].astype(str)) == {run_id, later}
    assert first < second


def test_a_file_no_run_path_names_takes_no_run_ids_badge(hub, tmp_path):  # noqa: F811
    """Review note: the pending badges were keyed over every `.jsonl` a pull request adds, the
    pending rows only over the paths that name a run, so junk proposed first at
    `data/evals/x/RUN.jsonl` took the bare `RUN` badge and left the genuine rows under it
    "unverified" while their "replayed" sat on `RUN (#N)`, a key with no rows."""
    from review_setup import open_pr

    from registry.verify.pending import pending_view

    run_id = evaluate(tmp_path)
    settings = Settings.from_env()
    HubStore(settings).results._ensure_dataset(DATASET)
    open_pr(hub, ALICE, {f"data/evals/x/{run_id}.jsonl": b"junk\n"})
    propose_as_alice(tmp_path, run_id)
    replay_pending(HubStore(settings), settings, comment=False)
    shown = pending_badges(HubStore(settings))
    assert list(shown) == [run_id] and shown[run_id].verification == "replayed", shown
    frame, _ = pending_view(HubStore(settings))
    assert set(frame["run_id"].astype(str)) == {run_id}
