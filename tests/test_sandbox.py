"""registry.sandbox: the interface, the backends, the one policy, and its callers (eval, the
Space, generate's verification, doctor). The escapes are in test_sandbox_escapes.py.

A sandbox that does not work is simulated with a real setting, HUBSKILLS_BWRAP pointing at no
binary, so the probe fails as it does on a machine without bubblewrap.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from sandbox_required import bwrap_sandbox
from test_evaluate import FAST, knows_fact_if_told, make_skill

from registry.cli import cli, main
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.format.suite import Case
from registry.generate.verify import Verifier
from registry.providers import resolve
from registry.sandbox import (
    BwrapSandbox,
    DirectSandbox,
    Limits,
    SandboxUnavailable,
    choose,
    get_sandbox,
)
from space.evaluate_run import EvalRequest, evaluate
from space.state import SpaceState

NO_BWRAP = {"HUBSKILLS_BWRAP": "/nonexistent/bwrap"}
WRITES_MARKER = "import pathlib\ndef check(output, files):\n" \
                "    pathlib.Path({path!r}).write_text('ran')\n    return True\n"


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=knows_fact_if_told) as srv:
        yield srv


def settings_for(tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"), **env})


def add_code_check(skill: Path, marker: Path) -> None:
    """Give every case of the suite a python check that writes `marker` on the host."""
    path = skill / "evals" / "evals.json"
    suite = json.loads(path.read_text())
    for case in suite["cases"]:
        case["checks"].append({"type": "python", "code": WRITES_MARKER.format(path=str(marker))})
    path.write_text(json.dumps(suite))


def invoke(*args: str, **env: str):
    return CliRunner().invoke(cli, list(args), env={"NO_COLOR": "1", "COLUMNS": "200", **env})


def refused(capsys, monkeypatch, *args: str, **env: str) -> str:
    """Run `hubskills ARGS` through `main` (which maps errors); it must exit 1; its stderr."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    assert exit_info.value.code == 1
    return capsys.readouterr().err


def completions(server) -> list[dict]:
    return [r for r in server.requests if r["path"].endswith("/chat/completions")]


# --- the interface, on bwrap ----------------------------------------------------------------


def test_bwrap_runs_a_command_in_the_workspace_with_stdin_and_env(tmp_path):
    sandbox = bwrap_sandbox()
    (tmp_path / "in.txt").write_text("from the host")
    code = ("import os, sys; print(open('in.txt').read(), sys.stdin.read(), os.environ['X'],"
            " os.getcwd() == os.environ['HOME']); open('out.txt', 'w').write('made');"
            " sys.exit(3)")
    result = asyncio.run(sandbox.run(["python3", "-c", code], tmp_path, timeout=20,
                                     stdin=b"piped", env={"X": "extra"}))
    assert (result.exit_code, result.timed_out, result.backend) == (3, False, "bwrap")
    assert result.stdout.strip() == "from the host piped extra True"
    assert (tmp_path / "out.txt").read_text() == "made"


def test_bwrap_limits_file_size_and_wall_time(tmp_path):
    sandbox = bwrap_sandbox()
    big = "open('big', 'wb').write(b'x' * (2 << 20))"
    result = asyncio.run(sandbox.run(["python3", "-c", big], tmp_path, timeout=20,
                                     limits=Limits(file_bytes=1 << 20)))
    assert result.exit_code != 0 and (tmp_path / "big").stat().st_size <= 1 << 20
    slow = asyncio.run(sandbox.run(["sleep", "30"], tmp_path, timeout=0.5))
    assert (slow.exit_code, slow.timed_out) == (None, True) and slow.duration_s < 10


def test_which_sees_only_what_the_sandbox_sees(tmp_path):
    sandbox = bwrap_sandbox()
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert sandbox.which("sh") is not None and sandbox.which("/bin/sh") == "/bin/sh"
    assert sandbox.which(str(tool)) is None and sandbox.which("hubskills-no-such-tool") is None
    assert DirectSandbox().which(str(tool)) == str(tool)


