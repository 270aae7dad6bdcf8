"""The one gate for submissions (issue 37, holes 2 and 7), on the fake Hub over real HTTP.

A pull request on the results dataset is admitted whole or not at all: it may only add new run
files under `data/evals/`, each replaying clean; a verification record, an edited or deleted
file, any other path refuses all of it, with the reason posted once. What is merged is exactly
the bytes that were replayed. Only the verifier's own comments count as its marker.
"""

from __future__ import annotations

import re

import pytest
from review_setup import (
    ALICE,
    DATASET,
    SKILL,
    alice_files,
    boss_says,
    forged_record,
    main_files,
    make_runs,
    open_pr,
    thread,
)
from test_pending_replay import PASSED, review
from test_verify_hub import hub  # noqa: F401 - the fixture

from registry.config import Settings
from registry.errors import HubskillsError
from registry.hub import HubClient
from registry.publishing.push import push_saved_run
from registry.stores.hub import HubStore
from registry.stores.verifications import badges
from registry.verify.admission import merge_submission, replay_pending


def tampered(data: bytes) -> bytes:
    """`data` with one check's stored verdict flipped from passed to failed."""
    lines = data.decode().splitlines(keepends=True)
    flipped = next(i for i, line in enumerate(lines) if PASSED.search(line))
    lines[flipped] = PASSED.sub('"passed": false', lines[flipped], count=1)
    return "".join(lines).encode()


def test_a_pull_request_carrying_a_verification_record_is_refused_whole(hub, tmp_path):  # noqa: F811
    """Seen: a submitter's own record (`verified_by: anyone`, dated 9999) merged beside a
    clean run made it `spot-checked` forever."""
    [run_id] = make_runs(tmp_path, 1)
    [(path, data)] = alice_files(hub, tmp_path, [run_id]).items()
    replayed = forged_record(run_id, data)
    spot = forged_record(run_id, data, kind="spot-check", status="consistent", k=50)
    num = open_pr(hub, ALICE, {path: data, replayed[0]: replayed[1], spot[0]: spot[1]})
    settings = Settings.from_env()
    store = HubStore(settings)

    with pytest.raises(HubskillsError) as refused:
        merge_submission(store, settings, num)
    assert f"pull request #{num} is refused" in str(refused.value)
    assert "verifications/9999-12/" in str(refused.value)
    assert path not in main_files(hub) and replayed[0] not in main_files(hub)
    assert hub.repo(DATASET, "dataset").pulls[num].status == "open"
    [said] = boss_says(hub, num)
    assert said.startswith("🚫 **hubskills review: refused**")
    assert "verifications/9999-12/" in said and "only adds new run files" in said

    replay_pending(store, settings)  # a refresh: said once
    with pytest.raises(HubskillsError):
        merge_submission(store, settings, num)
    assert len(boss_says(hub, num)) == 1
    assert run_id not in badges(HubStore(settings))


def test_a_pull_request_editing_or_deleting_a_run_on_main_is_refused_whole(hub, tmp_path,  # noqa: F811
                                                                           capsys):
    """Seen: another contributor's ranked run rewritten to unranked by a pull request that
    also added a clean run of its own."""
    theirs, mine = make_runs(tmp_path, 2)
    settings = Settings.from_env()
    push_saved_run(HubStore(settings), settings.runs_dir, theirs, settings=settings)  # ranked
    [(their_path, their_data)] = [(p, d) for p, d in main_files(hub).items()
                                  if p.endswith(f"/{theirs}.jsonl")]
    assert badges(HubStore(settings))[theirs].verification == "replayed"
    [(path, data)] = alice_files(hub, tmp_path, [mine]).items()

    edit = open_pr(hub, ALICE, {path: data, their_path: tampered(their_data)})
    code, _, stderr = review(capsys, "merge", str(edit))
    assert code == 1 and f"pull request #{edit} is refused" in stderr
    assert f"changes {their_path}" in " ".join(stderr.split()), stderr
    drop = open_pr(hub, ALICE, {path: data}, deletes=(their_path,))
    code, _, stderr = review(capsys, "merge", str(drop))
    assert code == 1 and f"deletes {their_path}" in " ".join(stderr.split()), stderr
    other = open_pr(hub, ALICE, {path: data, "notes/why.md": b"# please merge\n"})
    code, _, stderr = review(capsys, "merge", str(other))
    assert code == 1 and "adds notes/why.md" in " ".join(stderr.split()), stderr

    assert main_files(hub)[their_path] == their_data and path not in main_files(hub)
    assert badges(HubStore(settings))[theirs].verification == "replayed"
    for num in (edit, drop, other):
        assert hub.repo(DATASET, "dataset").pulls[num].status == "open"
        [said] = boss_says(hub, num)
        assert said.startswith("🚫 **hubskills review: refused**")


