"""`hubskills ask` and `hubskills models` through click's CliRunner, against fake servers."""

from __future__ import annotations

import json
import shlex
import socket
import time

import pytest
from cli_process import hubskills
from click.testing import CliRunner
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer

from registry.cli.ask import ask_command
from registry.cli.models import models_command
from registry.errors import MissingCredentials, UnknownModel
from registry.providers import ALIASES, EMBEDDED_REF, embedded_availability


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def invoke(runner: CliRunner, command, args: list[str], tmp_path, **env: str):
    env = {"HUBSKILLS_HOME": str(tmp_path / "home"), "NO_COLOR": "1", "COLUMNS": "200", **env}
    return runner.invoke(command, args, env=env)


def test_ask_prints_the_answer_then_usage(runner, tmp_path):
    with FakeOpenAIServer(api_key="sk-test") as server:
        server.enqueue({"text": "Four. [not markup]",
                        "usage": {"prompt_tokens": 1000, "completion_tokens": 100}})
        result = invoke(runner, ask_command,
                        ["openai/gpt-4.1", "What is 2 + 2?", "--system", "Be brief.",
                         "--max-tokens", "20", "--temperature", "0.2", "--seed", "5"],
                        tmp_path, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=server.url)
        body = server.last
    assert result.exit_code == 0, result.output
    assert result.stdout == "Four. [not markup]\n"
    assert "1000 in / 100 out tokens" in result.stderr
    assert "$0.0028" in result.stderr  # 1000 * $2 + 100 * $8 per million
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert (body["max_tokens"], body["temperature"], body["seed"]) == (20, 0.2, 5)


def test_ask_json(runner, tmp_path):
    with FakeAnthropicServer(api_key="k") as server:
        result = invoke(runner, ask_command, ["haiku", "hello claude", "--json"], tmp_path,
                        ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=server.url)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["model"] == ALIASES["haiku"]
    assert data["text"] == "hello claude"
    assert data["usage"]["input_tokens"] > 0 and data["cost_usd"] > 0
    assert data["finish_reason"] == "stop"


def test_ask_local_with_base_url_costs_nothing(runner, tmp_path):
    with FakeOpenAIServer() as server:
        result = invoke(runner, ask_command, ["local/tiny", "hi", "--base-url", server.url],
                        tmp_path)
    assert result.exit_code == 0, result.output
    assert "$0 (local)" in result.stderr


def test_ask_errors_are_typed(runner, tmp_path):
    unknown = invoke(runner, ask_command, ["mistral/large", "hi"], tmp_path)
    assert isinstance(unknown.exception, UnknownModel)
    missing = invoke(runner, ask_command, ["sonnet", "hi"], tmp_path)
    assert isinstance(missing.exception, MissingCredentials)
    assert missing.exception.variable == "ANTHROPIC_API_KEY"


@pytest.mark.parametrize("model", ["local/tiny", "anthropic/claude-haiku-5-5", "sonnet"])
def test_ask_with_a_model_and_no_question_hints_a_question_for_that_model(runner, tmp_path,
                                                                        model):
    result = invoke(runner, ask_command, [model], tmp_path)
    assert result.exit_code == 1
    hinted = shlex.split(result.exception.hint)
    assert hinted[:3] == ["hubskills", "ask", model] and len(hinted) == 4
    assert hinted[3] != model and " " in hinted[3]  # a question, not the model's name again
    if model.startswith("local/"):  # the hint, followed, asks that question of that server
        with FakeOpenAIServer() as server:
            told = invoke(runner, ask_command, [model, "--base-url", server.url], tmp_path)
            hinted = shlex.split(told.exception.hint)
            assert hinted[4:] == ["--base-url", server.url]
            done = invoke(runner, ask_command, hinted[2:], tmp_path)
            asked = json.dumps(server.last["messages"])
        assert done.exit_code == 0, done.output
        assert hinted[3] in asked and model not in asked


