"""External agent harnesses: the real Claude Code, Codex, OpenCode and Gemini CLI as runners.

    runner = make_harness("claude-code", model=model, sandbox=sandbox, settings=settings)
    outcome = await runner.run(task)          # protocol "harness:claude-code"

Each CLI runs headless in the task's workspace inside the bwrap sandbox, with a fresh HOME, and
reaches only its model, through a proxy that holds the real key (`proxy.py`). The CLIs are npm
packages pinned in `ADAPTERS` and installed by `make agent-clis` under `.tools/agents` in the
checkout; one on PATH is used otherwise.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from registry._install import make_here
from registry.agent.harness.adapters import ADAPTERS
from registry.agent.harness.base import (
    AUX_REQUESTS,
    Adapter,
    Harness,
    count_turns,
    skill_files,
)
from registry.agent.harness.proxy import PLACEHOLDER_KEY, ModelProxy
from registry.agent.harness.replay import ResponseStore
from registry.agent.outcome import AgentRunner
from registry.config import Settings
from registry.errors import HubskillsError
from registry.providers.model import Model
from registry.sandbox.base import Sandbox
from registry.sandbox.bwrap import BwrapSandbox

__all__ = [
    "ADAPTERS", "AUX_REQUESTS", "HARNESSES", "PLACEHOLDER_KEY", "TOOLS_DIR", "Adapter", "Harness",
    "Installed", "ModelProxy", "count_turns", "find_cli", "installed_clis", "make_harness",
    "skill_files",
]

HARNESSES = tuple(ADAPTERS)
TOOLS_DIR = Path(__file__).resolve().parents[3] / ".tools" / "agents"  # `make agent-clis`


@dataclass(frozen=True)
class Installed:
    """Where one harness's CLI was found: its binary and the install folder to bind."""

    binary: Path
    install: Path


def find_cli(name: str, tools: Path = TOOLS_DIR) -> Installed | None:
    """The CLI of harness `name` under `tools` (see `make agent-clis`), else on PATH."""
    adapter = ADAPTERS[name]
    local = tools / "node_modules" / ".bin" / adapter.binary
    found = str(local) if os.access(local, os.X_OK) else shutil.which(adapter.binary)
    if found is None:
        return None
    real = Path(os.path.realpath(found))
    modules = next((p for p in real.parents if p.name == "node_modules"), real.parent)
    return Installed(real, modules)


def installed_clis(tools: Path = TOOLS_DIR) -> dict[str, Installed | None]:
    """Each harness and where its CLI is (None when missing): what `hubskills doctor` lists."""
    return {name: find_cli(name, tools) for name in HARNESSES}


def _install_hint(adapter: Adapter) -> str:
    """The command that installs `adapter`'s CLI: `make agent-clis` only run from a clone's
    checkout (a pipx or pip install has no Makefile, nor has a project folder), npm
    everywhere."""
    npm = f"npm install -g {adapter.package}@{adapter.version}"
    made = make_here("agent-clis")
    return f"{made} (installs it under .tools/agents), or {npm}" if made else npm


def make_harness(name: str, *, model: Model, sandbox: Sandbox | None, settings: Settings,
                 tools: Path = TOOLS_DIR, cache: ResponseStore | None = None,
                 read_cache: bool = True) -> AgentRunner:
    """The runner for `--harness NAME`; checks everything that costs nothing first. Its model
    answers go to `cache` and come from it unless `read_cache` is False (`--no-cache`).

    Raises:
        HubskillsError: an unknown harness, a model whose API that CLI does not speak, a
            sandbox other than bwrap (or none), or the CLI (or Node) not installed.
    """
    adapter_type = ADAPTERS.get(name)
    if adapter_type is None:
        raise HubskillsError(f"unknown harness {name!r}",
                             hint=f"use one of: {', '.join(HARNESSES)}")
    adapter = adapter_type()
    base_url = getattr(model.provider, "base_url", None)
    if model.provider_name not in adapter.providers or not base_url:
        raise HubskillsError(
            f"the {name} harness speaks the {adapter.wire} API; {model.ref} is served by "
            f"{model.provider_name}",
            hint=f"use --model with a {' or '.join(sorted(adapter.providers))} model for "
                 f"--harness {name}")
    if not isinstance(sandbox, BwrapSandbox):
        has = sandbox.name if sandbox is not None else "none: --skip-code-checks"
        raise HubskillsError(f"the {name} harness runs only inside the bwrap sandbox "
                             f"(this run has {has})",
                             hint="run on Linux with bubblewrap, without --skip-code-checks: "
                                  "hubskills doctor")
    installed = find_cli(name, tools)
    if installed is None:
        raise HubskillsError(
            f"the {name} harness needs the npm package {adapter.package}@{adapter.version}, "
            "which is not installed",
            hint=_install_hint(adapter))
    node = shutil.which("node")
    if node is None:
        raise HubskillsError(f"the {name} harness needs Node.js (node not found)",
                             hint=f"install Node.js 20 or newer, then: {_install_hint(adapter)}")
    del settings  # the model carries its endpoint and key; kept for the engine's one call shape
    return Harness(adapter, model=model, sandbox=sandbox, cli=installed.binary,
                   install=installed.install, base_url=str(base_url),
                   key=getattr(model.provider, "api_key", None),
                   node=Path(os.path.realpath(node)), cache=cache,
                   read_cache=read_cache)
