"""`hubskills verify NS/NAME --run RUN_ID` on the fake Hub: a run the owner pushed, and a
contributor's pull request read at `--revision refs/pr/N`; a spot check is recorded there.

Everything talks real HTTP to the fake Hub through the unmodified client; the dataset's owner
("boss") uses the hub's own token, a contributor ("alice") one that may only open pull requests.
"""

from __future__ import annotations

import json
import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402
from fakes.hub_server import FakeHub  # noqa: E402
from spot_setup import ALICE, DATASET, SKILL, evaluate, fake_hub, propose_as_alice  # noqa: E402

from registry.cli import main  # noqa: E402
from registry.config import Settings  # noqa: E402
from registry.publishing.push import push_saved_run  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from registry.stores.verifications import read_records, rows_hash  # noqa: E402


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub, where alice may open pull requests, and the fake model; the CLI reads the
    Hub as boss."""
    yield from fake_hub(monkeypatch, users={"alice": ALICE})


def verify(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["verify", SKILL, *args])
        raise SystemExit(0)
    found = capsys.readouterr()
    return int(exit_info.value.code or 0), found.out, found.err


def test_a_run_pushed_to_the_hub_verifies_and_its_spot_check_is_recorded(hub, tmp_path, capsys):
    run_id = evaluate(tmp_path)
    settings = Settings.from_env()
    pushed = push_saved_run(HubStore(settings), settings.runs_dir, run_id)
    assert not pushed.pending
    code, stdout, stderr = verify(capsys, "--run", run_id, "--json")
    assert code == 0, stdout + stderr
    found = json.loads(stdout)
    assert found["status"] == "verified" and found["samples"] == 20
    assert found["skill_source"].startswith(f"{SKILL}@") and "hub registry" in \
        found["skill_source"]

    code, stdout, stderr = verify(capsys, "--run", run_id, "--resample", "9")
    assert code == 0, stdout + stderr
    assert "spot check: consistent (K=9 per arm" in stdout
    [record] = [r for r in read_records(HubStore(settings)) if r["kind"] == "spot-check"]
    data = hub.repo(DATASET, "dataset").resolve("main")
    [content] = [c for p, c in data.files.items() if p.endswith(f"/{run_id}.jsonl")]
    assert (record["kind"], record["status"], record["k"]) == ("spot-check", "consistent", 9)
    assert (record["run_id"], record["rows_hash"]) == (run_id, rows_hash(content))
    assert record["verified_by"] == "boss" and "recorded as verifications/" in stdout


def test_a_pull_request_submission_verifies_at_its_revision(hub, tmp_path, capsys):
    run_id = evaluate(tmp_path)
    assert propose_as_alice(tmp_path, run_id).pr_url.endswith("/discussions/1")

    code, _, stderr = verify(capsys, "--run", run_id)
    assert code == 1 and f"no run {run_id} in the hub registry's results" in stderr
    code, stdout, stderr = verify(capsys, "--run", run_id, "--revision", "refs/pr/1")
    assert code == 0, stdout + stderr
    assert stdout.startswith(f"verified: run {run_id} (20 samples")
    code, _, stderr = verify(capsys, "--run", run_id, "--revision", "refs/pr/2")
    assert code == 1 and f"{DATASET} has no revision refs/pr/2" in stderr
    assert "Hint: hubskills leaderboard --registry hub --pending" in stderr