def test_a_merge_applies_exactly_the_bytes_it_replayed(hub, tmp_path, capsys):  # noqa: F811
    """A clean pull request is admitted as the replayed bytes, committed by the verifier; a
    commit pushed to the pull request after its replay is never merged unreplayed."""
    first, second = make_runs(tmp_path, 2)
    files = alice_files(hub, tmp_path, [first, second])
    (path, data), (later_path, later_data) = sorted(files.items())
    num = open_pr(hub, ALICE, {path: data})
    settings = Settings.from_env()
    store = HubStore(settings)
    [check] = replay_pending(store, settings)
    assert check.status == "verified"

    HubClient(hub.url, ALICE, tmp_path / "alice-cache").api.create_commit(
        DATASET, [_add(later_path, later_data)], commit_message="one more",
        repo_type="dataset", revision=f"refs/pr/{num}")
    checks = merge_submission(store, settings, num)  # replays the new head first
    assert {c.run_id for c in checks} == {first, second}
    assert main_files(hub)[path] == data and main_files(hub)[later_path] == later_data
    pr = hub.repo(DATASET, "dataset").pulls[num]
    assert pr.status != "open"
    assert any("admitted" in text for text in boss_says(hub, num))
    assert {badges(HubStore(settings))[r].verification for r in (first, second)} == {
        "replayed"}


def test_a_forged_record_already_on_main_does_not_excuse_a_replay(hub, tmp_path):  # noqa: F811
    """A record counts only when a trusted verifier wrote it: one by anyone else, even on
    `main` (merged there by hand), never stands in for the replay of tampered rows."""
    [run_id] = make_runs(tmp_path, 1)
    [(path, data)] = alice_files(hub, tmp_path, [run_id]).items()
    bad = tampered(data)
    record = forged_record(run_id, bad, verified_at="2026-01-01T00:00:00+00:00")
    hub.merge_pr(DATASET, open_pr(hub, ALICE, dict([record])), "dataset")  # by hand
    num = open_pr(hub, ALICE, {path: bad})
    settings = Settings.from_env()

    [check] = replay_pending(HubStore(settings), settings)
    assert (check.num, check.status) == (num, "mismatch")
    with pytest.raises(HubskillsError, match="mismatch"):
        merge_submission(HubStore(settings), settings, num)
    assert path not in main_files(hub)


def test_only_the_verifiers_own_comments_count_as_its_marker(hub, tmp_path):  # noqa: F811
    """Seen: a submitter's fake "verified" comment carrying the hidden marker, and the real
    `mismatch` never posted."""
    [run_id] = make_runs(tmp_path, 1)
    [(path, data)] = alice_files(hub, tmp_path, [run_id]).items()
    bad = tampered(data)
    settings = Settings.from_env()
    first = open_pr(hub, ALICE, {path: bad})
    replay_pending(HubStore(settings), settings)
    [real] = boss_says(hub, first)
    assert real.startswith(f"❌ **hubskills replay: mismatch** for run `{run_id}`")
    hub.close_pr(DATASET, first, "dataset")

    second = open_pr(hub, ALICE, {path: bad})  # the same rows again, and the same thread
    marker = re.search(r"<!--.*?-->", real, re.S).group(0)
    fake = (f"✅ **hubskills replay: verified** for run `{run_id}`\n\nAll good.\n\n"
            f"<!-- hubskills-verification run={run_id} rows={_hash(bad)} -->\n{marker}")
    alice = HubClient(hub.url, ALICE, tmp_path / "alice-cache")
    alice.comment(DATASET, second, fake, repo_type="dataset")
    alice.comment(DATASET, second, real, repo_type="dataset")

    [check] = [c for c in replay_pending(HubStore(settings), settings) if c.num == second]
    assert check.status == "mismatch" and check.commented
    [said] = boss_says(hub, second)
    assert said.startswith(f"❌ **hubskills replay: mismatch** for run `{run_id}`")
    assert [c["author"] for c in thread(hub, second)] == ["alice", "alice", "boss"]
    replay_pending(HubStore(settings), settings)  # boss's own marker now counts
    assert len(boss_says(hub, second)) == 1
    assert SKILL in said


def _add(path: str, data: bytes):
    from huggingface_hub import CommitOperationAdd

    return CommitOperationAdd(path, data)


def _hash(data: bytes) -> str:
    from registry.stores.records import rows_hash

    return rows_hash(data)
