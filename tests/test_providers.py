"""Providers end to end: the real `openai` and `anthropic` SDKs against local fake servers.

Nothing is patched: each test starts a fake API on 127.0.0.1, resolves a model reference at
it, and asserts on what the server received and on what the provider returned.
"""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropicServer
from fakes.openai_server import FakeOpenAIServer

from registry.config import Settings
from registry.errors import (
    ContextOverflow,
    HubskillsError,
    MissingCredentials,
    ProviderError,
    UnknownModel,
)
from registry.providers import (
    ALIASES,
    EMBEDDED_REF,
    Message,
    Model,
    RetryPolicy,
    ToolCall,
    ToolSpec,
    default_model_ref,
    resolve,
)
from registry.providers.anthropic import AnthropicProvider

FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.01)
WEATHER = ToolSpec("get_weather", "Current weather for a city.",
                   {"type": "object", "properties": {"city": {"type": "string"}},
                    "required": ["city"]})


def make_settings(tmp_path: Path, **env: str) -> Settings:
    """Settings from an explicit environment: nothing leaks in from the real one."""
    return Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"), **env})


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def openai_server():
    with FakeOpenAIServer(api_key="sk-test") as server:
        yield server


@pytest.fixture
def anthropic_server():
    with FakeAnthropicServer(api_key="sk-ant-test") as server:
        yield server


@pytest.fixture
def openai_settings(tmp_path, openai_server) -> Settings:
    return make_settings(tmp_path, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=openai_server.url)


@pytest.fixture
def anthropic_settings(tmp_path, anthropic_server) -> Settings:
    return make_settings(tmp_path, ANTHROPIC_API_KEY="sk-ant-test",
                         ANTHROPIC_BASE_URL=anthropic_server.url)


def chat(*pairs: tuple[str, str]) -> list[Message]:
    return [Message(role, content) for role, content in pairs]  # type: ignore[arg-type]


# -- OpenAI-compatible: request shape, usage, cost ----------------------------------------------

def test_openai_sends_messages_seed_stop_and_limits(openai_server, openai_settings):
    model = resolve("openai/gpt-4.1", openai_settings)
    openai_server.enqueue({"text": "Paris is the capital. END ignored",
                           "usage": {"prompt_tokens": 1000, "completion_tokens": 500,
                                     "cached_tokens": 200}})
    completion = run(model.complete(chat(("system", "Be brief."), ("user", "Capital of France?")),
                                    temperature=0.3, max_tokens=64, seed=7, stop=["END"]))
    body = openai_server.last
    assert body["model"] == "gpt-4.1"
    assert body["messages"] == [{"role": "system", "content": "Be brief."},
                                {"role": "user", "content": "Capital of France?"}]
    assert (body["seed"], body["stop"], body["max_tokens"], body["temperature"]) == (
        7, ["END"], 64, 0.3)
    assert "tools" not in body
    assert openai_server.requests[-1]["headers"]["authorization"] == "<redacted>"
    assert completion.text == "Paris is the capital. "
    assert completion.finish_reason == "stop"
    assert completion.model == "gpt-4.1"
    assert completion.usage.input_tokens == 1000
    assert completion.usage.cache_read_tokens == 200
    assert completion.usage.output_tokens == 500
    assert completion.cost_usd == pytest.approx((800 * 2 + 200 * 0.5 + 500 * 8) / 1e6)
    assert completion.latency_s > 0


def test_openai_reasoning_models_get_completion_budget_and_client_side_stop(
        openai_server, openai_settings):
    model = resolve("openai/gpt-5.5", openai_settings)
    openai_server.enqueue({"text": "one two STOP three", "usage": {"reasoning_tokens": 40}})
    completion = run(model.complete(chat(("user", "count")), max_tokens=300, stop=["STOP"],
                                    temperature=0.0, seed=1))
    body = openai_server.last
    assert body["max_completion_tokens"] == 300
    assert "max_tokens" not in body and "temperature" not in body and "stop" not in body
    assert completion.text == "one two "
    assert completion.usage.reasoning_tokens == 40


