"""`hubskills verify NS/NAME --run RUN_ID --resample K --on jobs`: what must happen around the Job.

A token that may read the results dataset but not write it is refused before anything costs
(the Job would run and only then fail to record its verdict). Ctrl-C while the CLI follows the
Job cancels it on the Hub (else it goes on billing unseen), or names the command that does. The
Ctrl-C tests run the CLI as a real process (`cli_process.start`) against the fake Hub, whose
Jobs really run (`tests/fakes/jobs_server.py`).
"""

from __future__ import annotations

import hashlib
import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import signal  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402
from cli_process import start  # noqa: E402
from fakes.hub_server import FakeHub  # noqa: E402
from spot_setup import ALICE, DATASET, SKILL, fake_hub  # noqa: E402
from test_verify_hub import verify  # noqa: E402
from test_verify_jobs import pushed_run, spot_records  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.jobs.package import build_wheel  # noqa: E402
from registry.jobs.plan import RunFiles  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402

KEY = "sk-spot-jobs-2-0123456789abcdef"
WRITE_CHECK = ("GET", f"/api/datasets/{DATASET}/auth-check/write")


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub (boss owns the results dataset; alice may only read it) with Jobs, and the
    fake model."""
    yield from fake_hub(monkeypatch, users={"alice": ALICE}, env={"OPENAI_API_KEY": KEY})


def test_a_token_that_may_not_write_the_results_starts_no_job(hub, tmp_path, capsys,
                                                              monkeypatch):
    run_id = pushed_run(tmp_path)
    # The wheel is there already (boss spot-checked with this hubskills): no failed upload
    # would stop alice's Job, only asking first.
    name, wheel = build_wheel()
    RunFiles(HubStore(Settings.from_env()).client, DATASET, run_id).upload_wheel(
        name, wheel, hashlib.sha256(wheel).hexdigest())
    monkeypatch.setenv("HF_TOKEN", ALICE)
    before = len(hub.bearers)

    code, stdout, stderr = verify(capsys, "--run", run_id, "--resample", "9", "--on", "jobs")

    assert code == 1 and stdout.startswith(f"verified: run {run_id}"), stdout + stderr
    assert f"may not write the results dataset {DATASET}" in stderr
    assert f"Hint: hf auth login  # a token with write access to {DATASET}" in stderr
    assert "estimated cost" not in stderr  # refused before the check was planned
    assert hub.jobs.specs == {}
    asked = [(method, path) for method, path, token in hub.bearers[before:] if token == ALICE]
    assert not [path for _, path in asked if path.startswith("/api/jobs")]
    assert asked[asked.index(WRITE_CHECK) + 1:] == []  # nothing uploaded after the answer
    assert not spot_records(run_id)


def test_the_owners_token_is_asked_and_allowed(hub, tmp_path, capsys):
    run_id = pushed_run(tmp_path)
    code, stdout, stderr = verify(capsys, "--run", run_id, "--resample", "9", "--on", "jobs")
    assert code == 0, stdout + stderr
    assert WRITE_CHECK in hub.requests and len(hub.jobs.specs) == 1
    [record] = spot_records(run_id)
    assert record["verified_by"] == "boss"


def following(hub: FakeHub, process: subprocess.Popen, timeout: float = 180) -> str:
    """The id of the spot check's Job once the CLI is following it (it asked its stage)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        for job_id, job in list(hub.jobs.jobs.items()):
            if job.stage == "RUNNING" and ("GET", f"/api/jobs/boss/{job_id}") in hub.requests:
                return job_id
        time.sleep(0.05)
    raise AssertionError("the CLI did not follow a running Job in time")


def interrupted(hub: FakeHub, tmp_path) -> tuple[str, subprocess.Popen[str], str]:
    """A spot check on Jobs whose Job waits on the model, interrupted by SIGINT while the CLI
    follows it: the Job's id, the ended process and its stderr."""
    run_id = pushed_run(tmp_path)
    hub.model.latency = 600  # the Job's first model call answers only after the test ends
    process = start("verify", SKILL, "--run", run_id, "--resample", "9", "--on", "jobs")
    job_id = following(hub, process)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    return job_id, process, stderr


def test_ctrl_c_while_following_cancels_the_job(hub, tmp_path):
    job_id, process, stderr = interrupted(hub, tmp_path)
    assert process.returncode == 130, stderr
    assert hub.jobs.wait(job_id) == "CANCELED"
    assert f"Cancelled Hugging Face Job {job_id}" in stderr and "Traceback" not in stderr


def test_a_cancel_that_fails_names_the_command_that_cancels(hub, tmp_path):
    hub.fail_next(1, status=403, path_contains="/cancel")
    job_id, process, stderr = interrupted(hub, tmp_path)
    assert process.returncode == 130, stderr
    assert hub.jobs.jobs[job_id].stage == "RUNNING"  # still billing: the user must be told
    assert f"Hugging Face Job {job_id} was not cancelled" in stderr
    assert f"Hint: hf jobs cancel {job_id}" in stderr and "Traceback" not in stderr
