"""On a Space, evaluations that need code or are large go to the signed-in visitor's Jobs.

A simulated Space (`SPACE_ID` set, the owner's own `HF_TOKEN` in its settings) talks to the
fake Hub, whose Jobs really run (`tests/fakes/jobs_server.py`: each Job's command in a
subprocess, its secrets as environment). The fake Hub records every request's bearer token, so
the tests see whose token each call carried.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import gradio as gr
import huggingface_hub.constants
import pytest
from fakes.hub_server import FakeHub
from fakes.openai_server import FakeOpenAIServer
from fakes.tool_script import AgentScript
from sandbox_required import bwrap_sandbox
from space_pages import handler as space_handler
from test_agent_eval import CASES
from test_agent_eval import make_skill as make_agent_skill

from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.format.suite import Case
from registry.results.report import summarize
from space import build_demo, evaluate_jobs
from space.evaluate_jobs import MAX_HERE_ANSWERS, jobs_reason, jobs_settings
from space.evaluate_run import summary_table

VISITOR, VISITOR_TOKEN = "visitor", "hf_the_visitors_own_oauth_token_0123"
SERVER_TOKEN = "hf_the_space_owners_token_456789"
SERVER_KEY = "sk-the-space-owners-openai-key-0001"
TYPED_KEY = "sk-typed-by-the-visitor-0123456789"
MODEL = "openai/gpt-4o-mini"
SECRETS = (VISITOR_TOKEN, SERVER_TOKEN, SERVER_KEY, TYPED_KEY)


def answer(body: dict) -> str:
    """Right when told the fact, except on some (case, seed) pairs; it also echoes a key."""
    told = any("4417" in json.dumps(m.get("content")) for m in body["messages"])
    question = json.dumps(body["messages"][-1].get("content"))
    flaky = (sum(map(ord, question)) + int(body.get("seed") or 0)) % 3 == 0
    return f"port 4417 (key {TYPED_KEY})" if told and not flaky else "Probably port 8080."


def skill_files(root: Path, n_cases: int = 3) -> list[str]:
    """SKILL.md and evals.json of a skill (folder `root`) whose cases a `python` check grades;
    their paths, as a visitor uploads them."""
    (root / "evals").mkdir(parents=True)
    (root / "SKILL.md").write_text(
        "---\nname: zorblax-ports\ndescription: \"Ports of the zorblax daemon. Use when "
        "configuring zorblax.\"\nmetadata:\n  version: \"1.0.0\"\n---\n\n"
        "Zorblax listens on port 4417.\n")
    check = {"type": "python", "code": "def check(output, files):\n    return '4417' in output\n"}
    cases = [{"id": f"q{i}", "prompt": f"Question {i}: which port does zorblax use?",
              "checks": [check]} for i in range(n_cases)]
    (root / "evals" / "evals.json").write_text(json.dumps({"skill_name": "zorblax-ports",
                                                           "cases": cases}))
    return [str(root / "SKILL.md"), str(root / "evals" / "evals.json")]


@pytest.fixture
def hub():
    if huggingface_hub.constants.HF_HUB_OFFLINE:
        pytest.skip("huggingface_hub was imported with HF_HUB_OFFLINE=1 (read once, at import)")
    with FakeHub() as server:
        server.jobs.image_env = {"PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1"}
        server.add_user(VISITOR, VISITOR_TOKEN)  # writes only the visitor's own namespace
        yield server


@pytest.fixture
def models():
    with FakeOpenAIServer(responder=answer, api_key=TYPED_KEY) as server:
        yield server


def space_settings(hub: FakeHub, models: FakeOpenAIServer, home: Path, **extra: str) -> Settings:
    """A Space's settings: its owner's token and lent key, the fake Hub and model server."""
    return Settings.from_env({"HUBSKILLS_HOME": str(home), "SPACE_ID": "owner/hubskills",
                              "HF_ENDPOINT": hub.url, "HF_TOKEN": SERVER_TOKEN,
                              "OPENAI_API_KEY": SERVER_KEY, "OPENAI_BASE_URL": models.url,
                              "HUBSKILLS_SPACE_LEND_KEYS": "1", **extra})


def evaluate_as(demo: gr.Blocks, upload: list[str], oauth: gr.OAuthToken | None,
                models: list[str], mode: str = "inline", progress=None) -> tuple:
    """The Evaluate button, as a visitor who typed `TYPED_KEY`: status, summary, chart,
    cases, run id."""
    handler = space_handler(demo, "evaluate")
    return handler(None, upload, models, "", 1, mode, "user", 0, 64, 0, "", TYPED_KEY, "",
                   progress=progress, oauth=oauth)


def test_a_code_check_eval_runs_as_jobs_under_the_visitors_own_token(hub, models, tmp_path,
                                                                      monkeypatch):
    bwrap_sandbox()  # the shards run the python checks in bubblewrap, as a real Job must
    monkeypatch.setattr(evaluate_jobs, "POLL_S", 0.2)
    settings = space_settings(hub, models, tmp_path / "home")
    upload = skill_files(tmp_path / "skill")
    visitor = gr.OAuthToken(token=VISITOR_TOKEN, scope="write", expires_at=0)
    shown_progress: list[tuple] = []
    status, summary, _, cases, run_id = evaluate_as(
        build_demo(settings), upload, visitor, [MODEL],
        progress=lambda done, desc="", unit="": shown_progress.append((done, desc)))
    assert status.startswith("✅") and "ran as Hugging Face Jobs on your account" in status
    assert shown_progress[-1] == ((6, 6), "Hugging Face Jobs on your account: 3 completed")
    mine = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "mine"),
                              "OPENAI_API_KEY": TYPED_KEY, "OPENAI_BASE_URL": models.url})
    local = run_evaluation(tmp_path / "skill", EvalConfig(models=[MODEL], runs=1, max_tokens=64,
                                                          sandbox="bwrap"), mine)
    assert summary.equals(summary_table(summarize(local.rows), 1))  # the same summary
    assert list(summary["model"]) == [MODEL] and summary.iloc[0]["cases × runs"] == "3×1"
    assert set(cases["case"]) == {"q0", "q1", "q2"}
    # every call that carries a token carries the visitor's (the others: an LFS upload to its
    # presigned address, the client's unauthenticated probe); the Jobs API never goes without
    assert {token for *_, token in hub.bearers if token} == {VISITOR_TOKEN}
    jobs_calls = [token for _, path, token in hub.bearers if path.startswith("/api/jobs/")]
    assert len(jobs_calls) > 3 and set(jobs_calls) == {VISITOR_TOKEN}
    assert {token for _, token in hub.commit_tokens} == {VISITOR_TOKEN}
    assert len(hub.jobs.jobs) == 3
    for job in hub.jobs.jobs.values():
        assert job.owner == VISITOR and job.stage == "COMPLETED"
        assert job.spec["secrets"] == {"HF_TOKEN": VISITOR_TOKEN, "OPENAI_API_KEY": TYPED_KEY}
        shown = json.dumps(job.info())  # what the Hub lists: command, environment, labels
        assert not any(secret in shown for secret in SECRETS)
        assert not any(s in line for line in hub.jobs.logs(job.id) for s in SECRETS)
    files = hub.repo(f"{VISITOR}/hubskills-evals", "dataset").head.files
    written = b"".join(files.values()).decode(errors="replace")
    assert "port 4417" in written and not any(secret in written for secret in SECRETS)
    saved = settings.runs_dir / run_id
    kept = "".join(p.read_text() for p in saved.iterdir() if p.is_file())
    assert "(redacted)" in kept and not any(secret in kept for secret in SECRETS)
    shown = status + summary.to_json() + cases.to_json()
    assert not any(secret in shown for secret in SECRETS)


def test_an_anonymous_visitor_asking_for_the_same_is_told_to_sign_in(hub, models, tmp_path):
    demo = build_demo(space_settings(hub, models, tmp_path / "home"))
    upload = skill_files(tmp_path / "skill")
    with pytest.warns(UserWarning, match="sign in with Hugging Face"):
        status, summary, *_ , run_id = evaluate_as(demo, upload, None, [MODEL])
    assert status.startswith("**Error:** this evaluation runs as Hugging Face Jobs on your own "
                             "account because its suite has code-running checks"), status
    assert "sign in with Hugging Face" in status and "hubskills eval ./zorblax-ports" in status
    assert run_id is None and summary.empty  # the table keeps its headers, no row
    assert hub.jobs.jobs == {} and hub.requests == [] and models.requests == []  # nothing ran


def test_anonymous_agent_mode_is_told_to_sign_in(hub, models, tmp_path):
    demo = build_demo(space_settings(hub, models, tmp_path / "home"))
    upload = skill_files(tmp_path / "skill")
    with pytest.warns(UserWarning, match="sign in"):
        status, *_ = evaluate_as(demo, upload, None, [MODEL], mode="agent")
    assert ("runs as Hugging Face Jobs on your own account because agent mode runs the "
            "commands a model chooses: sign in with Hugging Face") in status, status
    assert hub.requests == [] and models.requests == []


def test_agent_mode_runs_as_the_visitors_jobs_with_its_commands_in_bubblewrap(hub, tmp_path,
                                                                            monkeypatch):
    bwrap_sandbox()
    monkeypatch.setattr(evaluate_jobs, "POLL_S", 0.2)
    skill = make_agent_skill(tmp_path / "src")
    archive = tmp_path / "skill.zip"  # agent.json sits in evals/: uploaded as a zip
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(p for p in skill.rglob("*") if p.is_file()):
            zipped.write(path, path.relative_to(skill.parent).as_posix())
    script = AgentScript(skill="zorblax-ports", trigger="zorblax")
    visitor = gr.OAuthToken(token=VISITOR_TOKEN, scope="write", expires_at=0)
    with FakeOpenAIServer(responder=script, api_key=TYPED_KEY) as agent_models:
        demo = build_demo(space_settings(hub, agent_models, tmp_path / "home"))
        status, summary, _, cases, run_id = evaluate_as(demo, [str(archive)], visitor, [MODEL],
                                                        mode="agent")
    assert status.startswith("✅") and "ran as Hugging Face Jobs on your account" in status
    assert script.requests == len(CASES) * 2 * 5  # every sample's five turns, in the Jobs
    assert set(cases["case"]) == set(CASES) and list(summary["model"]) == [MODEL]
    assert {(job.owner, job.stage) for job in hub.jobs.jobs.values()} == {(VISITOR, "COMPLETED")}
    lines = [line for job in hub.jobs.jobs for line in hub.jobs.logs(job)]
    assert sum(line.startswith("hubskills-sandbox ") and line.endswith(" bwrap")
               for line in lines) == len(hub.jobs.jobs)
    assert not any(secret in status for secret in SECRETS)


def test_the_embedded_model_is_refused_on_jobs_before_anything_starts(hub, models, tmp_path):
    demo = build_demo(space_settings(hub, models, tmp_path / "home"))
    visitor = gr.OAuthToken(token=VISITOR_TOKEN, scope="write", expires_at=0)
    with pytest.warns(UserWarning, match="runs only on this machine"):
        status, *_ = evaluate_as(demo, skill_files(tmp_path / "skill"), visitor,
                                 ["embedded/smollm2-135m"])
    assert "embedded/smollm2-135m runs only on this machine" in status
    assert "pick an API model" in status and VISITOR_TOKEN not in status
    assert hub.jobs.jobs == {} and hub.requests == []


def test_small_code_free_evaluations_run_here_and_the_rest_on_jobs():
    def cases(n: int, check: dict) -> list[Case]:
        return [Case(id=f"c{i}", prompt="p", checks=[check]) for i in range(n)]

    words = {"type": "contains", "value": ["x"]}
    code = {"type": "python", "code": "def check(output, files):\n    return True\n"}
    one = EvalConfig(models=[MODEL], runs=3)
    limit_cases = MAX_HERE_ANSWERS // 6  # one model × 3 runs × 2 arms = 6 answers a case
    assert jobs_reason(cases(limit_cases, words), one) is None
    assert "answers" in (jobs_reason(cases(limit_cases + 1, words), one) or "")
    two = EvalConfig(models=[MODEL, "anthropic/claude-haiku-4-5"], runs=3)
    assert jobs_reason(cases(limit_cases, words), two) is not None  # twice the answers
    assert "code-running" in (jobs_reason(cases(1, code), one) or "")
    agent = EvalConfig(models=[MODEL], runs=1, mode="agent")
    assert "agent mode" in (jobs_reason(cases(1, words), agent) or "")  # its commands: Jobs


def test_the_jobs_get_the_visitors_token_and_typed_keys_never_the_servers(tmp_path):
    server = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path), "HF_TOKEN": SERVER_TOKEN,
                                "OPENAI_API_KEY": SERVER_KEY, "ANTHROPIC_API_KEY": SERVER_KEY,
                                "HUBSKILLS_NAMESPACE": "owner",
                                "HUBSKILLS_RESULTS_REPO": "owner/evals"})
    lent = jobs_settings(server, server, VISITOR_TOKEN)  # the owner lends keys: not to Jobs
    assert (lent.hf_token, lent.openai_api_key, lent.anthropic_api_key) == (
        VISITOR_TOKEN, None, None)
    assert (lent.namespace, lent.results_repo) == (None, None)  # the visitor's own account
    typed = jobs_settings(server.with_(openai_api_key=TYPED_KEY), server, VISITOR_TOKEN)
    assert (typed.openai_api_key, typed.anthropic_api_key) == (TYPED_KEY, None)


def test_a_job_without_a_working_sandbox_runs_no_code_and_says_why(hub, models, tmp_path,
                                                                   monkeypatch):
    monkeypatch.setattr(evaluate_jobs, "POLL_S", 0.2)
    hub.jobs.image_env["HUBSKILLS_BWRAP"] = str(tmp_path / "no-bwrap-here")  # an image without
    marker = tmp_path / "the-check-ran-unsandboxed"
    upload = skill_files(tmp_path / "skill")
    suite = json.loads(Path(upload[1]).read_text())
    suite["cases"][0]["checks"][0]["code"] = (
        f"def check(output, files):\n    open({str(marker)!r}, 'w').close()\n    return True\n")
    Path(upload[1]).write_text(json.dumps(suite))
    visitor = gr.OAuthToken(token=VISITOR_TOKEN, scope="write", expires_at=0)
    demo = build_demo(space_settings(hub, models, tmp_path / "home"))
    with pytest.warns(UserWarning, match="ended without an answer"):
        status, *_, run_id = evaluate_as(demo, upload, visitor, [MODEL])
    assert "ended without an answer (no sandbox in the Job: bubblewrap is not installed" in \
        status, status
    assert run_id is None and not marker.exists() and models.requests == []
    assert {job.stage for job in hub.jobs.jobs.values()} == {"ERROR"}
    assert len(hub.jobs.jobs) == 3  # one a shard: a retry in the same image would stop again
    assert VISITOR_TOKEN not in status
