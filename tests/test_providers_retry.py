"""The provider seam's contract: the one retry loop (`Model.complete`), what a `Provider`
subclass decides (`should_retry`, `retry_after`, `error`), connections and their closing.

API behaviour runs the real SDKs against the fake servers; the loop's own rules are also shown
with a small `Provider` subclass defined here, which is what a new backend would write.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from fakes.openai_server import FakeOpenAIServer
from test_providers import FAST, make_settings

from registry.errors import ProviderError, UnknownModel
from registry.providers import (
    BadResponse,
    Completion,
    Message,
    Model,
    Provider,
    RetryPolicy,
    Usage,
    aclose_all,
    ask,
    resolve,
)
from registry.providers.openai_compat import LocalProvider

ROOT = Path(__file__).resolve().parents[1]
HELLO = [Message("user", "hello")]


# -- HTTP: what the server says decides ---------------------------------------------------------

def test_retry_after_ms_is_honoured(provider_api):
    model, server = provider_api
    server.enqueue({"status": 429, "headers": {"retry-after-ms": "300"}}, "done")
    assert asyncio.run(model.complete(HELLO)).text == "done"
    first, second = (r["time"] for r in server.requests[-2:])
    assert second - first >= 0.28


def test_x_should_retry_true_retries_a_4xx(provider_api):
    model, server = provider_api
    server.enqueue({"status": 400, "headers": {"x-should-retry": "true"}}, "second try")
    assert asyncio.run(model.complete(HELLO)).text == "second try"
    assert len(server.bodies) == 2


def test_x_should_retry_false_stops_a_5xx(provider_api):
    model, server = provider_api
    server.enqueue({"status": 503, "headers": {"x-should-retry": "false"}})
    with pytest.raises(ProviderError) as info:
        asyncio.run(model.complete(HELLO))
    assert info.value.status == 503 and "keeps failing" not in str(info.value)
    assert len(server.bodies) == 1


def test_each_model_keeps_its_own_retry_policy(tmp_path):
    """Two models on one connection share a provider but not a retry policy."""
    with FakeOpenAIServer() as server:
        patient = resolve("local/m", make_settings(tmp_path), base_url=server.url, retry=FAST)
        hasty = resolve("local/m", make_settings(tmp_path), base_url=server.url,
                        retry=RetryPolicy(attempts=1))
        assert patient.provider is hasty.provider
        server.fail_next(1, status=503)
        with pytest.raises(ProviderError, match="after 1 attempt:"):
            asyncio.run(hasty.complete(HELLO))
        server.fail_next(1, status=503)
        assert asyncio.run(patient.complete(HELLO)).text == "hello"
        assert len(server.bodies) == 3


# -- Connections: shared by key, closed once ---------------------------------------------------

def test_connection_key_separates_keys_and_hides_them(tmp_path):
    with FakeOpenAIServer() as server:
        one = resolve("openai/gpt-4.1", make_settings(
            tmp_path, OPENAI_API_KEY="sk-one-secret", OPENAI_BASE_URL=server.url))
        two = resolve("openai/gpt-4.1", make_settings(
            tmp_path, OPENAI_API_KEY="sk-two-secret", OPENAI_BASE_URL=server.url))
    assert one.provider is not two.provider
    assert one.connection_key != two.connection_key
    assert "secret" not in repr(one.connection_key) + repr(one.provider)


def test_aclose_all_closes_each_connection(tmp_path):
    settings = make_settings(tmp_path)
    with FakeOpenAIServer() as server:
        first = resolve("local/a", settings, base_url=server.url)
        second = resolve("local/b", settings, base_url=server.url)

        async def use_then_close() -> tuple[bool, bool]:
            await first.complete(HELLO)
            await second.complete(HELLO)
            client = first.provider.client()
            await aclose_all([first, second])
            return client.is_closed(), first.provider.client() is client

        assert asyncio.run(use_then_close()) == (True, False)


def test_complete_sync_closes_its_connection(tmp_path):
    """Sync callers (`ask`, the teacher) run a loop per call: its connection must not outlive it."""
    with FakeOpenAIServer() as server:
        http = httpx.AsyncClient()
        provider = LocalProvider(base_url=server.url, api_key=None, http_client=http)
        completion = Model("local/m", provider, "m").complete_sync(HELLO, max_tokens=8)
        assert (completion.text, completion.cost_usd) == ("hello", 0.0)
        assert http.is_closed


def test_ask_answers_from_sync_code(tmp_path):
    with FakeOpenAIServer() as server:
        settings = make_settings(tmp_path, HUBSKILLS_BASE_URL=server.url)
        assert ask("local/m", "hi there", settings, max_tokens=8)[1].text == "hi there"
        assert ask("local/m", "and again", settings, max_tokens=8)[1].text == "and again"


# -- The loop's rules, shown with a backend written against the ABC -----------------------------

class Flaky(Provider):
    """Fails with `failure` `fails` times, then answers."""

    name: ClassVar[str] = "flaky"

    def __init__(self, fails: int, failure: Exception) -> None:
        self.fails, self.failure, self.calls = fails, failure, 0

    async def complete(self, messages: list[Message], *, model: str, **options: Any
                       ) -> Completion:
        self.calls += 1
        if self.calls <= self.fails:
            raise self.failure
        return Completion("ok", [], "stop", model, 0.01, Usage(input_tokens=3, output_tokens=1))


def flaky_model(fails: int, failure: Exception) -> tuple[Model, Flaky]:
    provider = Flaky(fails, failure)
    return Model("flaky/m", provider, "m", retry=FAST), provider


def test_the_base_class_cannot_stand_alone():
    with pytest.raises(TypeError):
        Provider()  # type: ignore[abstract]


def test_a_bad_response_is_retried_then_reported():
    model, provider = flaky_model(1, BadResponse("no choices"))
    completion = asyncio.run(model.complete(HELLO))
    assert (completion.text, provider.calls) == ("ok", 2)
    assert completion.cost_usd is None  # the data file does not know flaky/m: unknown, not $0
    model, provider = flaky_model(5, BadResponse("no choices"))
    with pytest.raises(ProviderError, match="keeps failing .* malformed response: no choices"):
        asyncio.run(model.complete(HELLO))
    assert provider.calls == FAST.attempts


def test_hubskills_errors_are_final():
    model, provider = flaky_model(1, UnknownModel("no such model"))
    with pytest.raises(UnknownModel):
        asyncio.run(model.complete(HELLO))
    assert provider.calls == 1


def test_a_bug_propagates_as_itself():
    model, provider = flaky_model(1, KeyError("choices"))
    with pytest.raises(KeyError):
        asyncio.run(model.complete(HELLO))
    assert provider.calls == 1


# -- The seam's boundary ------------------------------------------------------------------------

def test_nothing_outside_providers_imports_a_private_providers_module():
    private = re.compile(r"registry\.providers\._\w+|from registry\.providers import _")
    offenders = [str(path.relative_to(ROOT))
                 for folder in ("registry", "space", "bench", "tests")
                 for path in (ROOT / folder).rglob("*.py")
                 if "providers" not in path.relative_to(ROOT).parts[:2]
                 and private.search(path.read_text(encoding="utf-8"))]
    assert offenders == []
