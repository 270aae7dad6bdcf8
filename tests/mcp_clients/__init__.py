"""Real MCP clients for the tests (`make mcp-clients`): the MCP Inspector's CLI and fast-agent,
each found where the Makefile installs it, or a skip (a failure under
HUBSKILLS_REQUIRE_MCP_CLIENTS=1, which CI sets)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
INSPECTOR_VERSION = "2.12.0"  # @modelcontextprotocol/inspector, as the Makefile pins it
FAST_AGENT_VERSION = "0.10.48"  # fast-agent-mcp, in its own venv (it needs Python 3.12+)
INSPECTOR = ROOT / ".tools" / "mcp-inspector" / "node_modules" / ".bin" / "mcp-inspector"
FAST_AGENT_PYTHON = ROOT / ".tools" / "fast-agent" / "bin" / "python"
FAST_AGENT_PROBE = Path(__file__).with_name("fast_agent_probe.py")


def _installed(path: Path, what: str) -> Path:
    if path.exists():
        return path
    why = f"{what} is not installed at {path.relative_to(ROOT)} (make mcp-clients)"
    if os.environ.get("HUBSKILLS_REQUIRE_MCP_CLIENTS") == "1":
        pytest.fail(f"{why}; HUBSKILLS_REQUIRE_MCP_CLIENTS=1 requires it")
    pytest.skip(why)


def inspector() -> Path:
    """The MCP Inspector's launcher (run as `mcp-inspector --cli ...`), or skip."""
    return _installed(INSPECTOR, f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}")


def fast_agent_python() -> Path:
    """The Python of fast-agent's venv, or skip."""
    return _installed(FAST_AGENT_PYTHON, f"fast-agent-mcp=={FAST_AGENT_VERSION}")