def test_ask_with_only_a_question_hints_the_default_model(runner, tmp_path):
    result = invoke(runner, ask_command, ["What is a SKILL.md?"], tmp_path)
    assert result.exit_code == 1
    assert shlex.split(result.exception.hint)[3:] == ["What is a SKILL.md?"]


def test_models_lists_usability_and_prices(runner, tmp_path):
    with FakeOpenAIServer(models=["smollm2-135m-instruct"]) as server:
        result = invoke(runner, models_command, ["--json"], tmp_path, OPENAI_API_KEY="sk",
                        HUBSKILLS_BASE_URL=server.url)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rows = {row["ref"]: row for row in data["models"]}
    assert data["prices_as_of"]
    assert rows[ALIASES["opus"]]["alias"] == "opus"
    assert rows[ALIASES["opus"]]["usable"] is False
    assert "ANTHROPIC_API_KEY" in rows[ALIASES["opus"]]["why"]
    openai_rows = [row for ref, row in rows.items() if ref.startswith("openai/")]
    assert openai_rows and all(row["usable"] for row in openai_rows)
    assert rows["local/smollm2-135m-instruct"]["usable"] is True
    assert rows["local/smollm2-135m-instruct"]["price"] == "free (runs locally)"
    assert any(ref.startswith("hf/") and row["price"] == "unknown" for ref, row in rows.items())
    assert EMBEDDED_REF in rows
    # what a trigger eval's "cannot call tools" hint sends the user here to find
    assert rows[EMBEDDED_REF]["tools"] is False and rows[ALIASES["opus"]]["tools"] is True


def test_models_table_without_a_local_server(runner, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    started = time.monotonic()
    result = invoke(runner, models_command, ["--base-url", dead], tmp_path)
    assert time.monotonic() - started < 5
    assert result.exit_code == 0, result.output
    assert "local/<model>" in result.stdout
    assert "no answer from" in result.stdout
    assert "sonnet" in result.stdout and EMBEDDED_REF in result.stdout


def test_models_says_how_to_enable_local(runner, tmp_path):
    result = invoke(runner, models_command, [], tmp_path)
    assert "HUBSKILLS_BASE_URL" in result.stdout


def test_models_at_80_columns_wraps_why_instead_of_cutting_it(tmp_path):
    """At 80 columns local/'s row read `set --base-url URL or…`: what to set, cut. (Its own
    process: in the suite's, a console an earlier test sized kept its width.)"""
    result = hubskills("models", HUBSKILLS_HOME=str(tmp_path / "home"), NO_COLOR="1",
                       COLUMNS="80")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "…" not in result.stdout and all(len(line) <= 80 for line in lines), result.stdout
    start = next(i for i, line in enumerate(lines) if line.startswith("local/<model>"))
    assert "set --base-url URL or" in lines[start]
    assert lines[start + 1].split() == ["HUBSKILLS_BASE_URL"]  # the rest of the cell


# --- ask as users run it: its own process, output piped ------------------------------------


def test_ask_keeps_answers_short_by_default_and_says_when_it_cut_one():
    rambling = " ".join(["word"] * 1000)
    with FakeOpenAIServer(responder=lambda _body: rambling) as server:
        done = hubskills("ask", "local/tiny", "Tell me everything.", "--base-url", server.url)
        asked = server.last["max_tokens"]
    assert done.returncode == 0, done.stderr
    assert asked == 256  # the default: not 512 tokens of drift from a small model
    assert done.stdout.split() == ["word"] * 256
    assert "(cut at --max-tokens 256: raise it for a longer answer)" in done.stderr


@pytest.mark.skipif(not embedded_availability()[0], reason="the embedded model is not installed")
@pytest.mark.parametrize(("question", "expected"), [
    ("What is 2 + 2?", "4"),
    ("Name three primary colors.", "Yellow"),
])
def test_the_readme_questions_get_sensible_answers_from_the_embedded_model(question, expected):
    done = hubskills("ask", EMBEDDED_REF, question)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout
    assert "cut at --max-tokens" not in done.stderr  # it finished its answer
