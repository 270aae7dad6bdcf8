"""Hugging Face Jobs for the fake Hub: the routes the unmodified client calls, and a local runner.

`FakeJobs` is attached to every `FakeHub` as `hub.jobs`. A created job's `command` runs at once
as a subprocess on this machine (no container: the "image" is this Python, with the PATH,
a private HOME and working folder per job), with the job's `environment` and `secrets` as its
environment, exactly as a real Job receives them. Its stdout and stderr become the job's log,
served as server-sent events; its exit code decides the stage (`COMPLETED` or `ERROR`);
`cancel` ends it (`CANCELED`) and `kill` simulates a lost machine (`ERROR`, SIGKILL). Labels are
kept as sent and the list route filters on them (`?label=k=v`, all must match) and on `?stage=`,
as the Hub does. A create may be held (`hold_creates`: the Job exists and runs, its answer waits
for the test's event, as when the client is cut short before reading it) or answered with an
error after the Job was created (`answer_creates_with`, a gateway timeout that still started it).

    hub.jobs.image_env = {"PIP_NO_INDEX": "1"}   # what the image itself sets
    hub.jobs.specs[job_id]                        # the request body the client sent
    hub.jobs.logs(job_id)                         # every line the job printed
    go = hub.jobs.hold_creates(after=1)           # creates after the first wait for go.set()
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

TERMINAL = ("COMPLETED", "CANCELED", "ERROR", "DELETED")
HARDWARE = [
    {"name": "cpu-basic", "prettyName": "CPU Basic", "cpu": "2 vCPU", "ram": "16 GB",
     "ephemeralStorage": "50 GB", "accelerator": None, "unitCostMicroUSD": 167,
     "unitCostUSD": 0.000167, "unitLabel": "minute"},
    {"name": "cpu-upgrade", "prettyName": "CPU Upgrade", "cpu": "8 vCPU", "ram": "32 GB",
     "ephemeralStorage": "50 GB", "accelerator": None, "unitCostMicroUSD": 500,
     "unitCostUSD": 0.0005, "unitLabel": "minute"},
]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


@dataclass
class Job:
    """One job: its request, its process and what it printed."""

    id: str
    owner: str
    spec: dict[str, Any]
    created_at: str = field(default_factory=_now)
    stage: str = "SCHEDULING"
    message: str | None = None
    lines: list[tuple[str, str]] = field(default_factory=list)  # (timestamp, text)
    process: subprocess.Popen | None = None
    workdir: str = ""
    ended: threading.Event = field(default_factory=threading.Event)

    def info(self) -> dict[str, Any]:
        """The JobInfo JSON the client parses (secrets by name only, as the Hub shows them)."""
        image = {"spaceId": self.spec["spaceId"]} if "spaceId" in self.spec else {
            "dockerImage": self.spec.get("dockerImage")}
        return {"id": self.id, "createdAt": self.created_at, **image,
                "command": self.spec.get("command", []),
                "arguments": self.spec.get("arguments", []),
                "environment": self.spec.get("environment", {}),
                "secrets": dict.fromkeys(self.spec.get("secrets") or {}, "***"),
                "flavor": self.spec.get("flavor"), "labels": self.spec.get("labels") or {},
                "owner": {"id": "0" * 24, "name": self.owner, "type": "user"},
                "status": {"stage": self.stage, "message": self.message}}


class FakeJobs:
    """The Jobs API of one fake Hub (see the module docstring)."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.jobs: dict[str, Job] = {}
        self.image_env: dict[str, str] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.held: list[str] = []  # jobs created whose create's answer is being held
        self.answer_creates_with: int | None = None  # a status answered after creating
        self.list_held = True  # False: held creates' Jobs are not listed yet (a lagging Hub)
        self._hold: tuple[int, threading.Event] | None = None

    # -- test helpers ----------------------------------------------------------------------

    @property
    def specs(self) -> dict[str, dict[str, Any]]:
        """Every job's request body, by job id."""
        return {job_id: job.spec for job_id, job in self.jobs.items()}

    def logs(self, job_id: str) -> list[str]:
        """Every line the job printed so far."""
        return [text for _, text in self.jobs[job_id].lines]

    def wait(self, job_id: str, timeout: float = 120) -> str:
        """Block until the job ends; its stage."""
        self.jobs[job_id].ended.wait(timeout)
        return self.jobs[job_id].stage

    def hold_creates(self, after: int = 0) -> threading.Event:
        """Hold the answer of every create after the first ``after`` until the event returned
        is set: the Job is created and runs, its id is in `held`, the client has not read it."""
        go = threading.Event()
        self._hold = (after, go)
        return go

    def kill(self, job_id: str) -> None:
        """Lose the job's machine: SIGKILL, stage ERROR (what a preempted job looks like)."""
        job = self.jobs[job_id]
        job.message = "machine lost"
        if job.process and job.process.poll() is None:
            os.killpg(job.process.pid, signal.SIGKILL)

    def stop_all(self) -> None:
        """End every job still running (the server is going away)."""
        for job in list(self.jobs.values()):
            if job.process and job.process.poll() is None:
                os.killpg(job.process.pid, signal.SIGKILL)
                job.ended.wait(10)

    # -- routes ----------------------------------------------------------------------------

    def route(self, method: str, rest: list[str], body: dict[str, Any],
              query: dict[str, list[str]]) -> Any:
        """Answer `/api/jobs/...`; None when no route matches."""
        if rest == ["hardware"] and method == "GET":
            return HARDWARE
        if len(rest) == 1 and method == "POST":
            return self._answer_create(self._create(rest[0], body))
        if len(rest) == 1 and method == "GET":
            labels = [label.partition("=") for label in query.get("label", [])]
            stages = query.get("stage", [])
            return [job.info() for job in self.jobs.values() if job.owner == rest[0]
                    and (self.list_held or job.id not in self.held)
                    and all((job.spec.get("labels") or {}).get(k) == v for k, _, v in labels)
                    and (not stages or job.stage in stages)]
        job = self.jobs.get(rest[1]) if len(rest) >= 2 else None
        if job is None:
            return None
        if len(rest) == 2 and method == "GET":
            return job.info()
        if rest[2:] == ["logs"] and method == "GET":
            events = "".join(f"data: {json.dumps({'data': text, 'timestamp': ts})}\n\n"
                             for ts, text in list(job.lines))
            return 200, events.encode(), {"Content-Type": "text/event-stream"}
        if rest[2:] == ["cancel"] and method == "POST":
            self._cancel(job)
            return {}
        return None

    def _answer_create(self, job: Job) -> Any:
        """The create's answer, once a hold on it is released (`hold_creates`)."""
        if self._hold is not None and len(self.jobs) > self._hold[0]:
            self.held.append(job.id)
            self._hold[1].wait(300)
        if self.answer_creates_with is not None:
            return self.answer_creates_with, b'{"error": "Gateway Timeout"}', {
                "Content-Type": "application/json"}
        return job.info()

    def _create(self, owner: str, spec: dict[str, Any]) -> Job:
        with self._lock:
            job = Job(id=f"job{next(self._ids):06d}", owner=owner, spec=spec)
            self.jobs[job.id] = job
        job.workdir = tempfile.mkdtemp(prefix=f"fake-{job.id}-")
        env = {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
               "HOME": job.workdir, "TMPDIR": job.workdir, "LANG": "C.UTF-8",
               "PYTHONUNBUFFERED": "1",
               **self.image_env, **spec.get("environment", {}), **(spec.get("secrets") or {})}
        job.process = subprocess.Popen(
            [*spec["command"], *spec.get("arguments", [])], cwd=job.workdir, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        job.stage = "RUNNING"
        job.lines.append((_now(), "===== Job started ====="))
        threading.Thread(target=self._follow, args=(job,), daemon=True).start()
        return job

    def _follow(self, job: Job) -> None:
        assert job.process and job.process.stdout
        for line in job.process.stdout:
            job.lines.append((_now(), line.rstrip("\n")))
        code = job.process.wait()
        if job.stage != "CANCELED":
            job.stage = "COMPLETED" if code == 0 else "ERROR"
            job.message = job.message or (None if code == 0 else f"exit code {code}")
        shutil.rmtree(job.workdir, ignore_errors=True)
        job.ended.set()

    def _cancel(self, job: Job) -> None:
        if job.stage in TERMINAL:
            return
        job.stage = "CANCELED"
        if job.process and job.process.poll() is None:
            os.killpg(job.process.pid, signal.SIGTERM)
