"""Whose numbers: who produced each pushed row, pushes to someone else's dataset as pull
requests, the leaderboard's unreviewed submissions, and generate's stop rule on the verdict.

Everything talks real HTTP to the fake Hub through the unmodified client. The dataset's owner
("boss") uses the hub's own token; a contributor ("alice") has a token of her own that may
read boss's repos but write only her namespace.
"""

from __future__ import annotations

import json
import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from huggingface_hub import CommitOperationAdd, HfApi  # noqa: E402
from huggingface_hub.errors import HfHubHTTPError  # noqa: E402

from registry.cli import cli  # noqa: E402
from registry.config import Settings  # noqa: E402
from registry.generate.report import RoundResult, StudentResult  # noqa: E402
from registry.publishing.push import push_run  # noqa: E402
from registry.results.runs import ResultRow, RunManifest, to_json  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from registry.verify.pending import forged_claims, pending_frame  # noqa: E402
from tests.fakes.hub_server import FakeHub  # noqa: E402
from tests.hub_setup import require_online  # noqa: E402

DATASET = "boss/hubskills-evals"
SKILL_REPO = "boss/answers"
ALICE = "hf_alice_token"
N_CASES = 12


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    require_online()
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with FakeHub(user="boss") as server:
        server.add_user("alice", ALICE)
        server.create_repo(SKILL_REPO)
        yield server


def store_for(hub: FakeHub, tmp_path: Path, token: str, **extra: str) -> HubStore:
    settings = Settings(home=tmp_path / token, hf_endpoint=hub.url, hf_token=token,
                        results_repo=DATASET, **extra)
    return HubStore(settings)


def run(run_id: str, *, skill_pass: bool = True) -> tuple[RunManifest, list[ResultRow]]:
    """A finished run of boss/answers: the skill arm passes (or not), the baseline fails."""
    manifest = RunManifest(run_id=run_id, skill_name="answers", skill_version="1.0.0",
                           skill_repo=SKILL_REPO, skill_revision="a" * 40,
                           content_hash="sha256:abc", suite_hash="s", suite_cases=N_CASES,
                           models=["local/m"], runs=1, status="complete", partial=False,
                           case_ids=[f"c{i}" for i in range(N_CASES)],
                           samples_planned=2 * N_CASES, samples_done=2 * N_CASES,
                           started_at="2026-01-15T10:00:00+00:00")
    rows = [ResultRow(run_id=run_id, skill_name="answers", model="local/m", arm=arm,
                      case_id=f"c{i}", passed=skill_pass if arm == "skill" else False)
            for i in range(N_CASES) for arm in ("baseline", "skill")]
    return manifest, rows


# -- the fake Hub's permissions and pull requests -------------------------------------------


def test_a_reader_gets_403_on_a_direct_commit_but_may_open_a_pull_request(hub: FakeHub):
    owner, alice = HfApi(endpoint=hub.url, token=hub.token), HfApi(endpoint=hub.url, token=ALICE)
    owner.create_repo(DATASET, repo_type="dataset")

    def add() -> list[CommitOperationAdd]:  # an operation is spent once committed
        return [CommitOperationAdd("data/x.jsonl", b"{}\n")]

    with pytest.raises(HfHubHTTPError) as refused:
        alice.create_commit(DATASET, add(), commit_message="direct", repo_type="dataset")
    assert refused.value.response.status_code == 403
    proposed = alice.create_commit(DATASET, add(), commit_message="please", repo_type="dataset",
                                   create_pr=True)
    assert proposed.pr_url.endswith(f"/datasets/{DATASET}/discussions/1")
    assert not owner.file_exists(DATASET, "data/x.jsonl", repo_type="dataset")
    assert owner.file_exists(DATASET, "data/x.jsonl", repo_type="dataset",
                             revision=proposed.pr_revision)
    [pr] = owner.get_repo_discussions(DATASET, repo_type="dataset",
                                      discussion_type="pull_request", discussion_status="open")
    assert (pr.num, pr.author, pr.status) == (1, "alice", "open")

    hub.merge_pr(DATASET, 1, "dataset")
    assert owner.file_exists(DATASET, "data/x.jsonl", repo_type="dataset")
    assert list(owner.get_repo_discussions(DATASET, repo_type="dataset",
                                           discussion_status="open")) == []
    assert alice.whoami()["name"] == "alice" and owner.whoami()["name"] == "boss"
    alice.create_repo("alice/mine")  # her own namespace is hers to write
    alice.create_commit("alice/mine", add(), commit_message="direct")


# -- pushes: who, and where -----------------------------------------------------------------


