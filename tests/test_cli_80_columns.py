"""Every command that prints a table, piped at 80 columns: every line fits, and the answer
columns (`verdict`, `p`, `latest`) are never the ones left out.

One home holds a run of each mode (inline, tool, agent), a CI run and an outdated pull; each
command then runs as a process of its own with its output piped, as a newcomer's would.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from cli_process import REPO_ROOT, hubskills
from fakes.openai_server import FakeOpenAIServer
from fakes.tool_script import AgentScript
from fakes.trigger_model import TriggerModel
from rich.cells import cell_len
from sandbox_required import bwrap_sandbox
from test_agent_eval import make_skill as make_agent_skill
from test_ci_gate import commit_all, git, scripted, write_skill
from test_evaluate import knows_fact_if_told, make_skill
from test_trigger import make_distractors
from test_trigger import make_skill as make_trigger_skill

SKILL = "hubskills/agent-skill-md"
MODEL = "local/qwen2.5-coder-7b-instruct"


def run(home: Path, *args: str, cwd: Path, width: str = "80", **env: str):
    done = hubskills(*args, cwd=cwd, HUBSKILLS_HOME=str(home), COLUMNS=width, **env)
    assert done.returncode in (0, 1), done.stderr
    return done


def run_id(done) -> str:
    return re.search(r"run (\d{8}-\d{6}-\w+)", done.stdout + done.stderr)[1]


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict:
    """A home with an inline, a tool and an agent run, a CI checkout and an outdated pull."""
    root = tmp_path_factory.mktemp("fit")
    home, project = root / "home", root / "project"
    project.mkdir()
    skill = make_skill(root, 4)
    ids = {}
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        for mode in ("inline", "tool"):
            ids[mode] = run_id(run(home, "eval", skill, "-m", MODEL, "--base-url", server.url,
                                   "--runs", "2", "--mode", mode, cwd=project, width="200"))
    bwrap_sandbox()
    agent_skill = make_agent_skill(root / "agent")
    with FakeOpenAIServer(responder=AgentScript(skill="zorblax-ports",
                                                trigger="zorblax")) as server:
        done = run(home, "eval", agent_skill, "-m", "local/fake-agent", "--base-url",
                   server.url, "--mode", "agent", "--runs", "1", cwd=project, width="80")
    ids["agent"], ids["agent_out"] = run_id(done), done.stdout
    checkout = root / "checkout"
    checkout.mkdir()
    git(checkout, "init", "-q")
    write_skill(checkout, "csv-cleaning", "Nothing useful here.")
    commit_all(checkout, "one skill")
    write_skill(checkout, "csv-cleaning", "ALWAYS-PASS")
    with FakeOpenAIServer(responder=scripted) as server:
        ids["ci_out"] = run(home, "ci", "-m", MODEL, "--base-url", server.url, "--runs", "1",
                            "--base", "HEAD", cwd=checkout, GITHUB_STEP_SUMMARY="").stdout
    trigger_skill = make_trigger_skill(root / "trigger")
    with FakeOpenAIServer(responder=TriggerModel(threshold=2)) as server:
        done = run(home, "eval", trigger_skill, "--mode", "trigger", "-m", MODEL, "--base-url",
                   server.url, "--distractors", make_distractors(root / "trigger"), "--runs",
                   "1", "--verbose", cwd=project)
    ids["trigger"], ids["trigger_out"] = run_id(done), done.stdout
    assert run(home, "pull", SKILL, cwd=project).returncode == 0  # then 1.2.0 comes out
    newer = shutil.copytree(REPO_ROOT / "skills" / "agent-skill-md",
                            root / "v2" / "agent-skill-md")
    card = newer / "SKILL.md"
    card.write_text(card.read_text().replace('version: "1.1.0"', 'version: "1.2.0"', 1))
    assert run(home, "publish", newer, "--repo", SKILL, cwd=project).returncode == 0
    return {"home": home, "project": project, "ids": ids}


def assert_fits(text: str) -> None:
    for line in text.splitlines():
        assert cell_len(line) <= 80, f"{cell_len(line)} columns: {line!r}"


COMMANDS = {
    "leaderboard": ["leaderboard"],
    "info": ["info", "hubskills/kernel-builder-cuda-kernels"],
    "search": ["search"],
    "search --sort lift": ["search", "--sort", "lift"],
    "versions": ["versions", SKILL],
    "models": ["models"],
    "agents": ["agents"],
    "suite show": ["suite", "show", "hubskills/kernel-builder-cuda-kernels"],
    "list": ["list"],
    "runs": ["runs"],
    "runs show (inline)": ["runs", "show", "{inline}"],
    "runs show (tool)": ["runs", "show", "{tool}"],
    "runs show (agent)": ["runs", "show", "{agent}"],
    "runs show (trigger)": ["runs", "show", "{trigger}"],
    "runs compare": ["runs", "compare", "{inline}", "{tool}"],
    "doctor": ["doctor"],
    "scan": ["scan", "hubskills/kernel-builder-cuda-kernels"],
    "--help": ["--help"],
}


@pytest.mark.parametrize("name", COMMANDS)
def test_every_table_command_fits_80_columns_piped(world, name):
    args = [arg.format(**world["ids"]) for arg in COMMANDS[name]]
    done = run(world["home"], *args, cwd=world["project"])
    assert done.stdout.strip(), done.stderr
    assert_fits(done.stdout)


def test_eval_and_ci_output_fit_80_columns_and_keep_the_verdict(world):
    assert_fits(world["ids"]["agent_out"])
    assert_fits(world["ids"]["trigger_out"])
    assert "recall" in world["ids"]["trigger_out"]
    assert_fits(world["ids"]["ci_out"])
    assert "verdict" in world["ids"]["ci_out"]
    shown = run(world["home"], "runs", "show", world["ids"]["tool"], cwd=world["project"])
    assert "verdict" in shown.stdout and "p (exact)" in shown.stdout, shown.stdout


def test_list_keeps_latest_on_an_outdated_row(world):
    done = run(world["home"], "list", cwd=world["project"])
    assert "latest" in done.stdout and "outdated" in done.stdout, done.stdout
    assert re.search(r"outdated .*1\.2\.0", done.stdout), done.stdout


def test_search_cuts_a_long_description_with_an_ellipsis_on_one_line(world):
    done = run(world["home"], "search", cwd=world["project"])
    rows = [line for line in done.stdout.splitlines() if line.startswith("hubskills/")]
    assert len(rows) == 3 and all("…" in row for row in rows), done.stdout
    assert len(done.stdout.splitlines()) <= 3 + 4  # header, rule, three rows, a line said once



def test_jobs_list_fits_80_columns_and_keeps_each_shards_stage(tmp_path):
    from fakes.hub_server import FakeHub
    from test_jobs import KEY, answer

    env = {"HUBSKILLS_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": KEY, "HF_HUB_OFFLINE": ""}
    with FakeHub() as hub, FakeOpenAIServer(responder=answer, api_key=KEY) as model_server:
        hub.jobs.image_env = {"PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1"}
        env |= {"HF_ENDPOINT": hub.url, "HF_TOKEN": hub.token,
                "OPENAI_BASE_URL": model_server.url}
        started = hubskills("eval", make_skill(tmp_path, 3), "-m", "openai/gpt-4o-mini",
                            "--runs", "1", "--on", "jobs", "--shards", "2", "--detach",
                            cwd=tmp_path, **env)
        assert started.returncode == 0, started.stderr
        listed = hubskills("jobs", "list", cwd=tmp_path, COLUMNS="80", **env)
    assert listed.returncode == 0, listed.stderr
    assert_fits(listed.stdout)
    assert "stage" in listed.stdout, listed.stdout
    assert len(re.findall(r"^[01]\s+\S+\s+[a-z]+\s", listed.stdout, re.M)) == 2, listed.stdout
