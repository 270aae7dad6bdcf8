"""What sandboxed code leaves in the host folders it ran in is removed however deep it nested
folders: a check's own folder (`python`, `exec`), a `command` check's copy of the workspace.

Removing them with `shutil.rmtree` recursed once per level: a suite's check, or the agent's
code that a `command` check runs (its tests import it), nesting 3,000 folders in its
workspace made the removal raise `RecursionError`, which left `run_checks` (the whole
evaluation with it) and left the tree on the host's disk, one per check run.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from sandbox_required import bwrap_sandbox

from registry.evaluation.checks import run_checks
from registry.format.suite import Case
from registry.sandbox import BwrapSandbox

LEVELS = 3000  # past Python's recursion limit (1,000)

# Nest folders through descriptors (a long path is refused by the kernel), as fast as Python
# can: the sandbox's guard stops it once it sees the nesting, but what was made stays.
NEST = f"""
import os
fd = os.open(".", os.O_RDONLY)
for _ in range({LEVELS}):
    os.mkdir("d", dir_fd=fd)
    child = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = child
"""


@pytest.fixture
def sandbox() -> BwrapSandbox:
    return bwrap_sandbox()


@pytest.fixture
def scratch(tmp_path: Path):
    folder = tmp_path / "scratch"
    folder.mkdir()
    yield folder
    # pytest's own clean-up recurses too: remove what a failing run left, whatever it is
    subprocess.run(["rm", "-rf", str(folder)], check=True)


def grade(sandbox: BwrapSandbox, scratch: Path, check: dict,
          workspace: Path | None = None) -> None:
    case = Case.model_validate({"id": "deep", "prompt": "p", "checks": [check]})
    verdicts = asyncio.run(run_checks(case, "output", sandbox=sandbox, sandbox_root=scratch,
                                      workspace=workspace))
    assert len(verdicts) == 1  # graded: the removal raised nothing


def test_a_python_check_nesting_folders_leaves_nothing_behind(sandbox, scratch):
    code = "def check(output, files):\n" + \
        "".join(f"    {line}\n" for line in NEST.strip().splitlines()) + \
        "    return True, 'nested'\n"
    grade(sandbox, scratch, {"type": "python", "code": code, "timeout": 30})
    assert list(scratch.iterdir()) == []


def test_a_command_check_running_code_that_nests_folders_leaves_nothing_behind(
        sandbox, scratch, tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "nest.py").write_text(NEST)  # the agent's code, which the check runs
    grade(sandbox, scratch, {"type": "command", "command": "python3 nest.py", "timeout_s": 30},
          workspace)
    assert list(scratch.iterdir()) == []