def test_the_owner_pushes_directly_and_rows_name_the_real_user(hub: FakeHub, tmp_path: Path):
    store = store_for(hub, tmp_path, hub.token, namespace="team")  # a namespace is not a user
    pushed = push_run(store, *run("r-boss"), via="cli")
    assert not pushed.pending and pushed.pr_url is None
    rows = store.read_results(skill=SKILL_REPO)
    assert {(r.produced_by, r.produced_via) for r in rows} == {("boss", "cli")}


def test_a_contributor_push_becomes_a_pull_request_with_her_token_only(
        hub: FakeHub, tmp_path: Path):
    store_for(hub, tmp_path, hub.token).results._ensure_dataset(DATASET)
    hub.commit_tokens.clear()
    alice = store_for(hub, tmp_path, ALICE)
    pushed = push_run(alice, *run("r-alice"), via="space")
    assert pushed.pending and pushed.pr_url.endswith(f"/datasets/{DATASET}/discussions/1")
    assert pushed.produced_by == "alice"
    assert {token for _, token in hub.commit_tokens} == {ALICE}  # never another token

    owner = store_for(hub, tmp_path, hub.token)
    assert owner.read_results(skill=SKILL_REPO) == []  # not in the dataset until merged
    waiting = pending_frame(owner)
    assert len(waiting) == 2 * N_CASES
    assert set(waiting["produced_by"].astype(str)) == {"alice"}
    assert set(waiting["produced_via"].astype(str)) == {"space"}

    hub.merge_pr(DATASET, 1, "dataset")
    merged = store_for(hub, tmp_path / "after", hub.token)
    assert len(merged.results_frame()) == 2 * N_CASES
    assert len(pending_frame(merged)) == 0


def test_a_contributor_proposes_the_card_too_when_the_dataset_has_none(
        hub: FakeHub, tmp_path: Path):
    HfApi(endpoint=hub.url, token=hub.token).create_repo(DATASET, repo_type="dataset")
    pushed = push_run(store_for(hub, tmp_path, ALICE), *run("r-card"))
    assert pushed.pending
    proposal = hub.repo(DATASET, "dataset").resolve("refs/pr/1")
    assert "README.md" in proposal.files and any(p.endswith("r-card.jsonl")
                                                for p in proposal.files)
    assert "README.md" not in hub.repo(DATASET, "dataset").head.files


# -- the leaderboard: merged by default, unreviewed on request -------------------------------


def leaderboard(hub: FakeHub, tmp_path: Path, *args: str):
    env = {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": hub.url, "HF_TOKEN": hub.token,
           "HUBSKILLS_RESULTS_REPO": DATASET, "HUBSKILLS_HOME": str(tmp_path / "cli-home"),
           "NO_COLOR": "1", "COLUMNS": "250"}
    return CliRunner().invoke(cli, ["leaderboard", "--registry", "hub", *args], env=env,
                              catch_exceptions=False)


def test_leaderboard_shows_pending_submissions_only_on_request(hub: FakeHub, tmp_path: Path):
    """(The rows here are made up, not replayable: each board is asked with
    --include-unverified, so what is shown depends only on merged vs pending.)"""
    push_run(store_for(hub, tmp_path, hub.token), *run("r-merged", skill_pass=False))
    push_run(store_for(hub, tmp_path, ALICE), *run("r-pending"))

    plain = leaderboard(hub, tmp_path, "--include-unverified")
    assert plain.exit_code == 0, plain.output
    assert "boss/answers@1.0.0" in plain.output and "+0 [-31, +31]" in plain.output
    assert "+100" not in plain.output and "unreviewed" not in plain.output

    shown = leaderboard(hub, tmp_path, "--pending", "--include-unverified")
    assert shown.exit_code == 0, shown.output
    reviewed, _, waiting = shown.output.partition("Pending submissions (unreviewed")
    assert "+100" not in reviewed and "+100 [+39, +100]" in waiting

    records = leaderboard(hub, tmp_path, "--pending", "--json", "--include-unverified")
    data = json.loads(records.output)
    assert sorted((r["review"], r["lift"]) for r in data) == [("merged", 0.0),
                                                             ("unreviewed", 1.0)]


# -- generate stops on the one engine's verdict ----------------------------------------------


def student(lo: float, verdict: str) -> StudentResult:
    return StudentResult(model="m", baseline=0.0, baseline_ci=(0.0, 0.5), skill=1.0,
                         skill_ci=(0.5, 1.0), lift=1.0, lo=lo, hi=1.0, verdict=verdict,
                         input_tokens=0, output_tokens=0, cost_usd=0.0)


