"""Evaluations on Hugging Face Jobs, against the fake Hub's Jobs routes and its local runner.

Every Job really runs: the runner starts the Job's command in a subprocess with the Job's
environment and secrets, the command downloads the wheel the client built from this checkout,
installs it with pip into a folder of its own and runs the shard from there. The "image" has
hubskills' dependencies already (`PIP_NO_DEPS`) and no package index (`PIP_NO_INDEX`).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from registry.cli import cli
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.jobs import cancel_run, collect, resume_on_jobs, run_on_jobs, shard_jobs
from registry.jobs.plan import JobPlan, carries_secret, split_units
from registry.jobs.remote import remote
from registry.results.report import summarize
from registry.results.runs import ResultRow, rows_to_jsonl
from tests.fakes.hub_server import FakeHub
from tests.fakes.openai_server import FakeOpenAIServer
from tests.test_evaluate import make_skill

KEY = "sk-test-jobs-0123456789abcdef"
MODEL = "openai/gpt-4o-mini"


def answer(body: dict, *, leak: str | None = KEY) -> str:
    """Right when told the fact, except on some (case, seed) pairs; it also leaks `leak`."""
    told = any("4417" in json.dumps(m.get("content")) for m in body["messages"])
    question = json.dumps(body["messages"][-1].get("content"))
    flaky = (sum(map(ord, question)) + int(body.get("seed") or 0)) % 3 == 0
    if told and not flaky:
        return f"port 4417 (key {leak})" if leak else "port 4417"
    return "Probably port 8080."


@pytest.fixture
def hub():
    with FakeHub() as server:
        server.jobs.image_env = {"PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1"}
        yield server


def settings_for(hub: FakeHub, model_server: FakeOpenAIServer, home: Path) -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": str(home), "HF_ENDPOINT": hub.url,
                              "HF_TOKEN": hub.token, "OPENAI_API_KEY": KEY,
                              "OPENAI_BASE_URL": model_server.url})


def repo_files(hub: FakeHub, prefix: str) -> dict[str, bytes]:
    """The results repo's files at `main` under `prefix`, as stored."""
    files = hub.repo("tester/hubskills-evals", "dataset").head.files
    return {path: data for path, data in files.items() if path.startswith(prefix)}


def shard_rows(hub: FakeHub, run_id: str) -> list[ResultRow]:
    files = repo_files(hub, f"jobs/{run_id}/rows/").values()
    return [ResultRow.model_validate_json(line)
            for data in files for line in data.decode().splitlines() if line]


def test_split_units_deals_every_unit_once_in_near_equal_shards():
    units = [("m", f"c{i}") for i in range(7)]
    shards = split_units(units, 3)
    assert [len(s) for s in shards] == [3, 2, 2]
    assert [u for s in shards for u in s] == units
    assert split_units(units[:2], 5) == [[units[0]], [units[1]]]  # never an empty shard


def test_three_shards_merge_into_the_summary_of_the_same_local_run(hub, tmp_path):
    with FakeOpenAIServer(responder=answer, api_key=KEY) as model_server:
        skill = make_skill(tmp_path)
        config = EvalConfig(models=[MODEL], runs=2, temperature=0.0)
        local = run_evaluation(skill, config, settings_for(hub, model_server, tmp_path / "a"))
        progress: list[tuple[int, int, str]] = []
        settings = settings_for(hub, model_server, tmp_path / "b")
        run = run_on_jobs(skill, config, settings, shards=3, poll_s=0.2,
                          progress=lambda *seen: progress.append(seen))
    summaries = [s.to_dict() for s in summarize(run.rows)]
    assert summaries == [s.to_dict() for s in summarize(local.rows)]
    assert 0 < summaries[0]["stats"]["skill"]["pass_rate"] < 1  # not a trivial all-pass
    assert run.manifest.status == "complete" and not run.manifest.is_partial
    assert run.manifest.samples_done == 24 and progress[-1][:2] == (24, 24)
    jobs = shard_jobs(settings, run.manifest.run_id)
    assert sorted(jobs) == [0, 1, 2] and all(j[-1].stage == "COMPLETED" for j in jobs.values())
    for job_id in hub.jobs.jobs:  # each shard ran the uploaded wheel, not this checkout
        installed = [line for line in hub.jobs.logs(job_id) if line.startswith("hubskills 0")]
        assert installed and installed[0].endswith("/site/registry")
    rows = shard_rows(hub, run.manifest.run_id)
    assert {r.run_id for r in rows} == {run.manifest.run_id} and len(rows) == 24
    assert {(r.produced_by, r.produced_via) for r in rows} == {(hub.user, "job")}


