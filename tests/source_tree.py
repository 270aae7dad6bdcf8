"""The checkout as a user gets it: a copy of its source, as a git repository of its own.

The wheel test, the release test and the install-docs test build or install from such a copy,
so the checkout stays untouched and what is tested is the working tree (uncommitted changes
included), not the last commit. Their processes run with a private HOME and no keys.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO_ROOT, SECRET_VARIABLES

#: top-level folders of a checkout that are not source (venvs, tools, build output, state)
NOT_SOURCE = {".git", ".venv", ".venv313", ".tools", "build", "dist", ".hubskills",
              ".seed-home", ".agents", ".claude", "skills.lock", "site", ".hypothesis",
              ".ruff_cache", ".pytest_cache"}


def ignore(folder: str, names: list[str]) -> set[str]:
    """`shutil.copytree`'s filter: caches, egg-info, and the top-level folders above."""
    top = Path(folder) == REPO_ROOT
    return {n for n in names if n == "__pycache__" or n.endswith((".pyc", ".egg-info"))
            or (top and n in NOT_SOURCE)}


def run(argv: list[str | Path], **kwargs) -> subprocess.CompletedProcess[str]:
    """Run `argv` to the end (20 minutes at most), its output captured as text."""
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, check=False,
                          timeout=1200, **kwargs)


def succeeded(step: str, done: subprocess.CompletedProcess[str]) -> None:
    """Fail the test with the tail of `done`'s output unless it exited 0."""
    if done.returncode != 0:
        pytest.fail(f"{step} failed:\n{(done.stdout + done.stderr)[-3000:]}")


def copy_source(target: Path) -> Path:
    """A copy of the checkout's source tree at `target`."""
    shutil.copytree(REPO_ROOT, target, ignore=ignore, symlinks=True)
    return target


def git_repository(target: Path) -> Path:
    """The source copied to `target` and committed there as one commit on `main`."""
    copy_source(target)
    git = ["git", "-C", target, "-c", "user.name=test", "-c", "user.email=test@example.com"]
    succeeded("git init", run([*git, "init", "--quiet", "--initial-branch=main"]))
    succeeded("git add", run([*git, "add", "--all"]))
    succeeded("git commit", run([*git, "commit", "--quiet", "--no-verify", "-m", "source"]))
    return target


def clean_env(home: Path, *path: Path) -> dict[str, str]:
    """This process's environment for a user's shell: no keys, no venv, HOME at `home`.

    `path` comes first on PATH, then `~/.local/bin` (where pipx and uv put tools) and the
    system's folders; the Hub is offline and output is plain.
    """
    env = {k: v for k, v in os.environ.items()
           if k not in SECRET_VARIABLES and not k.startswith(("XDG_", "HUBSKILLS_"))
           and k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIPX_HOME", "PIPX_BIN_DIR")}
    folders = [*path, home / ".local" / "bin", "/usr/local/bin", "/usr/bin", "/bin"]
    env.update(HOME=str(home), PATH=os.pathsep.join(str(f) for f in folders), NO_COLOR="1",
               COLUMNS="200", HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1")
    return env
