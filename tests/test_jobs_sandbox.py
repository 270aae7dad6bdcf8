"""Code on Hugging Face Jobs: python checks and agent mode run in bubblewrap inside the shard.

The fake Jobs runner (`tests/fakes/jobs_server.py`) starts each Job's command as a local
subprocess, and this machine has bubblewrap, so a shard's probe, its checks and its agent's
commands are the real ones. An image without a sandbox is simulated by pointing
`HUBSKILLS_BWRAP` (what the image sets) at a binary that does not exist.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.hub_server import FakeHub
from fakes.openai_server import FakeOpenAIServer
from fakes.tool_script import AgentScript
from sandbox_required import bwrap_sandbox
from test_agent_eval import make_skill as make_agent_skill
from test_jobs import answer as jobs_answer

from registry.cli import main
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.jobs import run_on_jobs
from registry.jobs.bootstrap import APT_INSTALL, BOOTSTRAP, bwrap_install
from registry.jobs.sandbox_check import NO_SANDBOX_LINE, SANDBOX_LINE
from registry.results.report import summarize
from registry.results.runs import read_manifest, read_transcripts

KEY = "sk-test-jobs-sandbox-0123456789abcdef"
MODEL = "openai/gpt-4o-mini"


def answer(body: dict) -> str:
    """`test_jobs.answer`, without the leaked key."""
    return jobs_answer(body, leak=None)


def code_skill(root: Path) -> Path:
    """A skill whose suite has python checks: `inside` passes only when run in bubblewrap (its
    working folder is the sandbox's), `host` fails when run there (a file on the host, under
    `root`, is out of its sight)."""
    folder = root / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    host_file = root / "on-the-host"
    host_file.write_text("only on the host\n")
    (folder / "SKILL.md").write_text(
        "---\nname: zorblax-ports\ndescription: \"Ports of the zorblax daemon. Use when "
        "configuring zorblax.\"\nmetadata:\n  version: \"1.0.0\"\n---\n\nZorblax listens on "
        "port 4417.\n")
    inside = ("import os\ndef check(output, files):\n"
              "    return os.getcwd() == '/workspace' and '4417' in output\n")
    host = f"import os\ndef check(output, files):\n    return os.path.exists({str(host_file)!r})\n"
    cases = [{"id": f"inside{i}", "prompt": f"Question {i}: which port does zorblax use?",
              "checks": [{"type": "python", "code": inside}]} for i in range(3)]
    cases.append({"id": "host", "prompt": "Which port does zorblax use?",
                  "checks": [{"type": "python", "code": host}]})
    (folder / "evals" / "evals.json").write_text(json.dumps({"skill_name": "zorblax-ports",
                                                             "cases": cases}))
    return folder


@pytest.fixture
def hub():
    with FakeHub() as server:
        server.jobs.image_env = {"PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1"}
        yield server


def env_for(hub: FakeHub, home: Path, **extra: str) -> dict[str, str]:
    return {"HUBSKILLS_HOME": str(home), "HF_ENDPOINT": hub.url, "HF_TOKEN": hub.token,
            **extra}


def job_lines(hub: FakeHub) -> list[str]:
    return [line for job_id in hub.jobs.jobs for line in hub.jobs.logs(job_id)]


def test_python_checks_run_in_bubblewrap_inside_the_shard(hub, tmp_path):
    bwrap_sandbox()
    skill = code_skill(tmp_path)
    config = EvalConfig(models=[MODEL], runs=2, temperature=0.0)
    with FakeOpenAIServer(responder=answer, api_key=KEY) as models:
        keys = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": models.url}
        local = run_evaluation(skill, config, Settings.from_env(env_for(hub, tmp_path / "a",
                                                                        **keys)))
        run = run_on_jobs(skill, config, Settings.from_env(env_for(hub, tmp_path / "b", **keys)),
                          shards=2, poll_s=0.2)
    assert run.manifest.status == "complete" and len(run.rows) == 4 * 2 * 2
    assert (run.manifest.sandbox, run.manifest.code_checks) == ("bwrap", "bwrap")
    assert (local.manifest.sandbox, local.manifest.code_checks) == ("bwrap", "bwrap")
    inside = [r for r in run.rows if r.case_id.startswith("inside")]
    assert {r.checks[0].passed for r in inside if "4417" in r.output} == {True}  # it ran there
    assert {r.checks[0].passed for r in run.rows if r.case_id == "host"} == {False}
    summaries = [s.to_dict() for s in summarize(run.rows)]
    assert summaries == [s.to_dict() for s in summarize(local.rows)]
    assert 0 < summaries[0]["stats"]["skill"]["pass_rate"] < 1
    lines = job_lines(hub)
    assert sorted(line for line in lines if line.startswith(SANDBOX_LINE)) == [
        f"{SANDBOX_LINE} 0 bwrap", f"{SANDBOX_LINE} 1 bwrap"]
    assert not any(line.startswith("bubblewrap:") for line in lines)  # bwrap was there already


def untimed(summaries: list) -> list[dict]:
    """Summaries as dicts without the measured wall times (the one thing two runs differ in)."""
    def drop(value):
        if isinstance(value, dict):
            return {k: drop(v) for k, v in value.items() if k != "wall_s"}
        return value
    return [drop(summary.to_dict()) for summary in summaries]


def test_agent_mode_on_jobs_gives_the_summary_of_the_same_local_run(hub, tmp_path, monkeypatch):
    bwrap_sandbox()
    # The same tools as the fake Job's "image" (this interpreter's folder first on PATH): the
    # agent's `python3` must be the same Python here and there, or its error texts differ.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep
                       + os.environ.get("PATH", ""))
    skill = make_agent_skill(tmp_path)
    config = EvalConfig(models=["local/fake-agent"], runs=1, mode="agent",
                        case_ids=["c1", "c4", "c5", "c6"])
    script = AgentScript(skill="zorblax-ports", trigger="zorblax")
    with FakeOpenAIServer(responder=script) as models:
        base = {"HUBSKILLS_BASE_URL": models.url}
        local = run_evaluation(skill, config, Settings.from_env(env_for(hub, tmp_path / "a",
                                                                        **base)))
        asked = script.requests
        settings = Settings.from_env(env_for(hub, tmp_path / "b", **base))
        run = run_on_jobs(skill, config, settings, shards=2, poll_s=0.2)
    assert script.requests - asked == asked == 4 * 2 * 5  # five model turns a sample, both
    assert run.manifest.status == "complete" and run.manifest.mode == "agent"
    assert (run.manifest.sandbox, run.manifest.agent_budget) == ("bwrap",
                                                                 local.manifest.agent_budget)
    assert run.manifest.case_ids == local.manifest.case_ids == ["c1", "c4", "c5", "c6"]
    assert {r.stop_reason for r in run.rows} == {"answered"}
    assert sum(r.tool_counts().get("run", 0) for r in run.rows) == 4 * 2 * 2  # commands ran
    assert untimed(summarize(run.rows)) == untimed(summarize(local.rows))
    # the shards' transcripts came back with the rows: `runs show --case` works as locally
    def sample(record: dict) -> tuple:
        return (record["model"], record["arm"], record["case_id"], record["repeat"],
                record["stop_reason"], [change["path"] for change in record["diff"]],
                [step["kind"] for step in record["transcript"]])
    there = read_transcripts(settings.runs_dir, run.manifest.run_id)
    here = read_transcripts(Settings.from_env(env_for(hub, tmp_path / "a")).runs_dir,
                            local.manifest.run_id)
    assert len(there) == 4 * 2 and sorted(map(sample, there)) == sorted(map(sample, here))


def test_a_job_without_a_sandbox_stops_before_any_model_call(hub, tmp_path, monkeypatch,
                                                            capsys):
    hub.jobs.image_env["HUBSKILLS_BWRAP"] = str(tmp_path / "no-bwrap-in-this-image")
    skill = code_skill(tmp_path)
    with FakeOpenAIServer(responder=answer, api_key=KEY) as models:
        for name, value in env_for(hub, tmp_path / "home", OPENAI_API_KEY=KEY, HF_HUB_OFFLINE="",
                                   OPENAI_BASE_URL=models.url).items():
            monkeypatch.setenv(name, value)
        args = ["eval", str(skill), "-m", MODEL, "--runs", "1", "--on", "jobs", "--shards", "2",
                "--poll", "0.2"]
        with pytest.raises(SystemExit) as stopped:
            main(args)
        said = capsys.readouterr()
        assert models.requests == []  # no shard asked a model anything
        assert len(hub.jobs.jobs) == 2  # and none was retried: a retry would stop again
        main([*args, "--skip-code-checks"])
        skipped = capsys.readouterr()
        assert len(models.bodies) == 4 * 2 and len(hub.jobs.jobs) == 4  # (and a probe each)
        run_id = re.search(r"run (\d{8}-\d{6}-\w+) stopped", said.err).group(1)
        del hub.jobs.image_env["HUBSKILLS_BWRAP"]  # an image whose bubblewrap works
        main([*args, "--resume", run_id, "--image", "me/python-bwrap:3.12"])
        resumed = capsys.readouterr()
    assert stopped.value.code == 1 and "Traceback" not in said.err
    assert "stopped before any model call" in said.err and "--image" in said.err
    assert "bubblewrap is not installed" in said.err
    reasons = [line for line in job_lines(hub) if line.startswith(NO_SANDBOX_LINE)]
    assert len(reasons) == 2 and all("no-bwrap-in-this-image" in line for line in reasons)
    # --skip-code-checks: the same image runs the rest, and the report says what was left out
    assert "left out" in skipped.err and "with skill" in skipped.out.lower()
    # the stopped run, resumed in an image with a sandbox: every check runs there
    images = [job.spec.get("dockerImage") for job in hub.jobs.jobs.values()]
    assert images == ["python:3.12"] * 4 + ["me/python-bwrap:3.12"] * 2
    assert len(models.bodies) == 2 * 4 * 2 and "with skill" in resumed.out.lower()
    assert "left out" not in resumed.err
    finished = read_manifest(Settings.from_env().runs_dir, run_id)
    assert (finished.status, finished.sandbox, finished.code_checks) == ("complete", "bwrap",
                                                                         "bwrap")
    assert KEY not in said.err + said.out + skipped.err + skipped.out + resumed.out


def test_what_cannot_run_on_jobs_is_refused_before_anything_starts(hub, tmp_path):
    settings = Settings.from_env(env_for(hub, tmp_path / "home"))
    agent = make_agent_skill(tmp_path)
    with pytest.raises(HubskillsError, match="agent CLIs are not in the job image") as caught:
        run_on_jobs(agent, EvalConfig(models=["local/x"], mode="agent", harness="codex"),
                    settings)
    assert "--mode agent --on jobs" in (caught.value.hint or "")
    with pytest.raises(HubskillsError, match="--sandbox none is refused on Hugging Face Jobs"):
        run_on_jobs(code_skill(tmp_path / "code"), EvalConfig(models=["local/x"],
                                                              sandbox="none"), settings)
    assert hub.jobs.jobs == {} and hub.requests == []


def test_the_job_installs_bubblewrap_only_when_the_run_needs_it_and_it_is_missing():
    assert bwrap_install(True, True, True, True) is None  # already in the image
    assert bwrap_install(False, False, True, True) is None  # no code runs
    line, command = bwrap_install(True, False, True, True)
    assert command == APT_INSTALL and "installing" in line
    assert "bubblewrap" in APT_INSTALL and "--no-install-recommends" in APT_INSTALL
    assert bwrap_install(True, False, False, True) == (
        "bubblewrap: not in the image and not installable here (not root); the shard's probe "
        "decides", None)
    assert bwrap_install(True, False, True, False)[1] is None  # no apt-get: not fatal


def test_the_bootstrap_runs_the_install_step_with_the_images_apt_get(tmp_path):
    # A PATH holding only a recording `apt-get`: bwrap is "missing" and no real apt runs.
    bin_dir, calls = tmp_path / "bin", tmp_path / "apt-calls"
    bin_dir.mkdir()
    apt = bin_dir / "apt-get"
    apt.write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\n")
    apt.chmod(0o755)

    def bootstrap(needed: str) -> str:
        done = subprocess.run([sys.executable, "-c", BOOTSTRAP, "http://127.0.0.1:9", "ns/r",
                               "w.whl", needed, "run", "0"], env={"PATH": str(bin_dir)},
                              capture_output=True, text=True, timeout=60)
        return done.stdout  # the wheel download then fails (no token): it never gets there

    assert "bubblewrap" not in bootstrap("0") and not calls.exists()
    said = bootstrap("1")
    if os.geteuid() != 0:
        assert "not installable here (not root)" in said and not calls.exists()
        return
    assert "installing it with apt-get" in said
    assert calls.read_text().splitlines() == [
        "update -qq", "install -y -qq --no-install-recommends bubblewrap"]
    assert "bubblewrap: not installed (apt-get exit 0)" in said  # the fake put no bwrap there