def test_openai_max_tokens_reports_length(openai_server, openai_settings):
    model = resolve("openai/gpt-4.1-mini", openai_settings)
    completion = run(model.complete(chat(("user", "a b c d e f g h")), max_tokens=3))
    assert completion.text == "a b c"
    assert completion.finish_reason == "length"
    assert completion.usage.output_tokens == 3


def test_openai_tool_calls_both_ways(openai_server, openai_settings):
    model = resolve("openai/gpt-4.1", openai_settings)
    openai_server.enqueue({"tool_calls": [{"id": "call_9", "name": "get_weather",
                                           "arguments": {"city": "Oslo"}}]},
                          {"tool_calls": [{"name": "get_weather", "arguments": "not json"}]})
    first = run(model.complete(chat(("user", "Weather in Oslo?")), tools=[WEATHER]))
    assert first.finish_reason == "tool_calls"
    assert first.tool_calls == [ToolCall("call_9", "get_weather", {"city": "Oslo"})]
    assert openai_server.last["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": WEATHER.description,
        "parameters": WEATHER.parameters}}]
    history = [Message("user", "Weather in Oslo?"),
               Message("assistant", "", tool_calls=first.tool_calls),
               Message("tool", "-3 C, snow", tool_call_id="call_9")]
    second = run(model.complete(history, tools=[WEATHER]))
    sent = openai_server.last["messages"]
    assert sent[1]["role"] == "assistant" and sent[1]["content"] is None
    assert sent[1]["tool_calls"][0]["function"] == {"name": "get_weather",
                                                    "arguments": '{"city": "Oslo"}'}
    assert sent[2] == {"role": "tool", "tool_call_id": "call_9", "content": "-3 C, snow"}
    assert second.tool_calls[0].arguments == {"_raw": "not json"}
    # the body goes out as built (the SDK's `post`): nothing added, dropped or renamed
    assert openai_server.last == model.provider.request_body(
        history, model="gpt-4.1", tools=[WEATHER], temperature=0.0, max_tokens=512, seed=None,
        stop=None)


def test_hf_router_sends_org_model_and_provider(tmp_path, openai_server):
    settings = make_settings(tmp_path, HF_TOKEN="sk-test", HUBSKILLS_HF_ROUTER=openai_server.url)
    model = resolve("hf/Qwen/Qwen3-8B:novita", settings)
    assert (model.ref, model.model_id, model.provider_name) == (
        "hf/Qwen/Qwen3-8B:novita", "Qwen/Qwen3-8B:novita", "hf")
    completion = run(model.complete(chat(("user", "hello"))))
    assert openai_server.last["model"] == "Qwen/Qwen3-8B:novita"
    assert completion.text == "hello"
    assert completion.cost_usd is None  # unknown, never $0


def test_local_needs_a_base_url_and_no_key(tmp_path):
    with pytest.raises(HubskillsError) as info:
        resolve("local/qwen3", make_settings(tmp_path))
    assert "--base-url URL or export HUBSKILLS_BASE_URL=" in info.value.hint
    with FakeOpenAIServer() as server:
        by_arg = resolve("local/qwen3", make_settings(tmp_path), base_url=server.url)
        by_env = resolve("local/qwen3", make_settings(tmp_path, HUBSKILLS_BASE_URL=server.url))
        assert by_arg.provider is by_env.provider
        completion = run(by_arg.complete(chat(("user", "hi there"))))
        assert server.last["model"] == "qwen3"
        assert server.requests[-1]["headers"]["authorization"] == "<redacted>"
    assert completion.text == "hi there"
    assert completion.cost_usd == 0.0


# -- Anthropic: request shape, usage, cost -------------------------------------------------------

