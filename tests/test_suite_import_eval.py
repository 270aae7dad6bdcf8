"""Imported suites under `hubskills eval`: judge-only suites refused before any model call,
binary inputs described to the model, and every error row's reason in the per-case table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer

from registry.cli import cli
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation

REPORT = Path(__file__).parent / "data" / "skill_creator_report"


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=lambda body: "logo.png goes at the top.") as srv:
        yield srv


@pytest.fixture
def report(tmp_path: Path) -> Path:
    return Path(shutil.copytree(REPORT, tmp_path / "report-writer"))


def invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args],
                              env={"NO_COLOR": "1", "COLUMNS": "200"})


def completions(server) -> list[dict]:
    return [r for r in server.requests if r["path"].endswith("/chat/completions")]


def test_judge_only_suite_without_judge_is_refused_before_any_call(server, report):
    result = invoke("eval", report, "-m", "local/fake", "--base-url", server.url, "--runs", "1")
    assert result.exit_code == 1
    assert isinstance(result.exception, HubskillsError)
    assert "2 of 2 cases can only be graded by a judge model (1, 2)" in str(result.exception)
    assert result.exception.hint == f"hubskills eval {report} --judge MODEL"
    assert server.requests == []  # not one request reached the model server


def test_the_library_refuses_too_and_selected_cases_count(server, report, tmp_path):
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "HUBSKILLS_BASE_URL": server.url})
    with pytest.raises(HubskillsError, match="1 of 1 cases"):
        run_evaluation(report, EvalConfig(models=["local/fake"], runs=1, case_ids=["2"]),
                       settings)
    assert server.requests == []


def test_binary_input_reaches_the_model_as_a_described_attachment(server, report):
    suite = json.loads((report / "evals" / "evals.json").read_text())
    suite["evals"][1]["checks"] = [{"type": "contains", "value": ["logo.png"]}]
    suite["evals"][1]["expectations"] = []
    (report / "evals" / "evals.json").write_text(json.dumps(suite))
    result = invoke("eval", report, "-m", "local/fake", "--base-url", server.url, "--runs", "1",
                    "--cases", "2")
    assert result.exit_code == 0, result.output
    [baseline, skill] = sorted((json.dumps(r["body"]["messages"]) for r in completions(server)),
                               key=len)
    size = (report / "evals" / "files" / "logo.png").stat().st_size
    for sent in (baseline, skill):
        assert f"evals/files/logo.png (attached binary file: {size:,} bytes, image/png" in sent
        assert "IHDR" not in sent and "\\ufffd" not in sent


def test_an_error_row_shows_its_reason_in_the_per_case_table(server, report):
    data = {"skill_name": "report-writer", "cases": [{
        "id": "needs-tool", "prompt": "Build it.",
        "checks": [{"type": "exec", "command": "hubskills-no-such-tool --check"}]}]}
    (report / "evals" / "evals.json").write_text(json.dumps(data))
    result = invoke("eval", report, "-m", "local/fake", "--base-url", server.url, "--runs", "1",
                    "-v")
    assert result.exit_code == 0, result.output
    [row] = [line for line in result.output.splitlines() if "needs-tool" in line]
    assert "E" in row and "hubskills-no-such-tool not found on PATH" in row