def test_secrets_reach_the_jobs_only_as_secrets(hub, tmp_path):
    with FakeOpenAIServer(responder=answer, api_key=KEY) as model_server:
        settings = settings_for(hub, model_server, tmp_path / "home")
        run = run_on_jobs(make_skill(tmp_path, 2), EvalConfig(models=[MODEL], runs=1),
                          settings, shards=2, poll_s=0.2)
    assert run.manifest.status == "complete"  # the key did reach the model server
    secrets = (KEY, hub.token)
    for job in hub.jobs.jobs.values():
        shown = json.dumps({k: v for k, v in job.spec.items() if k != "secrets"})
        assert not any(s in shown for s in secrets)
        assert set(job.spec["secrets"]) == {"HF_TOKEN", "OPENAI_API_KEY"}
        assert not any(s in line for line in hub.jobs.logs(job.id) for s in secrets)
    everything = b"".join(repo_files(hub, "").values()).decode(errors="replace")
    assert "port 4417" in everything and not any(s in everything for s in secrets)
    local = (settings.runs_dir / run.manifest.run_id / "rows.jsonl").read_text()
    assert "(redacted)" in local and KEY not in local


def test_a_skill_file_holding_a_key_is_refused_before_anything_is_sent(hub, tmp_path):
    skill = make_skill(tmp_path, 2)
    (skill / "notes.md").write_text(f"my key: {KEY}\n")
    with FakeOpenAIServer(responder=answer, api_key=KEY) as model_server:
        settings = settings_for(hub, model_server, tmp_path / "home")
        with pytest.raises(HubskillsError, match="notes.md") as caught:
            run_on_jobs(skill, EvalConfig(models=[MODEL], runs=1), settings, shards=2)
    assert KEY not in str(caught.value)
    assert hub.jobs.jobs == {} and ("dataset", "tester/hubskills-evals") not in hub.repos
    assert model_server.requests == []


def _blocking_server(block_after: int):
    """A model server that answers `block_after` requests, then holds the next ones."""
    release, reached = threading.Event(), threading.Event()
    count = [0]
    lock = threading.Lock()

    def responder(body: dict) -> str:
        with lock:
            count[0] += 1
            number = count[0]
        if number > block_after and not release.is_set():
            reached.set()
            release.wait(60)
        return answer(body)

    return FakeOpenAIServer(responder=responder, api_key=KEY), release, reached


