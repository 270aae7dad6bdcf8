"""A folder that is not there, in an empty project folder: the hint's command works there
(getting started: the closest name beside it, or `hubskills new`), not just fails otherwise."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.test_cli_hints import hinted
from tests.test_install import run_main

MISSING = {
    "sign": ["sign", "nope", "--key", "key.pem"],
    "publish": ["publish", "nope"],
    "scan": ["scan", "nope"],
    "suite show": ["suite", "show", "nope"],
    "validate": ["validate", "nope"],
}


@pytest.mark.parametrize("name", list(MISSING))
def test_the_hint_for_a_missing_folder_runs_in_an_empty_project(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "1000")  # one line per message: the hint is read whole
    code, out, err = run_main(capsys, *MISSING[name])
    assert code == 1 and "nope" in out + err and "no such folder" in out + err, out + err
    command = hinted(err, MISSING[name])
    assert command, err
    again, _, again_err = run_main(capsys, *command)
    assert again == 0, f"the hint `hubskills {' '.join(command)}` fails here:\n{again_err}"


@pytest.mark.parametrize("agents", [(), (".codex/sessions",),
                                    (".claude/projects", ".codex/sessions")])
def test_a_missing_trace_hints_the_agents_trace_folders_that_exist_else_the_help(
        agents: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]):
    home = tmp_path / "home"
    for folder in agents:
        (home / folder).mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COLUMNS", "1000")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main(capsys, "trace", "show", "x.jsonl")
    assert code == 1 and "x.jsonl: no such file" in err, err
    hint = err.split("Hint: ", 1)[1].split("  #", 1)[0]
    if not agents:
        assert hinted(err, []) == ["trace", "show", "--help"]
        assert run_main(capsys, "trace", "show", "--help")[0] == 0
        return
    assert hint == "ls " + " ".join(f"~/{folder}" for folder in agents)
    listed = subprocess.run(["sh", "-c", hint], env={**os.environ, "HOME": str(home)},
                            capture_output=True, text=True, check=False)
    assert listed.returncode == 0, listed.stderr  # an ls of a missing folder fails
