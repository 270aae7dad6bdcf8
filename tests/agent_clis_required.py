"""An agent CLI for the harness tests, or a skip; under HUBSKILLS_REQUIRE_AGENT_CLIS=1 (set by
CI, which runs `make agent-clis`) a missing CLI fails those tests instead."""

from __future__ import annotations

import os
import shutil

import pytest

from registry.agent.harness import ADAPTERS, Installed, find_cli


def agent_cli(name: str) -> Installed:
    """Where harness `name`'s CLI is installed (with Node on PATH), or skip (or fail)."""
    found = find_cli(name)
    why = None
    if found is None:
        adapter = ADAPTERS[name]
        why = f"{adapter.package}@{adapter.version} is not installed (make agent-clis)"
    elif shutil.which("node") is None:
        why = "node is not installed"
    if why is not None:
        if os.environ.get("HUBSKILLS_REQUIRE_AGENT_CLIS") == "1":
            pytest.fail(f"{why}; HUBSKILLS_REQUIRE_AGENT_CLIS=1 requires it")
        pytest.skip(why)
    assert found is not None
    return found