def _wait(condition, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_lost_shard_resumes_without_asking_for_any_answered_sample(hub, tmp_path):
    server, release, reached = _blocking_server(block_after=5)
    with server as model_server:
        settings = settings_for(hub, model_server, tmp_path / "home")
        config = EvalConfig(models=[MODEL], runs=2, concurrency=1)
        run = run_on_jobs(make_skill(tmp_path, 4), config, settings, shards=1, detach=True,
                          flush_every=1, poll_s=0.2)
        run_id = run.manifest.run_id
        assert run.manifest.status == "running" and run.rows == []
        reached.wait(60)
        _wait(lambda: len(shard_rows(hub, run_id)) == 5)
        (job_id,) = hub.jobs.jobs
        hub.jobs.kill(job_id)  # the machine is lost mid-run
        assert hub.jobs.wait(job_id) == "ERROR"
        release.set()
        asked_before = len(model_server.bodies)  # completions (a run's probe lists models)
        resumed = resume_on_jobs(settings, run_id, poll_s=0.2)
        asked_after = len(model_server.bodies)
    assert asked_after - asked_before == 16 - 5  # only the samples without a row
    assert resumed.manifest.status == "complete" and len(resumed.rows) == 16
    keys = [(r.model, r.arm, r.case_id, r.repeat) for r in shard_rows(hub, run_id)]
    assert len(keys) == len(set(keys)) == 16  # no sample answered twice
    assert len(hub.jobs.jobs) == 2


def test_cancel_stops_every_shard_and_keeps_the_rows(hub, tmp_path):
    server, release, reached = _blocking_server(block_after=0)
    with server as model_server:
        settings = settings_for(hub, model_server, tmp_path / "home")
        run = run_on_jobs(make_skill(tmp_path, 4), EvalConfig(models=[MODEL], runs=1),
                          settings, shards=2, detach=True, poll_s=0.2)
        reached.wait(60)
        cancelled = cancel_run(settings, run.manifest.run_id)
        assert len(cancelled) == 2
        stages = [hub.jobs.wait(job_id) for job_id in cancelled]
        release.set()
        collected = collect(settings, run.manifest.run_id, poll_s=0.2)
    assert stages == ["CANCELED", "CANCELED"]
    assert collected.manifest.status == "interrupted" and collected.manifest.is_partial
    assert "--resume" in (collected.manifest.note or "")
    assert cancel_run(settings, run.manifest.run_id) == []  # nothing left to cancel


def test_detach_then_runs_show_prints_the_summary(hub, tmp_path):
    with FakeOpenAIServer(responder=answer, api_key=KEY) as model_server:
        skill = make_skill(tmp_path, 3)
        env = {"HUBSKILLS_HOME": str(tmp_path / "home"), "HF_ENDPOINT": hub.url,
               "HF_TOKEN": hub.token, "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": model_server.url,
               "HF_HUB_OFFLINE": "", "NO_COLOR": "1", "COLUMNS": "200"}
        runner = CliRunner()
        started = runner.invoke(cli, ["eval", str(skill), "-m", MODEL, "--runs", "1", "--on",
                                      "jobs", "--shards", "2", "--detach"], env=env)
        assert started.exit_code == 0, started.output
        run_id = next(word for word in started.output.split() if word.count("-") == 2)
        listed = runner.invoke(cli, ["jobs", "list", run_id, "--json"], env=env)
        assert {j["shard"] for j in json.loads(listed.stdout)} == {0, 1}
        every = runner.invoke(cli, ["jobs", "list", "--json"], env=env)
        assert {j["run"] for j in json.loads(every.stdout)} == {run_id}
        shown = runner.invoke(cli, ["runs", "show", run_id, "--poll", "0.2"], env=env)
        logs = runner.invoke(cli, ["jobs", "logs", run_id, "--shard", "1"], env=env)
    assert shown.exit_code == 0, shown.output
    assert MODEL in shown.output and "with skill" in shown.output.lower()
    assert "shard 1" in logs.output and "shard 0" not in logs.output
    assert KEY not in started.output + shown.output + logs.output


def test_a_sharded_run_verifies_through_the_cli_like_a_local_one(hub, tmp_path):
    """Red-team hole 17: the run saved from the Jobs' rows stores what a local run stores (its
    skill folder, summaries), so `hubskills verify RUN_ID` replays it: no `--skill`, no
    "not replayable"."""
    with FakeOpenAIServer(responder=answer, api_key=KEY) as model_server:
        skill = make_skill(tmp_path, 3)
        config = EvalConfig(models=[MODEL], runs=2, temperature=0.0)
        settings = settings_for(hub, model_server, tmp_path / "home")
        run = run_on_jobs(skill, config, settings, shards=2, poll_s=0.2)
        local = run_evaluation(skill, config, settings_for(hub, model_server, tmp_path / "a"))
    manifest, made_here = run.manifest, local.manifest
    assert manifest.summaries == made_here.summaries  # the same numbers, stored the same way
    assert manifest.skill_path and manifest.content_hash == made_here.content_hash
    env = {"HUBSKILLS_HOME": str(tmp_path / "home"), "HF_ENDPOINT": hub.url,
           "HF_TOKEN": hub.token, "NO_COLOR": "1", "COLUMNS": "200"}
    (skill / "SKILL.md").write_text("edited after the run\n")  # the run keeps what it evaluated
    found = CliRunner().invoke(cli, ["verify", manifest.run_id, "--json"], env=env)
    assert found.exit_code == 0, found.output
    report = json.loads(found.stdout)
    assert (report["status"], report["samples"]) == ("verified", 12), report
    assert report["checks_regraded"] == 24 and report["not_replayable"] == []


def test_collect_refuses_a_shard_file_whose_rows_are_not_the_runs(hub, tmp_path):
    """A red-team note: the shards' row files were merged by (model, case) alone, so a file of
    another run's rows (another run id, another skill's hash) became this run's answers."""
    with FakeOpenAIServer(responder=answer, api_key=KEY) as model_server:
        settings = settings_for(hub, model_server, tmp_path / "home")
        run = run_on_jobs(make_skill(tmp_path, 2), EvalConfig(models=[MODEL], runs=1),
                          settings, shards=1, poll_s=0.2)
        there = remote(settings, run.manifest.run_id)
        assert collect(settings, run.manifest.run_id, poll_s=0.2).manifest.status == "complete"
        foreign = [row.model_copy(update={"run_id": "20260101-000000-other", "passed": True})
                   for row in run.rows]
        there.files.add_rows(0, 99, foreign, rows_to_jsonl(foreign))
        with pytest.raises(HubskillsError, match="not this run's") as refused:
            collect(settings, run.manifest.run_id, poll_s=0.2)
    assert f"jobs/{run.manifest.run_id}" in str(refused.value)
    assert refused.value.hint == f"hubskills verify {run.manifest.run_id}  # names what differs"


def test_a_local_model_runs_on_jobs_with_its_base_url_from_the_command_line(hub, tmp_path):
    """Issue 38: `eval --on jobs -m local/... --base-url URL` was refused ("a local/ model needs
    the URL") while the same line without `--on jobs` ran; the shards now get the URL too."""
    with FakeOpenAIServer(responder=answer) as model_server:
        skill = make_skill(tmp_path, 2)
        env = {"HUBSKILLS_HOME": str(tmp_path / "home"), "HF_ENDPOINT": hub.url,
               "HF_TOKEN": hub.token, "HF_HUB_OFFLINE": "", "HUBSKILLS_BASE_URL": "",
               "NO_COLOR": "1", "COLUMNS": "200"}
        done = CliRunner().invoke(cli, ["eval", str(skill), "-m", "local/tiny", "--runs", "1",
                                        "--base-url", model_server.url, "--on", "jobs",
                                        "--shards", "1", "--poll", "0.2", "--json"], env=env)
        assert done.exit_code == 0, done.output
        asked = {body["model"] for body in model_server.bodies}
    summary = json.loads(done.stdout)
    assert summary["manifest"]["status"] == "complete" and asked == {"tiny"}
    assert summary["manifest"]["samples_done"] == 4


def test_a_base_url_given_with_a_credential_reaches_the_shards_but_not_the_dataset(hub,
                                                                                   tmp_path):
    """Review note: a credential in `--base-url` was written into the run's plan.json, a file
    of the results dataset (public by default); it now reaches the shards as a Job secret."""
    with FakeOpenAIServer(responder=answer) as model_server:
        url = model_server.url.replace("http://", "http://user:SECRETPW@")
        skill = make_skill(tmp_path, 2)
        env = {"HUBSKILLS_HOME": str(tmp_path / "home"), "HF_ENDPOINT": hub.url,
               "HF_TOKEN": hub.token, "HF_HUB_OFFLINE": "", "HUBSKILLS_BASE_URL": "",
               "NO_COLOR": "1", "COLUMNS": "200"}
        done = CliRunner().invoke(cli, ["eval", str(skill), "-m", "local/tiny", "--runs", "1",
                                        "--base-url", url, "--on", "jobs", "--shards", "1",
                                        "--poll", "0.2", "--json"], env=env)
        assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["manifest"]["samples_done"] == 4
    stored = repo_files(hub, "")
    assert "jobs/" + json.loads(done.stdout)["manifest"]["run_id"] + "/plan.json" in stored
    assert not [path for path, data in stored.items() if b"SECRETPW" in data]
    [job] = hub.jobs.jobs.values()
    assert "SECRETPW" not in json.dumps({k: v for k, v in job.spec.items() if k != "secrets"})
    assert "HUBSKILLS_BASE_URL" in job.spec["secrets"]
    assert not any("SECRETPW" in line for line in hub.jobs.logs(job.id))
    # a resume without the URL starts no Job that could not reach the model (a review note)
    run_id = json.loads(done.stdout)["manifest"]["run_id"]
    settings = Settings.from_env({k: v for k, v in env.items() if v})
    with pytest.raises(HubskillsError, match="held a credential") as refused:
        resume_on_jobs(settings, run_id, poll_s=0.2)
    assert "--base-url URL" in (refused.value.hint or "")
    again = resume_on_jobs(settings.with_(base_url=url), run_id, poll_s=0.2)
    assert again.manifest.status == "complete" and len(hub.jobs.jobs) == 1


def test_an_endpoint_whose_url_carries_a_credential_goes_with_the_secrets():
    """A Job's environment is shown on the Hub: a base URL holding a key (`?api-key=`,
    `user:pass@`) went there in the clear (a red-team note)."""
    from registry.config import Settings
    from registry.jobs.remote import job_env, job_secrets

    settings = Settings.from_env({}).with_(base_url="https://u:pw@models.example/v1",
                                           openai_base_url="https://gw.example/v1?api-key=k",
                                           anthropic_base_url="https://plain.example/v1")
    env, secrets = job_env(settings), job_secrets(settings)
    assert "HUBSKILLS_BASE_URL" not in env and "OPENAI_BASE_URL" not in env
    assert secrets["HUBSKILLS_BASE_URL"] == "https://u:pw@models.example/v1"
    assert secrets["OPENAI_BASE_URL"] == "https://gw.example/v1?api-key=k"
    assert env["ANTHROPIC_BASE_URL"] == "https://plain.example/v1"  # nothing to hide
    assert "ANTHROPIC_BASE_URL" not in secrets and env["HF_ENDPOINT"]


@pytest.mark.parametrize("url", [
    "https://gw.example/hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567/v1",
    "https://gw.example/token/sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8/",
    "https://gw.example/v1/sk-ant-api03-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9/messages",
    "https://gw.example/key/sk%2DAb1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9/v1",  # percent-encoded
    "https://gw.example/v1/Xq7Lm2Rt9Zk4Wp8Nc3Vb6Hy1Jd5Gs0Fa/chat",  # base62, 32 chars
])
def test_a_token_in_the_url_path_is_a_credential(url: str) -> None:
    """Gateways that take the key in the path (`/hf_.../v1`, `/token/sk-.../`) put it in a
    Job's public environment and the plan file: only userinfo and a query were looked at."""
    from registry.jobs.remote import job_env, job_secrets

    settings = Settings.from_env({}).with_(base_url=url)
    assert carries_secret(url)
    assert "HUBSKILLS_BASE_URL" not in job_env(settings)
    assert job_secrets(settings)["HUBSKILLS_BASE_URL"] == url
    assert JobPlan.config_of(EvalConfig(["local/m"], base_url=url))["base_url"] is None


@pytest.mark.parametrize("url", [
    "https://router.huggingface.co/v1", "http://127.0.0.1:8080/v1",
    "https://api.openai.com/v1", "https://x.openai.azure.com/openai/deployments/gpt-4o-mini",
    "https://gateway.ai.cloudflare.com/v1/0123456789abcdef0123456789abcdef/gw/openai",
    "https://gw.example/v1/123e4567-e89b-12d3-a456-426614174000/chat",  # a UUID: an id
    "https://api-inference.huggingface.co/models/meta-llama/Meta-Llama-3.1-70B-Instruct/v1",
    "https://gw.example/skills/sk-learn-helpers/v1", "https://gw.example/hf_hub/v1",
])
def test_an_ordinary_path_is_no_credential(url: str) -> None:
    """Deployment names, hex account ids, UUIDs and model names stay in the plan (a false
    alarm costs the user a `--base-url` on every resume)."""
    assert not carries_secret(url)


def test_an_endpoint_holding_a_credential_stays_off_the_jobs_command_line(tmp_path):
    """A Job's command is shown on the Hub as its environment is: an `HF_ENDPOINT` holding a
    credential went there in the clear, though the environment kept it to the secrets (a
    red-team note). The Job reads it from its `HF_ENDPOINT` secret instead."""
    import subprocess
    import sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from registry.jobs.bootstrap import command_for

    secret_url = "https://proxy-user:hunter2-pw@hub.corp.example"
    command = command_for(secret_url, "me/evals", "wheels/x.whl", "run-1", 0)
    assert not any("hunter2" in part for part in command)
    assert command_for("https://huggingface.co", "me/evals", "wheels/x.whl", "run-1", 0)[3] \
        == "https://huggingface.co"  # nothing to hide: as before
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            asked.append(self.path)
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {"PATH": "/usr/bin:/bin", "HF_TOKEN": "hf_x", "HOME": str(tmp_path),
               "HF_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}"}
        subprocess.run([sys.executable, *command[1:]], env=env, cwd=tmp_path,
                       capture_output=True, timeout=60)
    finally:
        server.shutdown()
    assert asked == ["/datasets/me/evals/resolve/main/wheels/x.whl"]  # from the secret's URL
