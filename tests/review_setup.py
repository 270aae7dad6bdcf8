"""What the tests of the one gate for submissions share (issue 37): runs alice proposes, pull
requests opened with any files at all, and what the fake Hub then holds.

"boss" owns the results dataset `DATASET` and the skill `SKILL` (the hub's own token);
"alice" (`ALICE`) and "mallory" (`MALLORY`) may only open pull requests. The `hub` fixture and
`evaluate` come from `test_verify_hub`.
"""

from __future__ import annotations

import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from fakes.hub_server import FakeHub  # noqa: E402
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi  # noqa: E402
from spot_setup import ALICE, DATASET, SKILL, propose_as_alice  # noqa: E402
from test_verify import FAST  # noqa: E402
from test_verify_hub import evaluate  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.evaluation.config import EvalConfig  # noqa: E402
from registry.evaluation.engine import run_evaluation  # noqa: E402
from registry.format.version_ref import SkillVersionRef  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from registry.stores.records import rows_hash  # noqa: E402

MALLORY = "hf_mallory_token"
__all__ = ["ALICE", "DATASET", "MALLORY", "SKILL", "alice_files", "boss_says", "forged_record",
           "main_files", "make_runs", "open_pr", "record_commits", "thread"]


def make_runs(tmp_path: Path, n: int) -> list[str]:
    """Publish the skill as boss and run it `n` times at that revision: the run ids."""
    first = evaluate(tmp_path)
    settings = Settings.from_env()
    store = HubStore(settings)
    ref = SkillVersionRef(SKILL, store.resolve(SKILL).sha)
    config = EvalConfig(models=["local/fake-student"], runs=1, retry=FAST)
    return [first] + [run_evaluation(tmp_path / "zorblax-ports", config, settings,
                                     published=ref).manifest.run_id for _ in range(n - 1)]


def alice_files(hub: FakeHub, tmp_path: Path, run_ids: list[str]) -> dict[str, bytes]:
    """Each saved run as alice's push writes it (path -> bytes): proposed, read back from the
    pull request and the pull request closed again."""
    found: dict[str, bytes] = {}
    for run_id in run_ids:
        num = int(propose_as_alice(tmp_path, run_id).pr_url.rsplit("/", 1)[1])
        files = hub.repo(DATASET, "dataset").resolve(f"refs/pr/{num}").files
        found.update({p: d for p, d in files.items() if p.endswith(f"/{run_id}.jsonl")})
        hub.close_pr(DATASET, num, "dataset")
    return found


def open_pr(hub: FakeHub, token: str, adds: dict[str, bytes], deletes: tuple[str, ...] = (),
            title: str = "my runs") -> int:
    """A pull request on the dataset with exactly these operations: its number."""
    operations: list = [CommitOperationAdd(p, d) for p, d in adds.items()]
    operations += [CommitOperationDelete(p) for p in deletes]
    made = HfApi(endpoint=hub.url, token=token).create_commit(
        DATASET, operations, commit_message=title, repo_type="dataset", create_pr=True)
    return int(made.pr_url.rsplit("/", 1)[1])


def thread(hub: FakeHub, num: int) -> list[dict[str, str]]:
    """The comments on pull request `num` (`author`, `text`)."""
    return list(hub.repo(DATASET, "dataset").pulls[num].comments)


def boss_says(hub: FakeHub, num: int) -> list[str]:
    """What the verifier (boss) commented on pull request `num`."""
    return [c["text"] for c in thread(hub, num) if c["author"] == "boss"]


def main_files(hub: FakeHub) -> dict[str, bytes]:
    """The dataset's files on `main`."""
    return dict(hub.repo(DATASET, "dataset").head.files)


def record_commits(hub: FakeHub) -> list[str]:
    """The titles of the commits on `main` that added verification records, newest first."""
    repo, titles = hub.repo(DATASET, "dataset"), []
    commit = repo.head
    while commit is not None:
        before = repo.commits[commit.parent].files if commit.parent else {}
        if any(p.startswith("verifications/") and p not in before for p in commit.files):
            titles.append(commit.message)
        commit = repo.commits.get(commit.parent) if commit.parent else None
    return titles


def forged_record(run_id: str, data: bytes, **fields: object) -> tuple[str, bytes]:
    """A verification record file as a submitter would forge it (`fields` override)."""
    record = {"kind": "replay", "run_id": run_id, "rows_hash": rows_hash(data),
              "skill_repo": SKILL, "skill_revision": None, "status": "verified",
              "first_problem": None, "samples": 20, "checks_regraded": 40,
              "verified_by": "anyone", "verified_at": "9999-12-31T23:59:59+00:00",
              "hubskills_version": "9.9.9", **fields}
    when = str(record["verified_at"])
    path = (f"verifications/{when[:7]}/{run_id}--{when[:19].replace(':', '').replace('-', '')}"
            f"--{record['kind']}--f0f0f0.json")
    return path, json.dumps(record).encode()