def test_a_missing_bwrap_is_reported_not_raised():
    works, why = BwrapSandbox("/nonexistent/bwrap").probe()
    assert works is False and "bubblewrap is not installed" in why


# --- the policy -----------------------------------------------------------------------------


def test_choose_without_a_sandbox(tmp_path):
    settings = settings_for(tmp_path, **NO_BWRAP)
    assert choose("auto", settings, has_code=False, code_checks="require",
                  folder=tmp_path).status == "none in the suite"
    skipped = choose("auto", settings, has_code=True, code_checks="skip", folder=tmp_path)
    assert (skipped.sandbox, skipped.status) == (None, "skipped: --skip-code-checks")
    quiet = choose("auto", settings, has_code=True, code_checks="if_sandboxed", folder=None)
    assert quiet.sandbox is None and quiet.status.startswith("skipped: no sandbox (bubblewrap")
    with pytest.raises(SandboxUnavailable) as refused:
        choose("auto", settings, has_code=True, code_checks="require", folder=tmp_path)
    assert "code-running checks" in refused.value.message
    assert "apt-get install bubblewrap" in refused.value.hint
    assert f"hubskills eval {tmp_path} --skip-code-checks" in refused.value.hint
    with pytest.raises(HubskillsError, match="unknown sandbox 'docker'"):
        get_sandbox("docker", settings)


def test_none_is_only_for_a_folder_of_ones_own(tmp_path):
    settings = settings_for(tmp_path)
    own = choose("none", settings, has_code=True, code_checks="require", folder=tmp_path)
    assert isinstance(own.sandbox, DirectSandbox) and "~/.ssh" in (own.warning or "")
    (tmp_path / ".hubskills.json").write_text("{}")  # the install marker of a pulled skill
    with pytest.raises(HubskillsError, match="pulled from a registry"):
        choose("none", settings, has_code=True, code_checks="require", folder=tmp_path)
    with pytest.raises(HubskillsError, match="--sandbox none is refused"):
        choose("none", settings, has_code=True, code_checks="require", folder=None)


# --- hubskills eval -------------------------------------------------------------------------


def test_eval_refuses_code_checks_without_a_sandbox_before_any_model_call(
    server, tmp_path, capsys, monkeypatch
):
    skill, marker = make_skill(tmp_path, 2), tmp_path / "ran"
    add_code_check(skill, marker)
    err = refused(capsys, monkeypatch, "eval", str(skill), "-m", "local/fake", "--base-url",
                  server.url, "--runs", "1", **NO_BWRAP)
    assert "Error: this suite has code-running checks" in err and "Traceback" not in err
    assert f"Hint: apt-get install bubblewrap, or leave them out: hubskills eval {skill} " \
           "--skip-code-checks" in " ".join(err.split())
    assert completions(server) == [] and not marker.exists()
    assert not (tmp_path / "hubskills-home" / "runs").exists()


def test_skip_code_checks_is_recorded_in_the_manifest_and_the_report(server, tmp_path):
    skill, marker = make_skill(tmp_path, 2), tmp_path / "ran"
    add_code_check(skill, marker)
    args = ("eval", str(skill), "-m", "local/fake", "--base-url", server.url, "--runs", "1",
            "--skip-code-checks")
    data = json.loads(invoke(*args, "--json", **NO_BWRAP).stdout)
    assert data["manifest"]["code_checks"] == "skipped: --skip-code-checks"
    assert data["manifest"]["sandbox"] is None
    summary = data["summaries"][0]  # the other checks still grade
    assert summary["skill"]["passes"] > summary["baseline"]["passes"]
    shown = invoke("runs", "show", data["manifest"]["run_id"])
    assert "code checks (python, exec) skipped: --skip-code-checks" in shown.output
    assert not marker.exists()