def test_anthropic_system_stop_and_usage(anthropic_server, anthropic_settings):
    model = resolve("sonnet", anthropic_settings)
    assert model.ref == ALIASES["sonnet"] and model.provider_name == "anthropic"
    anthropic_server.enqueue({"text": "Bonjour", "usage": {
        "input_tokens": 100, "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 200, "output_tokens": 50, "thinking_tokens": 20}})
    completion = run(model.complete(chat(("system", "Be brief."), ("system", "Speak French."),
                                         ("user", "Hello")),
                                    max_tokens=99, seed=3, stop=["\n\n"], temperature=0.5))
    body = anthropic_server.last
    assert body["system"] == "Be brief.\n\nSpeak French."
    assert body["messages"] == [{"role": "user", "content": "Hello"}]
    assert (body["max_tokens"], body["stop_sequences"]) == (99, ["\n\n"])
    assert "seed" not in body and "temperature" not in body  # Claude 5.x rejects temperature
    usage = completion.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        1300, 1000, 200)
    assert (usage.output_tokens, usage.reasoning_tokens) == (50, 20)
    assert completion.cost_usd == pytest.approx(
        (100 * 2 + 1000 * 0.10 + 200 * 2.50 + 50 * 10) / 1e6)
    assert completion.finish_reason == "stop"
    assert completion.text == "Bonjour"


def test_anthropic_older_models_still_get_temperature(anthropic_server, anthropic_settings):
    run(resolve("anthropic/claude-haiku-4-5", anthropic_settings)
        .complete(chat(("user", "hi")), temperature=0.7))
    assert anthropic_server.last["temperature"] == 0.7


def test_anthropic_tool_use_and_tool_results(anthropic_server, anthropic_settings):
    model = resolve("anthropic/claude-haiku-5-5", anthropic_settings)
    anthropic_server.enqueue({"text": "Checking.", "tool_calls": [
        {"id": "toolu_1", "name": "get_weather", "arguments": {"city": "Oslo"}},
        {"id": "toolu_2", "name": "get_weather", "arguments": {"city": "Rome"}}]})
    first = run(model.complete(chat(("user", "Oslo and Rome?")), tools=[WEATHER]))
    assert anthropic_server.last["tools"] == [{"name": "get_weather",
                                               "description": WEATHER.description,
                                               "input_schema": WEATHER.parameters}]
    assert first.finish_reason == "tool_calls" and first.text == "Checking."
    assert [c.arguments["city"] for c in first.tool_calls] == ["Oslo", "Rome"]
    history = [Message("user", "Oslo and Rome?"),
               Message("assistant", first.text, tool_calls=first.tool_calls),
               Message("tool", "-3 C", tool_call_id="toolu_1"),
               Message("tool", "18 C", tool_call_id="toolu_2")]
    run(model.complete(history, tools=[WEATHER]))
    sent = anthropic_server.last["messages"]
    assert [turn["role"] for turn in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][1] == {"type": "tool_use", "id": "toolu_1",
                                     "name": "get_weather", "input": {"city": "Oslo"}}
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "-3 C"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "18 C"}]


# -- References, keys, instances -----------------------------------------------------------------

@pytest.mark.parametrize("alias", ["opus", "sonnet", "haiku", "anthropic/opus", " Haiku "])
def test_aliases_name_current_anthropic_models(tmp_path, alias):
    model = resolve(alias, make_settings(tmp_path, ANTHROPIC_API_KEY="k"))
    assert model.ref == ALIASES[alias.strip().lower().removeprefix("anthropic/")]
    assert model.model_id.startswith("claude-")


@pytest.mark.parametrize("ref", ["gpt-4o", "mistral/large", "openai/", "hf/justamodel",
                                 "embedded/llama-70b"])
def test_unknown_references(tmp_path, ref):
    with pytest.raises(UnknownModel) as info:
        resolve(ref, make_settings(tmp_path))
    assert info.value.hint


