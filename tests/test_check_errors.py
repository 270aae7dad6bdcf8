"""A check that could not run is a check error, never the model's failure.

Broken sandboxes are real bwrap calls changed by a wrapper named in HUBSKILLS_BWRAP (as in
test_sandbox_reach): each lets the probe through, then breaks once a flag file exists. The
sample then leaves both arms' denominators (`error_kind: "check"`), the report counts it apart
from transport errors, and the verdict is inconclusive, never "0% / 0% no detectable effect".
What the check's code or the model's output can do stays a graded failure.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from fakes.tool_script import AgentScript
from sandbox_required import bwrap_sandbox
from test_evaluate import knows_fact_if_told, make_skill
from test_sandbox_reach import HIDE_PYTHON, wrapper

from registry.cli import cli
from registry.cli._render import report_run
from registry.config import Settings
from registry.evaluation.checks import case_score, run_checks
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import EvalRun, run_evaluation
from registry.evaluation.judge import JUDGE_SYSTEM
from registry.format.suite import Case
from registry.providers import RetryPolicy
from registry.results.report import summarize
from registry.results.runs import ResultRow
from registry.sandbox import BwrapSandbox

ONCE = RetryPolicy(attempts=1)
# bwrap reports its pid 1, then cannot build the mounts: nothing of the caller's runs
BREAK_LAUNCH = 'args[:0] = ["--ro-bind", "/nonexistent/hubskills", "/mnt"]'
RETURNS_TRUE = "def check(output, files):\n    return True\n"


def broken_bwrap(tmp_path: Path, breakage: str) -> tuple[str, Path]:
    """A bwrap wrapper whose probe passes (probed now: cached for the process), and the flag
    file that makes every later call apply `breakage` once it exists."""
    bwrap_sandbox()
    flag = tmp_path / "broken"
    binary = wrapper(tmp_path, f"if os.path.exists({str(flag)!r}):\n"
                               + textwrap.indent(textwrap.dedent(breakage), "    "))
    assert BwrapSandbox(binary).probe()[0]
    return binary, flag


def grade(checks: list[dict[str, Any]], output: str, **kwargs: Any):
    case = Case.model_validate({"id": "c1", "prompt": "Write it.", "checks": checks})
    return asyncio.run(run_checks(case, output, **kwargs))


def python_check(body: str) -> dict[str, Any]:
    code = "def check(output, files):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return {"type": "python", "code": code, "timeout": 30}


def with_python_check(skill: Path) -> Path:
    """The issue's suite: every case's only check is `return True`."""
    path = skill / "evals" / "evals.json"
    suite = json.loads(path.read_text())
    for case in suite["cases"]:
        case["checks"] = [{"type": "python", "code": RETURNS_TRUE}]
    path.write_text(json.dumps(suite))
    return skill


# --- the check engine ---------------------------------------------------------------------


def test_a_check_the_sandbox_never_started_is_a_check_error(tmp_path):
    binary, flag = broken_bwrap(tmp_path, BREAK_LAUNCH)
    flag.touch()
    checks = [python_check("return True"), {"type": "exec", "command": "python3 -c pass"},
              {"type": "command", "command": "true"}]
    results = grade(checks, "x", sandbox=BwrapSandbox(binary))
    assert [(r.passed, r.skipped) for r in results] == [(None, False)] * 3
    assert all("/nonexistent/hubskills" in r.reason for r in results), results
    assert case_score(results)[0] is None


def test_a_python_check_whose_interpreter_cannot_start_is_a_check_error(tmp_path):
    binary, flag = broken_bwrap(tmp_path, HIDE_PYTHON)  # the venv-under-/tmp failure
    sandbox = BwrapSandbox(binary)
    [works] = grade([python_check("return True")], "x", sandbox=sandbox)
    assert works.passed is True
    flag.touch()
    [result] = grade([python_check("return True")], "x", sandbox=sandbox)
    assert (result.passed, result.skipped) == (None, False)
    assert result.reason.startswith("the check's Python did not start (exit 127)"), result.reason


@pytest.mark.parametrize("body", [
    # the check (or the model's code it runs) erases what it can reach of stdout, then exits
    """
    import os
    for path in ("/proc/self/fd/1", f"/proc/{os.getppid()}/fd/1"):
        try:
            os.ftruncate(os.open(path, os.O_WRONLY), 0)
        except OSError:
            pass
    os.ftruncate(1, 0)
    os._exit(0)
    """,
    "import subprocess\nsubprocess.run(['sh', '-c', 'for out in /proc/[0-9]*/fd/1; do "
    "truncate -s 0 $out; done; kill -9 $PPID'])\nreturn True",
])
def test_a_check_that_erases_its_output_stays_a_graded_failure(body):
    [result] = grade([python_check(body)], "x", sandbox=bwrap_sandbox())
    assert result.passed is False, result.reason


def test_a_crashing_check_and_one_over_its_memory_cap_stay_graded_failures():
    crash = python_check("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    memory = python_check("data = bytearray(4 * 1024 ** 3)\nreturn True")
    results = grade([crash, memory], "x", sandbox=bwrap_sandbox())
    assert [r.passed for r in results] == [False, False], results
    assert "ended without a verdict" in results[0].reason and "MemoryError" in results[1].reason


# --- a whole run: rows, report, verdict ------------------------------------------------------


def test_a_run_whose_checks_cannot_start_reports_check_errors_and_no_verdict(tmp_path):
    binary, flag = broken_bwrap(tmp_path, BREAK_LAUNCH)
    skill = with_python_check(make_skill(tmp_path, 12))
    flag.touch()
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        result = CliRunner().invoke(cli, [
            "eval", str(skill), "-m", "local/fake", "--base-url", server.url, "--runs", "1"],
            env={"NO_COLOR": "1", "COLUMNS": "200", "HUBSKILLS_BWRAP": binary})
    assert result.exit_code == 1, result.output
    assert "no model answered" in str(result.exception)
    text = " ".join(result.stdout.split())
    assert "failed: no sample graded" in text and "no detectable effect" not in text
    assert "24 samples whose checks could not run (first: python: the sandbox did not" in text
    assert "failed in transport" not in text and "0%" not in text
    runs = Settings.from_env().runs_dir
    [folder] = list(runs.iterdir())
    rows = [ResultRow.model_validate_json(line)
            for line in (folder / "rows.jsonl").read_text().splitlines()]
    assert {(r.error_kind, r.passed, r.score) for r in rows} == {("check", None, None)}
    assert all("/nonexistent/hubskills" in r.error and not r.checks for r in rows)
    [summary] = summarize(rows)
    assert summary.failed and summary.errors.check == 24 and summary.errors.transport == 0
    assert summary.stats.verdict == "inconclusive: every sample errored"
    assert (summary.stats.baseline.n_samples, summary.stats.skill.n_samples) == (0, 0)


def judge_down(body: dict) -> Any:
    """A student that knows the fact when told, and a judge whose calls all fail."""
    if body["messages"][0]["content"] == JUDGE_SYSTEM:
        return {"status": 503, "error": {"message": "judge overloaded"}}
    return knows_fact_if_told(body)


def judge_says_nothing(body: dict) -> str:
    if body["messages"][0]["content"] == JUDGE_SYSTEM:
        return "I would rather not say."
    return knows_fact_if_told(body)


def judged_run(tmp_path: Path, responder) -> EvalRun:
    skill = make_skill(tmp_path, 12)
    path = skill / "evals" / "evals.json"
    suite = json.loads(path.read_text())
    for case in suite["cases"]:
        case["assertions"] = ["States the port."]
    path.write_text(json.dumps(suite))
    with FakeOpenAIServer(responder=responder) as server:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      "HUBSKILLS_BASE_URL": server.url})
        config = EvalConfig(models=["local/student"], judge="local/judge", runs=1, retry=ONCE)
        return run_evaluation(skill, config, settings)


def test_a_judge_that_errors_makes_check_errors(tmp_path, capsys):
    run = judged_run(tmp_path, judge_down)
    assert {(r.error_kind, r.passed) for r in run.rows} == {("check", None)}
    assert all(r.error.startswith("States the port.: judge error:")
               and "503" in r.error for r in run.rows), run.rows[0].error
    [summary] = report_run(run.manifest, run.rows, as_json=False, verbose=False)
    assert summary.errors.check == 24 and summary.stats.verdict == \
        "inconclusive: every sample errored"
    text = " ".join(capsys.readouterr().out.split())
    assert "24 samples whose checks could not run (first: States the port.: judge error:" in text
    assert "failed: no sample graded" in text and "no detectable effect" not in text


def test_a_judge_reply_without_a_verdict_grades_the_answer_as_failed(tmp_path):
    rows = judged_run(tmp_path, judge_says_nothing).rows
    assert {(r.error_kind, r.passed) for r in rows} == {(None, False)}
    assert all("no VERDICT line" in r.checks[-1].reason for r in rows)


def test_an_agent_session_that_cannot_start_is_a_check_error(tmp_path):
    binary, flag = broken_bwrap(tmp_path, BREAK_LAUNCH)
    skill = make_skill(tmp_path, 2)
    flag.touch()
    with FakeOpenAIServer(responder=AgentScript(skill="zorblax-ports")) as server:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      "HUBSKILLS_BASE_URL": server.url,
                                      "HUBSKILLS_BWRAP": binary})
        config = EvalConfig(models=["local/agent"], runs=1, mode="agent", retry=ONCE)
        rows = run_evaluation(skill, config, settings).rows
    assert {(r.error_kind, r.passed) for r in rows} == {("check", None)}
    assert all("did not start" in r.error for r in rows), rows[0].error


# --- the verdict when errors fall unevenly -----------------------------------------------------


def rows_for(outcomes: dict[str, list[bool | None]], kind: str = "check") -> list[ResultRow]:
    """Rows of one model from per-arm repeats of case i (None: an error of `kind`)."""
    rows = []
    for arm, values in outcomes.items():
        for i, value in enumerate(values):
            error = None if value is not None else "python: the sandbox did not start"
            rows.append(ResultRow(run_id="r", skill_name="s", model="m", arm=arm,
                                  case_id=f"c{i // 2:02d}", repeat=i % 2, passed=value,
                                  error=error, error_kind=kind if error else None))
    return rows


def test_uneven_errors_that_could_change_the_verdict_make_it_inconclusive():
    base = [False] * 24
    skill = [True] * 8 + [False] * 16  # 4 of 12 cases up: "no detectable effect"
    assert summarize(rows_for({"baseline": base, "skill": skill}))[0].stats.verdict == \
        "no detectable effect"
    lost = [True] * 8 + [False, None] * 8  # one repeat of each of the other 8 cases lost
    [s] = summarize(rows_for({"baseline": base, "skill": lost}))
    assert s.stats.verdict == "inconclusive: uneven errors (0 baseline, 8 skill)"
    assert s.errors.check == 8 and s.skill.errors == 8 and s.stats.uneven == 0


def test_errors_that_cannot_change_the_verdict_leave_it_standing():
    base, skill = [False] * 40, [True] * 40
    skill[1] = None  # case c00 keeps one graded repeat
    [s] = summarize(rows_for({"baseline": base, "skill": skill}, kind="transport"))
    assert s.stats.verdict == "helps" and s.errors.transport == 1
    even = summarize(rows_for({"baseline": [None, *base[1:]], "skill": skill}))
    assert even[0].stats.verdict == "helps"  # one lost in each arm: even