def test_eval_runs_code_checks_in_bwrap_and_records_it(server, tmp_path):
    bwrap_sandbox()
    skill, marker = make_skill(tmp_path, 2), tmp_path / "ran"
    add_code_check(skill, marker)
    settings = settings_for(tmp_path, HUBSKILLS_BASE_URL=server.url)
    run = run_evaluation(skill, EvalConfig(models=["local/fake"], runs=1, retry=FAST), settings)
    assert (run.manifest.sandbox, run.manifest.code_checks) == ("bwrap", "bwrap")
    python = [c for row in run.rows for c in row.checks if c.type == "python"]
    assert len(python) == 4 and all(c.passed is False for c in python)  # no host path inside
    assert not marker.exists()


def test_sandbox_none_on_a_pulled_folder_is_refused(server, tmp_path, capsys, monkeypatch):
    skill, marker = make_skill(tmp_path, 2), tmp_path / "ran"
    add_code_check(skill, marker)
    (skill / ".hubskills.json").write_text("{}")
    err = refused(capsys, monkeypatch, "eval", str(skill), "-m", "local/fake", "--base-url",
                  server.url, "--runs", "1", "--sandbox", "none")
    assert "--sandbox none is refused" in err and "pulled from a registry" in err
    assert completions(server) == [] and not marker.exists()


def test_sandbox_none_on_ones_own_folder_warns_then_runs_directly(server, tmp_path):
    skill, marker = make_skill(tmp_path, 2), tmp_path / "ran"
    add_code_check(skill, marker)
    result = invoke("eval", str(skill), "-m", "local/fake", "--base-url", server.url,
                    "--runs", "1", "--sandbox", "none", **NO_BWRAP)
    assert result.exit_code == 0, result.output
    assert "run directly on this machine" in result.output and "~/.ssh" in result.output
    assert marker.read_text() == "ran"  # no isolation: exactly what the warning says


# --- the Space and generate -----------------------------------------------------------------


def test_the_space_refuses_a_visitors_code_checks_without_a_sandbox(server, tmp_path):
    skill, marker = make_skill(tmp_path, 2), tmp_path / "ran"
    add_code_check(skill, marker)
    settings = settings_for(tmp_path, HUBSKILLS_BASE_URL=server.url, **NO_BWRAP)
    upload = [str(skill / "SKILL.md"), str(skill / "evals" / "evals.json")]
    request = EvalRequest(None, upload, EvalConfig(models=["local/fake"], runs=2, retry=FAST))
    with pytest.raises(HubskillsError) as refused:
        evaluate(SpaceState(settings), request, settings)
    assert "this Space runs a visitor's code only in a sandbox" in refused.value.message
    assert refused.value.hint == ("run it on your machine: hubskills eval ./zorblax-ports "
                                  "-m local/fake --runs 2")
    assert completions(server) == [] and not marker.exists()


def test_the_space_forces_bwrap_even_if_asked_for_none(server, tmp_path):
    bwrap_sandbox()
    skill, marker = make_skill(tmp_path, 1), tmp_path / "ran"
    add_code_check(skill, marker)
    settings = settings_for(tmp_path, HUBSKILLS_BASE_URL=server.url)
    upload = [str(skill / "SKILL.md"), str(skill / "evals" / "evals.json")]
    config = EvalConfig(models=["local/fake"], runs=1, retry=FAST, sandbox="none")
    run = evaluate(SpaceState(settings), EvalRequest(None, upload, config), settings)
    assert run.manifest.sandbox == "bwrap" and not marker.exists()


def test_verification_leaves_code_checks_out_without_a_sandbox(server, tmp_path):
    marker = tmp_path / "ran"
    settings = settings_for(tmp_path, HUBSKILLS_BASE_URL=server.url, **NO_BWRAP)
    model = resolve("local/fake", settings, retry=FAST)
    case = Case.model_validate({"id": "c", "prompt": "which port?", "checks": [
        {"type": "python", "code": WRITES_MARKER.format(path=str(marker))}]})
    skill_dir = make_skill(tmp_path, 1)
    from registry.format.skill import load_skill

    verifier = Verifier(model, model, runs=1, settings=settings)
    assert verifier.verify_all([case], load_skill(skill_dir)) == [None]  # kept, unverified
    assert len(verifier.notes) == 1 and "not run while verifying" in verifier.notes[0]
    assert "bubblewrap is not installed" in verifier.notes[0] and not marker.exists()