@pytest.mark.parametrize(("ref", "meant"), [
    ("gpt-4.1-mini", "openai/gpt-4.1-mini"), ("gpt-41-mini", "openai/gpt-4.1-mini"),
    ("claude-opus-5-5", "anthropic/claude-opus-5-5"), ("opnai/gpt-4o", "openai/gpt-4o"),
    ("Qwen/Qwen3-8B", "hf/Qwen/Qwen3-8B"), ("smollm2-135m", "embedded/smollm2-135m")])
def test_an_unknown_reference_says_which_one_it_likely_means(tmp_path, ref, meant):
    """Issue 38: `-m gpt-4.1-mini` names `openai/gpt-4.1-mini`, which resolves."""
    with pytest.raises(UnknownModel) as info:
        resolve(ref, make_settings(tmp_path))
    assert f"(did you mean '{meant}'?)" in info.value.message
    assert resolve(meant, make_settings(tmp_path, OPENAI_API_KEY="k", ANTHROPIC_API_KEY="k",
                                        HF_TOKEN="hf_k")).ref == meant


def test_unknown_prefix_hints_at_models_command(tmp_path):
    with pytest.raises(UnknownModel) as info:
        resolve("mistral/large", make_settings(tmp_path))
    assert info.value.hint == "hubskills models"


@pytest.mark.parametrize(("ref", "variable"), [
    ("anthropic/claude-opus-5-5", "ANTHROPIC_API_KEY"), ("opus", "ANTHROPIC_API_KEY"),
    ("openai/gpt-5.5", "OPENAI_API_KEY"), ("hf/Qwen/Qwen3-8B", "HF_TOKEN")])
def test_missing_key_names_the_variable(tmp_path, ref, variable):
    with pytest.raises(MissingCredentials) as info:
        resolve(ref, make_settings(tmp_path))
    assert info.value.variable == variable
    assert variable in str(info.value) and variable in info.value.hint


def test_default_model_ref(tmp_path):
    assert default_model_ref(make_settings(tmp_path)) == EMBEDDED_REF
    assert default_model_ref(make_settings(tmp_path, HF_TOKEN="x")) == EMBEDDED_REF
    assert default_model_ref(make_settings(tmp_path, ANTHROPIC_API_KEY="x")) == ALIASES["sonnet"]
    assert default_model_ref(make_settings(tmp_path, OPENAI_API_KEY="x")).startswith("openai/")


def test_providers_and_clients_are_created_once(openai_server, openai_settings):
    first = resolve("openai/gpt-4.1", openai_settings)
    second = resolve("openai/gpt-5.5", openai_settings)
    other = resolve("openai/gpt-4.1", openai_settings, base_url=openai_server.url + "/")
    assert first.provider is second.provider is other.provider

    async def two_calls():
        client = first.provider.client()
        await first.complete(chat(("user", "a")))
        await second.complete(chat(("user", "b")))
        return client is first.provider.client()

    assert run(two_calls())
    assert len(openai_server.bodies) == 2


def test_default_concurrency_per_provider(tmp_path, openai_server):
    settings = make_settings(tmp_path, ANTHROPIC_API_KEY="k", OPENAI_API_KEY="k", HF_TOKEN="k",
                             HUBSKILLS_BASE_URL=openai_server.url)
    sizes = {ref.partition("/")[0]: resolve(ref, settings).default_concurrency
             for ref in ("anthropic/x", "openai/x", "hf/a/b", "local/x", EMBEDDED_REF)}
    assert sizes == {"anthropic": 8, "openai": 16, "hf": 8, "local": 4, "embedded": 1}


# -- Failures: retries, backoff, translation ---------------------------------------------------

def test_5xx_then_success_is_retried(provider_api):
    model, server = provider_api
    server.fail_next(2, status=503)
    completion = run(model.complete(chat(("user", "third time lucky"))))
    assert completion.text == "third time lucky"
    assert len(server.bodies) == 3


