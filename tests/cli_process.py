"""The `hubskills` command as users run it: a separate process, its output a pipe (no terminal).

What users see (progress in CI logs, Ctrl-C, exit codes) is only real in a process of its own:
these helpers start `python -m registry.cli` from this checkout with the test's environment
(its private HUBSKILLS_HOME, no keys, offline Hub).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


def cli_env(**extra: str | None) -> dict[str, str]:
    """The test's environment for the child; a value of None removes the variable."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONUNBUFFERED": "1"}
    for name, value in extra.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def hubskills(*args: str | Path, timeout: float = 180, cwd: Path | None = None,
              **env: str | None) -> subprocess.CompletedProcess[str]:
    """Run `hubskills ARGS` to the end; stdout and stderr are pipes."""
    return subprocess.run([sys.executable, "-m", "registry.cli", *map(str, args)],
                          cwd=cwd or REPO_ROOT, env=cli_env(**env), capture_output=True,
                          text=True, timeout=timeout, check=False)


def start(*args: str | Path, **env: str | None) -> subprocess.Popen[str]:
    """Start `hubskills ARGS` in the background; stdout and stderr are pipes."""
    return subprocess.Popen([sys.executable, "-m", "registry.cli", *map(str, args)],
                            cwd=REPO_ROOT, env=cli_env(**env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def runs(home: Path) -> list[dict[str, Any]]:
    """The manifests of the runs saved under `home`, oldest first: by when each started, then
    when its manifest was last written (two runs that started in one second have ids in no
    order: their random part decides; a fast machine made the rerun sort first)."""
    found = [(json.loads(path.read_text()), path.stat().st_mtime_ns)
             for path in home.glob("runs/*/manifest.json")]
    return [m for m, _ in sorted(found, key=lambda pair: (pair[0]["started_at"], pair[1]))]


def row_count(home: Path, run_id: str) -> int:
    """Rows written so far for a run (complete lines only)."""
    path = home / "runs" / run_id / "rows.jsonl"
    return path.read_text().count("\n") if path.is_file() else 0


def read_all(fd: int) -> str:
    """Everything a child wrote to the terminal `fd` (a pty's primary side) until it closed its
    end; the caller closes `fd`."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")
