"""The real SmolLM2-135M: in-process (`embedded/`) and behind `llama_cpp.server` (`local/`).

Few and quick on purpose: short prompts, a handful of tokens. They run in `make test`.
"""

from __future__ import annotations

import asyncio
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
from registry.errors import ContextOverflow
from registry.providers import EMBEDDED_REF, Message, resolve
from registry.providers import embedded_availability as availability
from registry.providers.embedded import gguf_path

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


@pytest.fixture(scope="session")
def llama_server():
    """`python -m llama_cpp.server` serving the shipped GGUF on 127.0.0.1; yields its /v1 URL."""
    port = _free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()),
               "--model_alias", SERVED_ALIAS, "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", "2048", "--n_threads", "2"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "NO_COLOR": "1"})
    url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_for_models(url, process)
        yield url
    finally:
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
    with pytest.raises(ContextOverflow):
        asyncio.run(model.complete([Message("user", "word " * 3000)], max_tokens=4))


def test_models_lists_the_served_model(tmp_path, llama_server):
    result = CliRunner().invoke(models_command, ["--json", "--base-url", llama_server],
                                env={"HUBSKILLS_HOME": str(tmp_path / "home")})
    rows = {row["ref"]: row for row in json.loads(result.stdout)["models"]}
    assert rows[f"local/{SERVED_ALIAS}"]["usable"] is True
    assert rows[EMBEDDED_REF]["usable"] is True
