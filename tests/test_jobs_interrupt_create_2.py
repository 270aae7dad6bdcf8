"""No signal leaves a created Hugging Face Job running unsaid: `ci --on jobs`, and the handover
from a Job's create to its follow.

`hubskills ci --on jobs` handles SIGINT and SIGTERM itself; a real signal reaches its process
while the fake Hub holds a create's answer (`FakeJobs.hold_creates`, as in
`test_jobs_interrupt_create.py`), or while it follows the started Jobs. Then, in-process, a
`KeyboardInterrupt` (what a Ctrl-C is to Python) is raised at every line the CLI runs between
a create's answer and its follow step, one run per line (`Interrupter`): each Job must end
cancelled and said, or (a sharded run's Jobs, all started) said to go on with the command that
collects them.
"""

from __future__ import annotations

import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import contextlib  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from types import FrameType  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402
from cli_process import REPO_ROOT, cli_env  # noqa: E402
from fakes.hub_server import FakeHub  # noqa: E402
from spot_setup import SKILL, fake_hub  # noqa: E402
from test_ci_gate import commit_all, git  # noqa: E402
from test_evaluate import make_skill  # noqa: E402
from test_jobs_interrupt_create import (  # noqa: E402
    LIST,
    STARTED,
    launch_label,
    signal_while_held,
    wait_for,
)
from test_verify_jobs import pushed_run  # noqa: E402

from registry.cli import main  # noqa: E402
from registry.config import Settings  # noqa: E402
from registry.hub import JobsClient  # noqa: E402
from registry.jobs import cancel_run  # noqa: E402

KEY = "sk-interrupt-create-2-0123456789abcdef"
# The code that hands a created Job over to its follow step: the interrupter counts the lines
# run there, and in the `with` blocks and dataclass `__init__`s it calls (the other callees it
# reaches, the printer or an upload, run through without a stop).
HANDOVER = (str(REPO_ROOT / "registry" / "jobs"), str(REPO_ROOT / "registry" / "hub" / "jobs.py"),
            *(str(REPO_ROOT / "registry" / "cli" / name) for name in
              ("_verify_spot.py", "jobs.py", "_jobs_progress.py")))