def test_429_honours_retry_after(provider_api):
    model, server = provider_api
    server.fail_next(1, status=429, retry_after=0.3)
    run(model.complete(chat(("user", "later"))))
    first, second = (r["time"] for r in server.requests[-2:])
    assert second - first >= 0.28


def test_retry_after_is_capped(tmp_path, openai_server):
    capped = RetryPolicy(attempts=2, base_delay=0.001, max_retry_after=0.05)
    model = resolve("local/m", make_settings(tmp_path), base_url=openai_server.url, retry=capped)
    openai_server.api_key = None
    openai_server.fail_next(1, status=429, retry_after=3600)
    started = time.monotonic()
    run(model.complete(chat(("user", "x"))))
    assert time.monotonic() - started < 600  # not the hour the server asked for


def test_persistent_500_gives_up_after_the_attempts(provider_api):
    model, server = provider_api
    server.fail_next(10, status=500)
    with pytest.raises(ProviderError) as info:
        run(model.complete(chat(("user", "x"))))
    assert info.value.status == 500
    assert "keeps failing" in str(info.value)
    assert len(server.bodies) == FAST.attempts


def test_401_names_the_variable_and_is_not_retried(provider_api):
    model, server = provider_api
    server.api_key = "another-key"
    with pytest.raises(MissingCredentials) as info:
        run(model.complete(chat(("user", "x"))))
    assert info.value.variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    assert "refused" in str(info.value)
    assert len(server.bodies) == 1


def test_404_model_is_unknown_model(provider_api):
    model, server = provider_api
    server.models = ["some-other-model"]
    with pytest.raises(UnknownModel):
        run(model.complete(chat(("user", "x"))))
    assert len(server.bodies) == 1


def test_context_overflow(provider_api):
    model, server = provider_api
    server.context_window = 10
    with pytest.raises(ContextOverflow) as info:
        run(model.complete(chat(("user", "word " * 50))))
    assert info.value.status == 400
    assert len(server.bodies) == 1


def test_other_400_is_a_provider_error_without_retry(provider_api):
    model, server = provider_api
    server.enqueue({"status": 400, "error": {"type": "invalid_request_error",
                                             "message": "tools[0].name is invalid"}})
    with pytest.raises(ProviderError) as info:
        run(model.complete(chat(("user", "x"))))
    assert not isinstance(info.value, ContextOverflow)
    assert info.value.status == 400 and "tools[0].name is invalid" in str(info.value)
    assert len(server.bodies) == 1


def test_malformed_body_is_retried_then_reported(provider_api):
    model, server = provider_api
    server.malformed_next(1)
    assert run(model.complete(chat(("user", "fine")))).text == "fine"
    server.malformed_next(5)
    with pytest.raises(ProviderError, match="malformed"):
        run(model.complete(chat(("user", "x"))))


def test_timeouts_are_retried(tmp_path, openai_server):
    openai_server.api_key = None
    provider = resolve("local/m", make_settings(tmp_path), base_url=openai_server.url).provider
    quick = type(provider)(base_url=openai_server.url, api_key=None, timeout=0.2)
    openai_server.latency = 0.6
    with pytest.raises(ProviderError, match="timed out"):
        run(Model("local/m", quick, "m", retry=FAST).complete(chat(("user", "x"))))
    assert len(openai_server.bodies) == FAST.attempts


def test_connection_refused_is_retried_then_reported(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = resolve("local/m", make_settings(tmp_path), base_url=f"http://127.0.0.1:{port}/v1",
                    retry=FAST)
    with pytest.raises(ProviderError, match="cannot connect"):
        run(model.complete(chat(("user", "x"))))


def test_anthropic_provider_takes_an_explicit_endpoint(anthropic_server):
    provider = AnthropicProvider(base_url=anthropic_server.url, api_key="sk-ant-test")
    completion = run(provider.complete(chat(("user", "direct")), model="claude-haiku-4-5"))
    assert completion.text == "direct" and completion.cost_usd is None  # priced by Model only
