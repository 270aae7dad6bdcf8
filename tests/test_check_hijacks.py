"""A check's command runs what the suite says, whatever files the agent left in its workspace.

Each test plants one of the red team's hijacks in a workspace and runs a `command` check over it
through the real sandbox (`registry.sandbox.check_env`): the check must see the truth.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from sandbox_required import bwrap_sandbox

from registry.evaluation.workspace_checks import run_command
from registry.format.checks_schema import CommandCheck

PY = sys.executable
BASE = str(Path(sys.base_prefix, "bin", "python3"))  # a venv's Python reads no user site
EXITS_3 = f"{BASE} -c 'import sys; sys.exit(3)'"


def check(workspace: Path, command: str, *, files: dict[str, str]) -> tuple[bool, str]:
    for rel, text in files.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755)
    command_check = CommandCheck(type="command", command=command)
    return asyncio.run(run_command(command_check, workspace, bwrap_sandbox(), None))


PASS_NOW = "import os, sys\nprint('1 passed')\nos._exit(0)\n"
minor = f"python{sys.version_info.major}.{sys.version_info.minor}"


@pytest.mark.parametrize("planted", [
    {f".local/lib/{minor}/site-packages/usercustomize.py": PASS_NOW},
    {f".local/lib/{minor}/site-packages/hijack.pth": "import os; os._exit(0)\n"},
    {"sitecustomize.py": PASS_NOW},
    {"usercustomize.py": PASS_NOW},
], ids=["usercustomize-in-home", "pth-in-home", "sitecustomize", "usercustomize"])
def test_start_up_files_the_agent_left_do_not_run(tmp_path, planted):
    passed, reason = check(tmp_path, EXITS_3, files=planted)
    assert not passed and reason.startswith("exit 3")


def test_a_module_the_agent_named_like_a_tool_does_not_replace_it(tmp_path):
    # the agent's code has a bug its own test catches when the real pytest runs it: a
    # `pytest.py` planted beside them that exits 0 would otherwise turn the check green
    files = {"calc.py": "def add(a, b):\n    return a - b\n",
             "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n"
                                   "    assert add(2, 2) == 4\n",
             "pytest.py": PASS_NOW}
    passed, reason = check(tmp_path, f"{PY} -m pytest -q -p no:cacheprovider tests",
                           files=files)
    assert not passed and "1 failed" in reason


def test_a_module_the_agent_named_like_the_standard_library_does_not_replace_it(tmp_path):
    fake = "def load(*a, **k):\n    return {'ok': True}\n"
    command = f"{PY} -c \"import tomllib, sys; sys.exit(0 if tomllib.load(open('c.toml', 'rb'))" \
              ".get('ok') else 4)\""
    passed, reason = check(tmp_path, command, files={"tomllib.py": fake, "c.toml": "ok = false\n"})
    assert not passed and reason.startswith("exit 4")


def test_a_python_of_the_agents_on_a_relative_path_is_not_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"bin:.:{Path(PY).parent}:/usr/bin:/bin")
    passed, reason = check(tmp_path, "python3 -c 'import sys; sys.exit(3)'",
                           files={"bin/python3": "#!/bin/sh\nexit 0\n",
                                  "python3": "#!/bin/sh\nexit 0\n"})
    assert not passed and reason.startswith("exit 3")


def test_the_agents_own_modules_stay_importable_from_its_scripts(tmp_path):
    files = {"helper.py": "ANSWER = 42\n",
             "summarize.py": "from helper import ANSWER\nprint('answer', ANSWER)\n"}
    assert check(tmp_path, f"{PY} summarize.py", files=files) == (True, "exit 0")
    assert check(tmp_path, f"{PY} -c 'import helper; assert helper.ANSWER == 42'",
                 files={})[0]


def test_home_is_a_fresh_folder_outside_the_workspace(tmp_path):
    command = "test \"$HOME\" != /workspace && test -w \"$HOME\" && ! test -e \"$HOME/.bashrc\""
    assert check(tmp_path, command, files={".bashrc": "exit 0\n"})[0]