# --- hubskills doctor -----------------------------------------------------------------------


def test_doctor_names_keys_never_values_and_the_missing_sandbox(tmp_path):
    env = {"ANTHROPIC_API_KEY": "sk-ant-doctor-secret-value", **NO_BWRAP}
    data = json.loads(invoke("doctor", "--json", **env).stdout)
    assert data["keys"] == {"ANTHROPIC_API_KEY": True, "OPENAI_API_KEY": False,
                            "HF_TOKEN": False}
    assert data["sandbox"]["selected"] is None
    assert data["sandbox"]["backends"][0] == {
        "name": "bwrap", "works": False,
        "why": "bubblewrap is not installed (/nonexistent/bwrap not found)"}
    assert data["registry"]["kind"] == "local" and data["registry"]["reachable"] is True
    assert isinstance(data["embedded_model"]["available"], bool)
    human = invoke("doctor", **env)
    assert human.exit_code == 1  # no sandbox can run a code check: scripts can gate on it
    human = human.output
    assert "apt-get install bubblewrap" in human and "ANTHROPIC_API_KEY" in human
    assert "sk-ant-doctor-secret-value" not in human + json.dumps(data)


def test_doctors_sandbox_fix_pastes_into_a_shell_as_printed(tmp_path):
    """It printed `apt-get install bubblewrap (or run evals with --skip-code-checks)`: pasted,
    bash refused it (`syntax error near unexpected token '('`) and installed nothing. The
    alternative is a comment under the command now."""
    import subprocess

    human = invoke("doctor", **NO_BWRAP).output.splitlines()
    fix = human[human.index("sandbox:") + 1:]
    fix = fix[:next((i for i, line in enumerate(fix) if not line.startswith("  ")), len(fix))]
    assert any("--skip-code-checks" in line for line in fix)
    (tmp_path / "apt-get").write_text(f'#!/bin/sh\necho "apt-get $*" >> {tmp_path}/ran\n')
    (tmp_path / "apt-get").chmod(0o755)
    path = f"{tmp_path}{os.pathsep}{os.environ['PATH']}"
    shell = subprocess.run(["bash", "-c", "\n".join(fix)], capture_output=True, text=True,
                           env={**os.environ, "PATH": path})
    assert shell.returncode == 0, shell.stderr
    assert (tmp_path / "ran").read_text() == "apt-get install bubblewrap\n"


def test_doctor_wraps_why_the_sandbox_fails_at_80_columns_instead_of_cutting_it(tmp_path):
    """At 80 columns the reason read `bubblewrap fails here (the sandbox did…`: why it fails,
    what a newcomer runs doctor for, took `--json`. The detail column wraps now."""
    from cli_process import hubskills

    bwrap = tmp_path / "bwrap"  # a bubblewrap that cannot set up its namespaces
    bwrap.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\n"
                     "exit 1\n")
    bwrap.chmod(0o755)
    done = hubskills("doctor", COLUMNS="80", HUBSKILLS_BWRAP=str(bwrap))
    assert done.returncode == 1  # no sandbox works
    lines = done.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines) and "…" not in done.stdout, done.stdout
    start = next(i for i, line in enumerate(lines) if line.startswith("  bwrap "))
    cell = [lines[start].split(None, 2)[2]]  # its detail, then the lines it goes on
    for line in lines[start + 1:]:
        if not line.startswith(" " * 30):  # the next row
            break
        cell.append(line.strip())
    [why] = [b["why"] for b in json.loads(hubskills(
        "doctor", "--json", HUBSKILLS_BWRAP=str(bwrap)).stdout)["sandbox"]["backends"]
        if b["name"] == "bwrap"]
    assert "Permission denied" in why and " ".join(" ".join(cell).split()) == why
