"""The host snippets of docs/mcp.md, run where the host is scriptable: Claude Code adds
`hubskills mcp` (stdio, and a running `--http` server) with `claude mcp add` and its health
check, `claude mcp list`, connects to it; Codex's `codex mcp add` writes the TOML docs/mcp.md
shows. Their CLIs are the agent CLIs `make agent-clis` installs (a skip without them, a failure
under HUBSKILLS_REQUIRE_AGENT_CLIS=1).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from tests.agent_clis_required import agent_cli  # noqa: E402
from tests.test_mcp_clients import _env, _http_server  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(300)
QUIET = {"DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
         "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}


def _run(binary: Path, home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **QUIET, "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    return subprocess.run([str(binary), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=180)


def test_claude_code_connects_over_stdio_and_http(tmp_path: Path) -> None:
    claude = agent_cli("claude-code").binary
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    envs = [arg for key, value in _env(tmp_path / "hubskills-home").items()
            for arg in ("-e", f"{key}={value}")]
    added = _run(claude, home, project, "mcp", "add", "-s", "local", "hubskills", *envs, "--",
                 sys.executable, "-m", "registry.cli", "mcp")
    assert added.returncode == 0, added.stderr
    with _http_server(tmp_path / "hubskills-home") as url:
        added = _run(claude, home, project, "mcp", "add", "-s", "local", "--transport", "http",
                     "hubskills-http", url)
        assert added.returncode == 0, added.stderr
        listed = _run(claude, home, project, "mcp", "list")
    assert listed.returncode == 0, listed.stderr
    lines = {line.split(":", 1)[0]: line for line in listed.stdout.splitlines() if ":" in line}
    assert "Connected" in lines["hubskills"], listed.stdout
    assert "Connected" in lines["hubskills-http"], listed.stdout


def test_codex_writes_the_documented_config(tmp_path: Path) -> None:
    codex = agent_cli("codex").binary
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    added = _run(codex, home, tmp_path, "mcp", "add", "hubskills", "--", "hubskills", "mcp")
    assert added.returncode == 0, added.stderr
    config = tomllib.loads((home / ".codex" / "config.toml").read_text(encoding="utf-8"))
    documented = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    snippet = documented.split("```toml\n", 1)[1].split("```", 1)[0]
    assert config["mcp_servers"] == tomllib.loads(snippet)["mcp_servers"]
