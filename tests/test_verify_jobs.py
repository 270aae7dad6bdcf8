"""`hubskills verify NS/NAME --run RUN_ID --resample K --on jobs`: the spot check as one Job.

The fake Hub's Jobs runner really runs the Job: its command downloads the wheel the client built
from this checkout, installs it and runs `registry.verify.spot_job`, which re-asks the fake
model and records the verification in the results dataset as the token's user ("boss", the dataset's
owner). The "image" has hubskills' dependencies already and no package index.
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
from fakes.hub_server import FakeHub  # noqa: E402
from spot_setup import fake_hub  # noqa: E402
from test_verify_hub import evaluate, verify  # noqa: E402
from test_verify_spot import forged_baseline, rewrite  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.publishing.push import push_saved_run  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from registry.stores.verifications import badges, read_records  # noqa: E402

KEY = "sk-spot-jobs-0123456789abcdef"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub (boss owns the results dataset) with Jobs, and the fake model."""
    yield from fake_hub(monkeypatch, env={"OPENAI_API_KEY": KEY})


def pushed_run(tmp_path: Path, edit=None) -> str:
    """A genuine run (edited by ``edit`` before it is pushed, when given), pushed by boss."""
    run_id = evaluate(tmp_path)
    if edit is not None:
        rewrite(run_id, edit)
    settings = Settings.from_env()
    assert not push_saved_run(HubStore(settings), settings.runs_dir, run_id).pending
    return run_id


def spot_records(run_id: str) -> list[dict]:
    return [r for r in read_records(HubStore(Settings.from_env()))
            if r["kind"] == "spot-check" and r["run_id"] == run_id]


def test_the_job_spot_checks_the_run_and_records_it_as_the_tokens_user(hub, tmp_path, capsys):
    run_id = pushed_run(tmp_path)
    asked = len(hub.model.bodies)
    code, stdout, stderr = verify(capsys, "--run", run_id, "--resample", "9", "--on", "jobs",
                                  "--json")
    assert code == 0, stdout + stderr
    found = json.loads(stdout)
    assert found["status"] == "verified"
    check = found["spot_check"]
    assert check["consistent"] and check["k"] == 9
    assert [(a["arm"], a["pairs"]) for a in check["arms"]] == [("baseline", 9), ("skill", 9)]
    assert len(hub.model.bodies) == asked + 18  # re-asked by the Job, not here before it
    assert "Spot check: re-asking 9 samples per arm" in stderr and "Hugging Face Job" in stderr
    [record] = spot_records(run_id)
    assert check["record"].startswith("verifications/") and record["verified_by"] == "boss"
    assert (record["status"], record["k"]) == ("consistent", 9)
    assert badges(HubStore(Settings.from_env()))[run_id].verification == "spot-checked"
    [job_id] = hub.jobs.specs
    spec = hub.jobs.specs[job_id]
    assert "OPENAI_API_KEY" in spec["secrets"] and "HF_TOKEN" in spec["secrets"]
    shown = json.dumps([spec["command"], spec.get("arguments"), spec.get("environment")])
    assert KEY not in shown and hub.token not in shown
    assert KEY not in "\n".join(hub.jobs.logs(job_id)) and KEY not in json.dumps(record)


def test_forged_row_costs_neither_refuse_nor_price_a_check_on_jobs(hub, tmp_path, capsys):
    """The rows' costs are claims: the Job prices the check from the catalogue (a free
    model here) and re-asks, however dear or cheap the rows say their answers were."""
    run_id = pushed_run(tmp_path, lambda row: row.model_copy(update={"cost_usd": 0.01}))
    code, stdout, stderr = verify(capsys, "--run", run_id, "--resample", "10", "--max-cost",
                                  "0.1", "--on", "jobs")
    assert code == 0, stdout + stderr
    assert "$0.2000" not in stderr and "spot check: consistent" in stdout
    [job_id] = hub.jobs.specs
    assert "estimated cost at most $0.0000 (catalogue prices)" in "\n".join(
        hub.jobs.logs(job_id))


def test_an_output_edited_to_pass_is_caught_by_the_jobs_spot_check(hub, tmp_path, capsys):
    run_id = pushed_run(tmp_path, forged_baseline)
    code, stdout, stderr = verify(capsys, "--run", run_id, "--resample", "10", "--on", "jobs")
    assert code == 1, stdout + stderr
    assert stdout.startswith(f"verified: run {run_id}")  # the grading holds ...
    assert "spot check: inconsistent (K=10 per arm" in stdout  # ... the model does not
    assert "baseline: 10 pairs, 10 passed only as stored, 0 only when re-asked" in stdout
    [record] = spot_records(run_id)
    assert record["status"] == "inconsistent" and "baseline" in record["first_problem"]
    assert badges(HubStore(Settings.from_env()))[run_id].verification == "mismatch"


def test_on_jobs_needs_a_registry_run_and_a_resample(hub, capsys):
    code, _, stderr = verify(capsys, "--run", "20261122-103000-a1b2c3", "--on", "jobs")
    assert code == 2 and "--on jobs runs a spot check there: add --resample K" in stderr
    assert hub.jobs.specs == {}
