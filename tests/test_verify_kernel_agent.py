"""A genuine agent-mode run of the example kernel-builder skill (every case graded by workspace
and `command` checks alone) replays from its stored workspaces, verifies and ranks.

The run goes through hubskills' own agent loop against a fake model on 127.0.0.1 that writes
each case's right files once it has read SKILL.md; `command` checks need the sandbox (bwrap).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from sandbox_required import bwrap_sandbox
from test_example_agent_suite import RIGHT, SUITE

from registry.cli import cli
from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.format.version_ref import SkillVersionRef
from registry.providers import RetryPolicy
from registry.publishing.push import push_saved_run
from registry.registries import get_store
from tests.fakes.kernel_suite_script import SKILL_NAME, KernelSuiteScript

FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.005, max_retry_after=0.01)
SKILL = Path(__file__).resolve().parents[1] / "skills" / SKILL_NAME
REPO = f"local/{SKILL_NAME}"


def evaluate_and_push(skill: Path, cases: dict[str, str], right: dict[str, dict[str, str]]) -> str:
    """Publish `skill` (a copy of the example), run it in agent mode on every case (`cases`:
    id -> prompt) against the fake model writing `right`'s files, push the run: its id."""
    script = KernelSuiteScript(prompts=cases, right=right)
    with FakeOpenAIServer(responder=script) as server:
        settings = Settings.from_env().with_(base_url=server.url)
        result = CliRunner().invoke(cli, ["publish", str(skill), "--version", "1.0.0"])
        assert result.exit_code == 0, result.output
        store = get_store(settings)
        made = run_evaluation(skill, EvalConfig(models=["local/fake-agent"], mode="agent",
                                                runs=1, retry=FAST), settings,
                              published=SkillVersionRef(REPO, store.resolve(REPO).sha))
    push_saved_run(store, settings.runs_dir, made.manifest.run_id)
    return made.manifest.run_id


def board_entry(run_id: str) -> dict:
    """The run's leaderboard entry (unverified ones included)."""
    board = CliRunner().invoke(cli, ["leaderboard", "--skill", SKILL_NAME, "--json",
                                     "--include-unverified"])
    assert board.exit_code == 0, board.output
    [entry] = [e for e in json.loads(board.output) if e["run_id"] == run_id]
    return entry


@pytest.fixture(scope="module")
def pushed(tmp_path_factory):
    """The example skill run in agent mode on all its cases and pushed: (home, run id)."""
    bwrap_sandbox()
    root = tmp_path_factory.mktemp("kernel")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HUBSKILLS_HOME", str(root / "home"))
        run_id = evaluate_and_push(shutil.copytree(SKILL, root / SKILL_NAME),
                                   {c.id: c.prompt for c in SUITE.cases}, RIGHT)
    return root / "home", run_id


@pytest.fixture
def home(pushed):
    """This test's HUBSKILLS_HOME, holding a copy of the pushed run's registry."""
    home = Path(Settings.from_env().home)
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(pushed[0], home)
    return home


def test_the_run_was_genuine_every_check_a_workspace_or_command_check(pushed, home):
    [path] = get_store(Settings.from_env()).dataset_dir.glob(f"data/evals/*/{pushed[1]}.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 2 * len(SUITE.cases) == 20
    assert {c["type"] for r in rows for c in r["checks"]} >= {"command", "file_parses"}
    assert all(r["passed"] for r in rows if r["arm"] == "skill"), [
        (r["case_id"], r["error"]) for r in rows if not r["passed"] and r["arm"] == "skill"]
    assert not any(r["passed"] for r in rows if r["arm"] == "baseline")
    assert all(r["workspace"] for r in rows if r["arm"] == "skill")


def test_verify_replays_it_from_its_workspaces(pushed, home):
    assert board_entry(pushed[1])["verification"] == "unverified"
    result = CliRunner().invoke(cli, ["verify", REPO, "--run", pushed[1], "--json"])
    found = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    assert found["status"] == "verified" and found["not_replayable"] == []
    checks = sum(len(c.checks) for c in SUITE.cases)
    assert found["checks_regraded"] == 2 * checks  # every check of both arms, command too
    text = CliRunner().invoke(cli, ["verify", REPO, "--run", pushed[1]])
    assert text.exit_code == 0 and text.output.startswith(f"verified: run {pushed[1]} (20 "), \
        text.output
    entry = board_entry(pushed[1])
    assert (entry["mode"], entry["verification"], entry["verdict"]) == ("agent", "replayed",
                                                                      "helps")
    assert (entry["rank"], entry["status"]) == (1, "")  # a genuine agent run ranks
    board = CliRunner().invoke(cli, ["leaderboard", "--skill", SKILL_NAME, "--json"])
    assert [e["run_id"] for e in json.loads(board.output) if e["mode"] == "agent"] == [pushed[1]]
