"""A chat eval imports only what a chat eval uses (the start-up goal of `bench/startup.py`).

Timing is left to the bench; this guards what decides it, without a clock: a fresh interpreter
runs `hubskills eval` of a small skill against a local fake server, to the end, and lists the
modules it loaded. None of agent mode, the trigger run, the pull machinery, the stores, Jobs,
the Hub or the Space's packages may be among them, nor the Anthropic SDK for an OpenAI-compatible
model. (The `openai` SDK is loaded: it is the chat path's client.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fakes.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parent.parent

#: Packages and modules a chat eval of a local folder must not load.
NOT_FOR_CHAT = (
    "anthropic", "gradio", "datasets", "pandas", "pyarrow", "huggingface_hub",
    "registry.agent.loop", "registry.agent.tools", "registry.agent.harness",
    "registry.evaluation.agent_mode", "registry.evaluation.trigger", "registry.jobs",
    "registry.hub", "registry.stores", "registry.install.pull", "registry.generate",
    # httpx (the SDKs speak httpx2) loads its command line, rich's progress bars and pygments;
    # markdown-it reads an answer's fenced files, which only code and workspace checks need.
    "httpx", "pygments", "markdown_it",
    "registry.providers.catalog", "registry.providers.embedded",  # `hubskills models` lists
    "registry.evaluation.workspace_checks", "registry.agent.bounds",  # file and command checks
)

_RUN = """
import json, sys
from registry.cli import main
out, argv = sys.argv[1], json.loads(sys.argv[2])
try:
    main(argv)
except SystemExit as exc:
    assert not exc.code, f"exit {exc.code}"
open(out, "w").write(json.dumps(sorted(sys.modules)))
"""


def _skill(root: Path) -> Path:
    folder = root / "tiny-skill"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text('---\nname: tiny-skill\ndescription: "A tiny skill. Use '
                                     'when testing start-up."\n---\n\nAnswer 42.\n')
    cases = [{"id": f"c{i}", "prompt": f"Question {i}?",
              "checks": [{"type": "contains", "value": ["42"]}]} for i in range(3)]
    (folder / "evals" / "evals.json").write_text(json.dumps({"cases": cases}))
    return folder


def _loaded_by(argv: list[str], tmp_path: Path) -> list[str]:
    """The modules a fresh `hubskills ARGV` had loaded when it finished (exit code 0)."""
    listing = tmp_path / "modules.json"
    env = {**os.environ, "HUBSKILLS_HOME": str(tmp_path / "home"), "NO_COLOR": "1",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _RUN, str(listing), json.dumps(argv)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(listing.read_text())


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == name or m.startswith(name + ".")
                                      for name in NOT_FOR_CHAT)]


def test_a_chat_eval_loads_no_agent_trigger_store_jobs_hub_space_or_sdk_module(tmp_path):
    with FakeOpenAIServer(responder=lambda body: "The answer is 42.") as server:
        modules = _loaded_by(["eval", str(_skill(tmp_path)), "-m", "local/m", "--runs", "1",
                              "--base-url", server.url, "--json"], tmp_path)
        answered = len(server.bodies)
    assert answered == 6  # 3 cases x 2 arms: the run did reach the model
    assert "registry.evaluation.engine" in modules and "openai" in modules
    assert _heavy(modules) == []


def test_help_loads_no_command_module(tmp_path):
    modules = _loaded_by(["--help"], tmp_path)
    assert [m for m in modules if m.startswith("registry.cli.") and not m.startswith(
        ("registry.cli._", "registry.cli.__"))] == []
    assert _heavy(modules) == []


def _run_python(code: str) -> None:
    """Run `code` in a fresh interpreter (nothing imported yet); its asserts must hold."""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_lazy_packages_still_give_their_names():
    code = ("import registry\n"
            "assert callable(registry.pull)  # the submodule `pull` loaded first\n"
            "from registry.install import pull\n"
            "from registry.install import install, update\n"
            "from registry.agent import Budget, ToolLoopRunner\n"
            "from registry.cli._trigger_eval import MODE\n"
            "from registry.evaluation.trigger import MODE as TRIGGER\n"
            "assert callable(pull) and callable(install) and callable(update), pull\n"
            "assert MODE == TRIGGER\n"
            "from registry.providers import ModelStatus, embedded_availability, known_models\n"
            "from registry.providers.embedded import availability\n"
            "assert embedded_availability is availability and callable(known_models)\n")
    _run_python(code)


def test_the_eval_report_loads_while_the_first_request_waits_not_before():
    """`hubskills eval` imports its report (numpy, the statistics) in a thread that starts only
    once the process waits on the network (the endpoint probe's round trip)."""
    code = ("import sys, threading, click\n"
            "from registry._lazy import network_wait\n"
            "from registry.cli import cli\n"
            "cli.get_command(click.Context(cli), 'eval')\n"
            "waiting = [t for t in threading.enumerate() if t.name.endswith('during-wait')]\n"
            "waiting[0].join(0.05)\n"
            "assert waiting[0].is_alive(), 'the thread ended before any wait'\n"
            "assert 'numpy' not in sys.modules and 'registry.cli._render' not in sys.modules\n"
            "network_wait()\n"
            "waiting[0].join()\n"
            "assert 'numpy' in sys.modules and 'registry.cli._render' in sys.modules\n")
    _run_python(code)


#: What storage never loads: it keeps bytes and records; replays live in `registry.verify`.
NOT_FOR_STORAGE = ("registry.evaluation", "registry.agent", "registry.sandbox", "registry.verify")


def test_opening_storage_loads_nothing_of_evaluation_agent_sandbox_or_verify():
    """`import registry.stores` (and reading a store's badges) in a fresh interpreter loads no
    module of the evaluation engine, the agent loop, the sandbox or the verifier."""
    code = ("import json, sys, registry.stores, registry.stores.verifications, "
            "registry.stores.seed; print(json.dumps(sorted(sys.modules)))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                       text=True, check=True, cwd=ROOT).stdout)
    assert [m for m in loaded if m.startswith(NOT_FOR_STORAGE)] == []
