"""`hubskills verify` of a pushed agent-mode run: workspace checks regrade on the final workspace
rebuilt from the case's files and the row's record; judge checks re-parse the stored reply."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from fakes.tool_script import SKILL_MD, SKILL_PORT, AgentScript
from sandbox_required import bwrap_sandbox

from registry.cli import cli
from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.format.version_ref import SkillVersionRef
from registry.providers import RetryPolicy
from registry.publishing.push import push_saved_run
from registry.registries import get_store
from registry.verify.pushed import verify_published
from registry.verify.regrade import NO_WORKSPACE

FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.005, max_retry_after=0.01)
REPO = "local/zorblax-ports"
CHECKS = [{"type": "contains", "value": [SKILL_PORT]},
          {"type": "file_contains", "path": "config.toml", "value": ['name = "zorblax"']},
          {"type": "command", "command": "grep -q 'hosts = ' config.toml"},
          {"type": "judge", "rubric": "The answer names the port the daemon listens on."}]


def make_skill(root: Path) -> Path:
    folder = root / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    cases = [{"id": f"c{i}", "prompt": f"Task {i}: write config.toml for the zorblax daemon.",
              "files": {"README.md": "Config goes in config.toml.\n"}, "checks": CHECKS}
             for i in range(3)]
    (folder / "evals" / "agent.json").write_text(json.dumps({"cases": cases}))
    return folder


class AgentOrJudge:
    """The agent script, and a judge passing an answer that names the skill's port."""

    def __init__(self) -> None:
        self.agent = AgentScript(skill="zorblax-ports")

    def __call__(self, body: dict) -> dict | str:
        if "VERDICT" in json.dumps(body["messages"]):
            ok = SKILL_PORT in body["messages"][-1]["content"].split("<answer>")[1]
            return f"VERDICT: {'PASS' if ok else 'FAIL'}\nREASON: checked the port."
        return self.agent(body)


@pytest.fixture(scope="module")
def pushed(tmp_path_factory):
    """A genuine agent-mode run with a judge, pushed to a local registry: (home, run id)."""
    bwrap_sandbox()
    root = tmp_path_factory.mktemp("agent")
    with pytest.MonkeyPatch.context() as patch, FakeOpenAIServer(responder=AgentOrJudge()) \
            as server:
        patch.setenv("HUBSKILLS_HOME", str(root / "home"))
        patch.setenv("HUBSKILLS_BASE_URL", server.url)
        settings = Settings.from_env()
        skill = make_skill(root)
        result = CliRunner().invoke(cli, ["publish", str(skill), "--version", "1.0.0"])
        assert result.exit_code == 0, result.output
        store = get_store(settings)
        made = run_evaluation(skill, EvalConfig(
            models=["local/fake-agent"], mode="agent", judge="local/fake-judge", retry=FAST),
            settings, published=SkillVersionRef(REPO, store.resolve(REPO).sha))
        push_saved_run(store, settings.runs_dir, made.manifest.run_id)
    return root / "home", made.manifest.run_id


@pytest.fixture
def settings(pushed):
    home = Path(Settings.from_env().home)
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(pushed[0], home)
    return Settings.from_env()


@pytest.fixture
def run_file(settings, pushed) -> Path:
    [path] = get_store(settings).dataset_dir.glob(f"data/evals/*/{pushed[1]}.jsonl")
    return path


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def verify(settings, run_id):
    return verify_published(get_store(settings), REPO, run_id, settings)


def test_an_agent_run_replays_its_workspace_and_judge_checks(settings, pushed, run_file):
    rows = rows_of(run_file)
    skill_rows = [r for r in rows if r["arm"] == "skill"]
    assert all(r["passed"] for r in skill_rows) and not any(
        r["passed"] for r in rows if r["arm"] == "baseline")
    record = {f["path"]: f for f in skill_rows[0]["workspace"]}
    assert 'name = "zorblax"' in record["config.toml"]["content"]
    assert skill_rows[0]["checks"][3]["answer"].startswith("VERDICT: PASS")
    report = verify(settings, pushed[1])
    assert report.status == "verified", report.to_dict()
    assert report.checks_regraded == 4 * len(rows)  # every check, workspace and judge too


def test_an_edited_workspace_record_is_a_mismatch(settings, pushed, run_file):
    rows = rows_of(run_file)
    row = next(r for r in rows if r["arm"] == "skill")
    config = next(f for f in row["workspace"] if f["path"] == "config.toml")
    config["content"] = "port = 4417\n"
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    fields = {d.field.split(" (")[0]: (d.stored, d.regraded) for d in report.differences}
    assert report.status == "mismatch"
    assert fields["check 2"] == ("passed", "failed")  # file_contains
    assert fields["check 3"] == ("passed", "failed")  # command, rerun in the sandbox


def test_an_edited_judge_reply_is_a_mismatch(settings, pushed, run_file):
    rows = rows_of(run_file)
    row = next(r for r in rows if r["arm"] == "baseline")
    row["checks"][3]["answer"] = "VERDICT: PASS\nREASON: fine."  # the stored verdict failed
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "mismatch"
    assert report.differences[0].field.startswith("check 4 (judge")
    assert (report.differences[0].stored, report.differences[0].regraded) == ("failed",
                                                                              "passed")


def test_rows_without_the_workspace_or_the_judge_reply_are_not_replayable(settings, pushed,
                                                                          run_file):
    rows = rows_of(run_file)
    for row in rows:
        row["workspace"] = None
        row["checks"][3]["answer"] = None
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "not replayable"
    assert report.unreplayable[NO_WORKSPACE] == 2 * len(rows)
    assert sum(report.unreplayable.values()) == 3 * len(rows)  # and the judge's verdicts


def test_an_agent_run_spot_checks_consistent_and_is_recorded(settings, pushed, monkeypatch,
                                                             capsys):
    from registry.cli import main
    from registry.stores.verifications import read_records

    with FakeOpenAIServer(responder=AgentOrJudge()) as server:
        monkeypatch.setenv("HUBSKILLS_BASE_URL", server.url)
        with pytest.raises(SystemExit) as exit_info:
            main(["verify", REPO, "--run", pushed[1], "--resample", "9", "--json"])
            raise SystemExit(0)
        asked = len(server.bodies)
    found = json.loads(capsys.readouterr().out)
    assert exit_info.value.code == 0, found
    check = found["spot_check"]
    assert check["consistent"] and [a["pairs"] for a in check["arms"]] == [9, 9]
    assert asked > 6  # the agent's turns and the judge, re-asked in both arms
    [record] = [r for r in read_records(get_store(settings)) if r["kind"] == "spot-check"]
    assert (record["run_id"], record["status"], record["k"]) == (pushed[1], "consistent", 9)