CALLED = (contextlib.__file__, "<string>")


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub with Jobs (boss's) and the fake model."""
    for server in fake_hub(monkeypatch, env={"OPENAI_API_KEY": KEY}):
        monkeypatch.setenv("OPENAI_BASE_URL", server.model.url)  # type: ignore[attr-defined]
        yield server


def jobs_wait_for_the_model(hub: FakeHub) -> None:
    """From now on the model answers only after the test: no Job gets further than its first
    model call."""
    hub.model.latency = 600  # type: ignore[attr-defined]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout whose one skill (three cases: three shards) is new since HEAD."""
    root = tmp_path / "checkout"
    root.mkdir()
    git(root, "init", "-q")
    (root / "README.md").write_text("skills\n")
    commit_all(root, "start")
    make_skill(root, 3)
    return root


def start_ci(checkout: Path) -> subprocess.Popen[str]:
    """`hubskills ci --on jobs` in ``checkout``, as CI runs it (its own process, pipes)."""
    return subprocess.Popen(
        [sys.executable, "-m", "registry.cli", "ci", "--base", "HEAD", "-m",
         "openai/gpt-4o-mini", "--runs", "1", "--on", "jobs"], cwd=checkout,
        env=cli_env(PYTHONPATH=str(REPO_ROOT)), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def signal_held_create(hub: FakeHub, checkout: Path, sig: signal.Signals,
                       holds: int) -> tuple[subprocess.Popen, str]:
    """`ci --on jobs`, sent ``sig`` while the fake holds the answer of its create number
    ``holds``; the answer is released once the CLI looked its label up (or ended)."""
    jobs_wait_for_the_model(hub)
    go = hub.jobs.hold_creates(after=holds - 1)
    process = start_ci(checkout)
    return process, " ".join(signal_while_held(hub, process, go, sig).split())


def test_ctrl_c_while_ci_starts_its_jobs_cancels_the_started_and_the_one_in_flight(
        hub, checkout):
    process, stderr = signal_held_create(hub, checkout, signal.SIGINT, holds=2)
    assert process.returncode == 130, stderr
    assert len(hub.jobs.jobs) == 2, stderr  # shard 2 was never created
    assert {hub.jobs.wait(job_id) for job_id in hub.jobs.jobs} == {"CANCELED"}
    assert "ci stopped by SIGINT: no verdict; its Jobs were being started" in stderr
    assert f"SIGINT while starting Hugging Face Jobs: cancelled 2 {STARTED}: job000001, " \
           "job000002" in stderr
    launch_label(hub)
    assert "Traceback" not in stderr


def test_sigterm_while_ci_starts_its_jobs_cancels_them_and_exits_143(hub, checkout):
    process, stderr = signal_held_create(hub, checkout, signal.SIGTERM, holds=1)
    [job_id] = hub.jobs.held
    assert process.returncode == 143, stderr
    assert list(hub.jobs.jobs) == [job_id]
    assert hub.jobs.wait(job_id) == "CANCELED"
    assert f"SIGTERM while starting Hugging Face Jobs: cancelled 1 {STARTED}: {job_id}" in stderr
    assert "Traceback" not in stderr


def test_ctrl_c_once_cis_jobs_all_started_leaves_them_going_and_names_the_collect(
        hub, checkout):
    jobs_wait_for_the_model(hub)
    process = start_ci(checkout)
    wait_for(lambda: len(hub.jobs.jobs) == 3 and LIST in hub.requests, process,
             "the three Jobs started and followed")
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    stderr = " ".join(stderr.split())
    [run_id] = {spec["labels"]["hubskills-run"] for spec in hub.jobs.specs.values()}
    assert process.returncode == 130, stderr
    assert {job.stage for job in hub.jobs.jobs.values()} == {"RUNNING"}
    assert f"ci stopped by SIGINT: no verdict; the Jobs of run {run_id} go on" in stderr
    assert f"Hint: hubskills runs show {run_id} # collect it; or: hubskills jobs cancel " \
           f"{run_id}" in stderr
    assert "Traceback" not in stderr


class Interrupter:
    """Raise `KeyboardInterrupt` where a Ctrl-C could land: at line (or return) number ``at``
    that this thread runs in the `HANDOVER` code after `JobsClient.run` returned a Job; or,
    when there are fewer, at the first line of the function named ``until`` (the follow
    step), and say so (``reached_until``). Through `sys.settrace`, the interpreter's own
    hook: the code runs unchanged."""

    def __init__(self, at: int, until: str) -> None:
        self.at, self.until = at, until
        self.armed, self.seen, self.reached_until = False, 0, False
        self.where = ""
        self.callers: list[FrameType] = []  # frames running when it armed

    def __enter__(self) -> Interrupter:
        sys.settrace(self._called)
        return self

    def __exit__(self, *_: Any) -> None:
        sys.settrace(None)
        for frame in self.callers:  # no hook left on a frame of a later run
            frame.f_trace = None

    @staticmethod
    def _counted(frame: FrameType) -> bool:
        if frame.f_code.co_filename in CALLED:
            frame = frame.f_back or frame
        return frame.f_code.co_filename.startswith(HANDOVER)

    def _called(self, frame: FrameType, event: str, _arg: Any) -> Any:
        if frame.f_code is JobsClient.run.__code__:
            return self._created
        if self.armed and frame.f_code.co_name == self.until:
            self.reached_until, self.at = True, self.seen
        return self._line if self.armed and self._counted(frame) else None

    def _created(self, frame: FrameType, event: str, _arg: Any) -> Any:
        if event == "return":  # the create answered: every frame above is watched
            self.armed, caller = True, frame.f_back
            while caller is not None:
                if self._counted(caller):
                    caller.f_trace = self._line
                    self.callers.append(caller)
                caller = caller.f_back
        return self._created

    def _line(self, frame: FrameType, event: str, _arg: Any) -> Any:
        if self.where:
            return None
        if event in ("line", "return"):
            if self.seen == self.at:
                self.where = f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno} {event}"
                raise KeyboardInterrupt  # the hook is unset with it: one per run
            self.seen += 1
        return self._line


def interrupted_runs(until: str, *argv: str) -> Iterator[tuple[Interrupter, int]]:
    """`hubskills ARGV` in this process, once per point between the create's answer and
    ``until`` (the last one: its first line): where it was interrupted, and the exit code."""
    at, reached = 0, False
    while not reached:
        with Interrupter(at, until) as interrupter, pytest.raises(SystemExit) as ended:
            main(list(argv))
        assert interrupter.where, f"the interrupter never armed (point {at})"
        reached, at = interrupter.reached_until, at + 1
        yield interrupter, int(ended.value.code or 0)


def test_no_instant_between_the_spot_jobs_create_and_its_follow_leaves_it_running(
        hub, tmp_path, capsys):
    run_id = pushed_run(tmp_path)
    jobs_wait_for_the_model(hub)
    points = 0
    for interrupter, code in interrupted_runs(
            "follow_spot_job", "verify", SKILL, "--run", run_id, "--resample", "9", "--on",
            "jobs"):
        stderr = " ".join(capsys.readouterr().err.split())
        job_id = sorted(hub.jobs.jobs)[-1]
        said = (f"Cancelled Hugging Face Job {job_id}" in stderr
                or f"cancelled 1 {STARTED}: {job_id}" in stderr)
        assert (code, hub.jobs.jobs[job_id].stage, said) == (130, "CANCELED", True), \
            f"Ctrl-C at {interrupter.where}: {stderr}"
        points += 1
    assert points > 5  # the sweep covered the handover, not only its end


def test_no_instant_between_a_sharded_runs_last_create_and_following_leaves_it_unsaid(
        hub, tmp_path, capsys):
    skill = make_skill(tmp_path, 2)
    jobs_wait_for_the_model(hub)
    outcomes = []
    for interrupter, code in interrupted_runs(
            "collect", "eval", str(skill), "-m", "openai/gpt-4o-mini", "--runs", "1", "--on",
            "jobs", "--shards", "1", "--poll", "0.2"):
        stderr = " ".join(capsys.readouterr().err.split())
        job_id = sorted(hub.jobs.jobs)[-1]
        run_id = hub.jobs.specs[job_id]["labels"]["hubskills-run"]
        stage = hub.jobs.jobs[job_id].stage
        said = {"CANCELED": [f"cancelled 1 {STARTED}: {job_id}",  # and how to start it again
                             f"hubskills eval {skill} --on jobs --resume {run_id}"],
                "RUNNING": [f"the Jobs of run {run_id} go on", f"hubskills runs show {run_id}"]}
        assert code == 130 and all(line in stderr for line in said.get(stage, ["?"])), \
            f"Ctrl-C at {interrupter.where}: the Job {stage.lower()}; {stderr}"
        if stage == "RUNNING":  # stopped as the hint says: no process left behind
            assert cancel_run(Settings.from_env(), run_id) == [job_id]
        outcomes.append(stage)
    # The sweep crossed the handover: cancelled up to it, going on from it.
    assert outcomes[0] == "CANCELED" and outcomes[-1] == "RUNNING" and len(outcomes) > 5
