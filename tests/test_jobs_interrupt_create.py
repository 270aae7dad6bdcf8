"""A Ctrl-C (or a failed create) while a Hugging Face Job is being created leaves no Job unseen.

The fake Hub holds a create's answer until the test releases it (`FakeJobs.hold_creates`): the
Job exists and runs, and the CLI has not read its id. A real SIGINT then reaches the CLI process;
the Job must end cancelled (found by the command's `hubskills-launch` label), the CLI must say
so and exit 130. Every Job's process really runs (`tests/fakes/jobs_server.py`); the model
answers only after the test ends, so no Job gets further than its first model call.
"""

from __future__ import annotations

import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import re  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from cli_process import start  # noqa: E402
from fakes.hub_server import FakeHub  # noqa: E402
from spot_setup import SKILL, fake_hub  # noqa: E402
from test_evaluate import make_skill  # noqa: E402
from test_verify_hub import verify  # noqa: E402
from test_verify_jobs import pushed_run  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.evaluation.config import EvalConfig  # noqa: E402
from registry.jobs import cancel_run, collect, resume_on_jobs, run_on_jobs  # noqa: E402
from registry.jobs.launches import LaunchFailed  # noqa: E402

KEY = "sk-interrupt-create-0123456789abcdef"
LIST = ("GET", "/api/jobs/boss")  # the label lookup (its query is not recorded)
STARTED = "Hugging Face Job(s) this command had started"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub with Jobs (boss's) and the fake model."""
    for server in fake_hub(monkeypatch, env={"OPENAI_API_KEY": KEY}):
        monkeypatch.setenv("OPENAI_BASE_URL", server.model.url)  # type: ignore[attr-defined]
        yield server


def wait_for(condition: Callable[[], bool], process: subprocess.Popen, what: str,
             timeout: float = 180) -> None:
    """Wait until ``condition`` holds, the CLI process still running."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def interrupt_held_create(hub: FakeHub, *args: str | Path,
                          holds: int = 1) -> tuple[subprocess.Popen, str]:
    """`hubskills ARGS`, sent SIGINT while the fake holds the answer of its create number
    ``holds``; the answer is released once the CLI looked the label up (or ended). The ended
    process and its stderr. The Jobs' model answers only after the test."""
    hub.model.latency = 600  # type: ignore[attr-defined]
    go = hub.jobs.hold_creates(after=holds - 1)
    process = start(*args)
    return process, signal_while_held(hub, process, go)


def signal_while_held(hub: FakeHub, process: subprocess.Popen, go: threading.Event,
                      sig: signal.Signals = signal.SIGINT) -> str:
    """Once the fake holds a create of `process`, send it ``sig``; release the create once the
    CLI looked its launch label up (or ended). The ended process's stderr."""
    wait_for(lambda: bool(hub.jobs.held), process, "a create to hold")
    before = len(hub.requests)
    process.send_signal(sig)
    deadline = time.monotonic() + 120
    while process.poll() is None and LIST not in hub.requests[before:]:
        assert time.monotonic() < deadline, "the CLI neither looked up nor ended"
        time.sleep(0.05)
    go.set()
    return process.communicate(timeout=120)[1]


def launch_label(hub: FakeHub) -> str:
    """The one launch label every Job of the command carries."""
    labels = {spec["labels"].get("hubskills-launch") for spec in hub.jobs.specs.values()}
    [label] = labels
    assert label and re.fullmatch(r"[0-9a-f]{32}", label)
    return label


def test_ctrl_c_while_the_spot_check_job_is_created_cancels_it(hub, tmp_path):
    run_id = pushed_run(tmp_path)
    process, stderr = interrupt_held_create(hub, "verify", SKILL, "--run", run_id,
                                            "--resample", "9", "--on", "jobs")
    [job_id] = hub.jobs.held
    assert process.returncode == 130, stderr
    assert hub.jobs.wait(job_id) == "CANCELED"
    assert f"cancelled 1 {STARTED}: {job_id}" in stderr
    assert hub.jobs.specs[job_id]["labels"]["hubskills-spot-check"] == run_id
    launch_label(hub)
    assert "Traceback" not in stderr


def test_ctrl_c_between_shard_creates_cancels_the_started_and_the_one_in_flight(hub, tmp_path):
    skill = make_skill(tmp_path, 3)
    process, stderr = interrupt_held_create(  # shard 0 answered, shard 1 held
        hub, "eval", skill, "-m", "openai/gpt-4o-mini", "--runs", "1", "--on", "jobs",
        "--shards", "3", "--poll", "0.2", holds=2)
    assert process.returncode == 130, stderr
    assert len(hub.jobs.jobs) == 2, stderr  # shard 2 was never created
    assert {hub.jobs.wait(job_id) for job_id in hub.jobs.jobs} == {"CANCELED"}
    assert f"cancelled 2 {STARTED}: job000001, job000002" in stderr
    assert {spec["labels"]["hubskills-shard"] for spec in hub.jobs.specs.values()} == {"0", "1"}
    [run_id] = {spec["labels"]["hubskills-run"] for spec in hub.jobs.specs.values()}
    assert f"Hint: hubskills eval {skill} --on jobs --resume {run_id}" in stderr
    launch_label(hub)
    assert "Traceback" not in stderr


def test_a_cancel_that_fails_names_the_label_commands(hub, tmp_path):
    run_id = pushed_run(tmp_path)
    hub.fail_next(1, status=403, path_contains="/cancel")
    process, stderr = interrupt_held_create(hub, "verify", SKILL, "--run", run_id,
                                            "--resample", "9", "--on", "jobs")
    [job_id] = hub.jobs.held
    assert process.returncode == 130, stderr
    assert hub.jobs.jobs[job_id].stage == "RUNNING"  # still billing: the user must be told
    label = f"hubskills-launch={launch_label(hub)}"
    flat = " ".join(stderr.split())
    assert "this command's Jobs could not be looked up or cancelled" in flat
    assert f"Jobs labelled {label} may still be running, and billing" in flat
    assert f"Hint: hf jobs ps --label {label} --namespace boss -q | xargs -n1 hf jobs cancel " \
           "--namespace boss" in flat
    assert "Traceback" not in stderr


def test_a_job_not_listed_yet_after_ctrl_c_is_named_by_its_label(hub, tmp_path):
    run_id = pushed_run(tmp_path)
    hub.jobs.list_held = False  # the Hub lists the Job only later
    process, stderr = interrupt_held_create(hub, "verify", SKILL, "--run", run_id,
                                            "--resample", "9", "--on", "jobs")
    [job_id] = hub.jobs.held
    assert process.returncode == 130, stderr
    assert hub.jobs.jobs[job_id].stage == "RUNNING"  # not found, so not cancelled: say so
    label = f"hubskills-launch={launch_label(hub)}"
    assert f"may appear later labelled {label}" in " ".join(stderr.split())
    assert f"Hint: hf jobs ps --label {label} --namespace boss -q" in " ".join(stderr.split())


def test_a_create_that_fails_after_starting_the_job_cancels_it(hub, tmp_path, capsys):
    run_id = pushed_run(tmp_path)
    hub.jobs.answer_creates_with = 504  # a gateway timeout, though the Job was created
    hub.model.latency = 600  # the Job's model answers only after the test

    code, _, stderr = verify(capsys, "--run", run_id, "--resample", "9", "--on", "jobs")

    [job_id] = hub.jobs.jobs
    assert code == 1, stderr
    assert hub.jobs.wait(job_id) == "CANCELED"
    assert "answered 504" in stderr
    assert f"cancelled 1 {STARTED}: {job_id}" in " ".join(stderr.split())


def test_a_run_whose_only_create_failed_is_collected_as_not_started(hub, tmp_path):
    hub.fail_next(1, status=502, path_contains="/api/jobs/boss")  # the create; the Job unknown
    settings = Settings.from_env()
    with pytest.raises(LaunchFailed) as failed:
        run_on_jobs(make_skill(tmp_path, 2), EvalConfig(models=["openai/gpt-4o-mini"], runs=1),
                    settings, shards=2, poll_s=0.05)
    assert hub.jobs.jobs == {} and "answered 502" in failed.value.message
    assert "no Job this command started was found running" in failed.value.message
    label = failed.value.undone.label  # a 502: the Job may exist, so the hint finds it
    assert label.startswith("hubskills-launch=")
    assert (failed.value.hint or "").startswith(f"hf jobs ps --label {label} --namespace boss")
    [run_id] = [path.parent.name for path in settings.runs_dir.glob("*/manifest.json")]
    found = []  # `runs show RUN_ID` collects it: it must end, not wait for Jobs never started
    waiter = threading.Thread(target=lambda: found.append(collect(settings, run_id, poll_s=0.05)),
                              daemon=True)
    waiter.start()
    waiter.join(120)
    [run] = found
    assert run.manifest.status == "interrupted" and run.rows == []
    assert "shard 0: not started; shard 1: not started" in (run.manifest.note or "")
    resume_on_jobs(settings, run_id, detach=True)  # what the CLI's hint runs: both shards go
    assert sorted(spec["labels"]["hubskills-shard"] for spec in hub.jobs.specs.values()) == \
        ["0", "1"]
    assert sorted(cancel_run(settings, run_id)) == sorted(hub.jobs.jobs)