def test_generate_stops_only_on_a_helps_verdict_not_on_a_positive_lower_bound():
    # Four cases that all improved: the interval is above 0, but four cases are too few.
    assert not RoundResult(0, "r", [student(1.0, "too few cases (4)")]).reached(0.5)
    assert not RoundResult(0, "r", [student(0.2, "no detectable effect")]).reached(0.5)
    assert RoundResult(0, "r", [student(0.2, "helps")]).reached(0.5)
    assert not RoundResult(0, "r", [student(0.2, "helps")]).reached(1.01)  # target unmet


def test_the_space_shows_pending_submissions_apart_and_marked_unreviewed(
        hub: FakeHub, tmp_path: Path):
    from space.leaderboard_tab import pending
    from space.state import SpaceState

    owner = store_for(hub, tmp_path, hub.token)
    push_run(owner, *run("r-merged", skill_pass=False))
    state = SpaceState(owner.settings, owner, on_space=False)
    table, note = pending(state)
    assert table["data"] == [] and "No pending submissions" in note

    push_run(store_for(hub, tmp_path, ALICE), *run("r-pending"))
    table, note = pending(state)
    assert note.startswith("<div><p><strong>Unreviewed</strong>")
    [row] = table["data"]
    assert "boss/answers" in " ".join(map(str, row)) and "+100 [+39, +100]" in row
    assert set(state.board().points["run_id"]) == {"r-merged"}  # never the pending run


def test_a_pending_submission_is_shown_under_its_pull_requests_author_and_flagged(
        hub: FakeHub, tmp_path: Path):
    """Mallory opens a pull request whose rows say they were produced by someone else: the
    pending view names mallory, as the Hub does, and flags the claim."""
    from space.leaderboard_tab import SUBMITTED_BY, pending
    from space.state import SpaceState

    owner = store_for(hub, tmp_path, hub.token)
    owner.results._ensure_dataset(DATASET)
    push_run(store_for(hub, tmp_path, ALICE), *run("r-alice"))  # an honest one beside it
    hub.add_user("mallory", "hf_mallory_token")
    _, rows = run("r-forged")
    forged = "".join(to_json(row.model_copy(update={"produced_by": "someone-else"})) + "\n"
                     for row in rows)
    HfApi(endpoint=hub.url, token="hf_mallory_token").create_commit(
        DATASET, [CommitOperationAdd("data/evals/2026-01/r-forged.jsonl", forged.encode())],
        commit_message="my run", repo_type="dataset", create_pr=True)

    waiting = pending_frame(owner)
    authors = waiting.groupby("run_id", observed=True)["produced_by"].agg(set).to_dict()
    assert authors == {"r-alice": {"alice"}, "r-forged": {"mallory"}}
    assert forged_claims(waiting) == {"r-forged": ["someone-else"]}

    table, note = pending(SpaceState(owner.settings, owner, on_space=False))
    assert table["headers"][-1] == SUBMITTED_BY
    shown = sorted(row[-1] for row in table["data"])
    assert shown == ["alice", "mallory ⚠️ rows claim: someone-else"]
    assert "someone-else" not in " ".join(str(cell) for row in table["data"]
                                          for cell in row[:-1])
    assert "1 run whose rows name another producer" in note

    records = json.loads(leaderboard(hub, tmp_path, "--pending", "--json").output)
    assert {r["produced_by"] for r in records if r["review"] == "unreviewed"} == {
        "alice", "mallory"}


def test_eval_push_by_a_contributor_prints_the_pull_request(hub: FakeHub, tmp_path: Path):
    from fakes.openai_server import FakeOpenAIServer
    from test_evaluate import knows_fact_if_told, make_skill

    skill = make_skill(tmp_path, 10)
    owner = store_for(hub, tmp_path, hub.token)
    owner.publish(skill, repo="boss/zorblax-ports", version="1.0.0")
    owner.results._ensure_dataset(DATASET)  # boss's leaderboard dataset exists
    env = {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": hub.url, "HF_TOKEN": ALICE,
           "HUBSKILLS_RESULTS_REPO": DATASET, "HUBSKILLS_HOME": str(tmp_path / "alice-home"),
           "NO_COLOR": "1", "COLUMNS": "250"}
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        result = CliRunner().invoke(cli, [
            "eval", str(skill), "-m", "local/fake", "--base-url", server.url, "--runs", "1",
            "--push", "--registry", "hub", "--repo", "boss/zorblax-ports"], env=env,
            catch_exceptions=False)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "you (alice) cannot write the results dataset" in text
    assert f"{hub.url}/datasets/{DATASET}/discussions/1" in text
    assert "Pushed" not in text
    [pr] = hub.repo(DATASET, "dataset").pulls.values()
    assert pr.author == "alice" and pr.status == "open"
