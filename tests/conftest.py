"""Shared fixtures: every test gets its own HUBSKILLS_HOME, no keys, and no network."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

# Read once, at import, by huggingface_hub and datasets: set before anything imports them.
# The Hub-compatible test server has no Xet CAS, so uploads go through plain LFS.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# Freeze huggingface_hub's constants now, online: in-process clients talk to the Hub-compatible
# test server (pytest-socket allows 127.0.0.1 only); subprocesses get HF_HUB_OFFLINE=1 below.
import huggingface_hub.constants  # noqa: E402, F401
import pytest  # noqa: E402

SECRET_VARIABLES = (
    "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN",
    "HUBSKILLS_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "HUBSKILLS_REGISTRY",
    "HUBSKILLS_NAMESPACE", "HUBSKILLS_RESULTS_REPO", "HF_ENDPOINT",
)
REPO_ROOT = Path(__file__).resolve().parent.parent

# The tests that send SIGINT play a user's Ctrl-C at a terminal, where a command never starts
# with SIGINT ignored. A suite started in the background (`.ci/run &` in a script, `nohup`, a
# detached job) inherits an ignored SIGINT, and every command it starts would too: Python then
# raises no KeyboardInterrupt, so `hubskills space` or a Jobs launch would wait for a Ctrl-C that
# never comes. A handler here (not SIG_IGN) is reset to the default in each child at exec.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# The command line's consoles (rich) fix their width for good when COLUMNS is set as they are
# made, and read it on every print when it is not: made here without it, each test's COLUMNS
# (200 below, 80 where a test asks) holds, whichever test first imported the command line.
_columns = os.environ.pop("COLUMNS", None)
import registry.cli._output  # noqa: E402, F401

if _columns is not None:
    os.environ["COLUMNS"] = _columns


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HUBSKILLS_HOME per test, offline Hub, no credentials, plain output."""
    home = tmp_path / "hubskills-home"
    monkeypatch.setenv("HUBSKILLS_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    for name in SECRET_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture(autouse=True, scope="module")
def _spaces_stop_with_their_module() -> Iterator[None]:
    """The Spaces a test module built stop refreshing when it ends: each started a refresher
    (and a pending-replay worker) that would otherwise read its store, and collect and freeze
    the heap, in the background of every later module, to the end of the suite."""
    yield
    snapshot = sys.modules.get("space.snapshot")  # never imported (Gradio) just for this
    if snapshot is not None:
        snapshot.stop_all()


@pytest.fixture
def skills_dir() -> Path:
    """The example skills shipped with the project."""
    return REPO_ROOT / "skills"


#: Each API family's fake server: (model reference, key variable, URL variable).
PROVIDER_SERVERS = {
    "openai": ("openai/gpt-4.1", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": ("anthropic/claude-sonnet-5-5", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
}


@pytest.fixture(params=sorted(PROVIDER_SERVERS))
def provider_api(request: pytest.FixtureRequest, tmp_path: Path):
    """(model, server) for each API family, with fast retries."""
    from fakes.anthropic_server import FakeAnthropicServer
    from fakes.openai_server import FakeOpenAIServer

    from registry.config import Settings
    from registry.providers import RetryPolicy, resolve

    ref, key_var, url_var = PROVIDER_SERVERS[request.param]
    server_class = {"openai": FakeOpenAIServer, "anthropic": FakeAnthropicServer}[request.param]
    with server_class(api_key="right-key") as server:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      key_var: "right-key", url_var: server.url})
        fast = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.01)
        yield resolve(ref, settings, retry=fast), server


def pytest_report_header(config: pytest.Config) -> str:
    """Say which optional capabilities this run has."""
    required = os.environ.get("HUBSKILLS_REQUIRE_BROWSER", "")
    return f"hubskills tests; HUBSKILLS_REQUIRE_BROWSER={required}"
