"""Model references → providers.

One string names a model everywhere (`--model`, `--teacher`, `--student`, `--judge`):

    anthropic/<model>  or  opus | sonnet | haiku     ANTHROPIC_API_KEY
    openai/<model>                                   OPENAI_API_KEY
    hf/<org>/<model>[:<provider>]                    HF_TOKEN (Inference Providers router)
    local/<model>  + --base-url / HUBSKILLS_BASE_URL any OpenAI-compatible server
    embedded/smollm2-135m                            llama.cpp in-process, no network

`resolve` turns a reference into a `Model`. Provider instances (and so their HTTP clients) are
created once per (provider, base URL, key) and shared. SDKs are imported lazily, on first call.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from registry.config import Settings
from registry.errors import HubskillsError, MissingCredentials, UnknownModel
from registry.providers import pricing
from registry.providers._retry import RetryPolicy
from registry.providers.base import Completion, Message, Provider, ToolCall, ToolSpec, Usage

__all__ = [
    "ALIASES", "Completion", "EMBEDDED_REF", "Message", "Model", "ModelStatus", "Provider",
    "RetryPolicy", "ToolCall", "ToolSpec", "Usage", "ask", "default_model_ref", "known_models",
    "normalize_ref", "provider", "resolve",
]

EMBEDDED_REF = "embedded/smollm2-135m"
ALIASES: dict[str, str] = {
    "opus": "anthropic/claude-opus-5-5",
    "sonnet": "anthropic/claude-sonnet-5-5",
    "haiku": "anthropic/claude-haiku-5-5",
}
DEFAULT_OPENAI_REF = "openai/gpt-6-sol"
MODELS_HINT = "hubskills models"

Factory = Callable[[Settings, str | None], Provider]
_FACTORIES: dict[str, Factory] = {}
# Weak values: an instance (and the key it holds) lives only while some Model uses it, so a key
# typed into the Space for one request does not stay in memory for the life of the process.
_INSTANCES: weakref.WeakValueDictionary[tuple[object, ...], Provider] = (
    weakref.WeakValueDictionary())
_instances_lock = threading.Lock()


def provider(name: str) -> Callable[[Factory], Factory]:
    """Register a provider factory `(settings, base_url) -> Provider` under `name`.

    Factories import their SDK lazily and raise `MissingCredentials` for a missing key.
    """
    def register(factory: Factory) -> Factory:
        _FACTORIES[name] = factory
        return factory
    return register


@dataclass(frozen=True)
class Model:
    """A resolved model reference: which provider serves it and under which id."""

    ref: str
    provider: Provider
    model_id: str
    provider_name: str

    @property
    def default_concurrency(self) -> int:
        """How many calls to run at once against this model's provider by default."""
        return self.provider.default_concurrency

    async def complete(self, messages: list[Message], **options: Any) -> Completion:
        """Call the provider (options as `Provider.complete`) and price the answer."""
        completion = await self.provider.complete(messages, model=self.model_id, **options)
        return replace(completion, cost_usd=pricing.cost(self.ref, completion.usage))


def normalize_ref(ref: str) -> str:
    """Expand aliases (`sonnet`, `anthropic/sonnet`) and trim whitespace; no other checks."""
    ref = ref.strip()
    alias = ref.removeprefix("anthropic/")
    return ALIASES.get(alias.lower(), ref)


def resolve(ref: str, settings: Settings, *, base_url: str | None = None,
            retry: RetryPolicy | None = None) -> Model:
    """Turn a model reference into a `Model`; `base_url` overrides the provider's endpoint and
    `retry` its retry policy (default: 4 attempts, backoff from 0.5 s).

    Raises:
        UnknownModel: the reference names no known provider, or is malformed.
        MissingCredentials: the provider's key is not set.
        HubskillsError: `local/` without a base URL, or the embedded model is not installed.
    """
    ref = normalize_ref(ref)
    name, _, model_id = ref.partition("/")
    if name not in _FACTORIES or not model_id:
        raise UnknownModel(
            f"unknown model reference {ref!r}: use anthropic/<model>, openai/<model>, "
            f"hf/<org>/<model>, local/<model> or {EMBEDDED_REF}", hint=MODELS_HINT)
    if name == "hf" and "/" not in model_id.partition(":")[0]:
        raise UnknownModel(f"a Hugging Face reference is hf/<org>/<model>[:<provider>], "
                           f"not {ref!r}", hint="e.g. hf/Qwen/Qwen3-8B or hf/Qwen/Qwen3-8B:novita")
    if name == "embedded" and model_id != EMBEDDED_REF.partition("/")[2]:
        raise UnknownModel(f"the only embedded model is {EMBEDDED_REF}, not {ref!r}",
                           hint=MODELS_HINT)
    instance = _FACTORIES[name](settings, base_url)
    if retry is not None and hasattr(instance, "retry"):
        instance.retry = retry  # a fresh instance, not shared yet
    key = (name, getattr(instance, "base_url", None), getattr(instance, "api_key", None),
           getattr(instance, "retry", None))
    with _instances_lock:
        instance = _INSTANCES.setdefault(key, instance)  # type: ignore[arg-type]
    return Model(ref=f"{name}/{model_id}", provider=instance, model_id=model_id,
                 provider_name=name)


def ask(ref: str, prompt: str, settings: Settings, *, base_url: str | None = None,
        system: str | None = None, **options: Any) -> tuple[str, Completion]:
    """Ask one model one question, synchronously (not from inside an event loop).

    Returns the normalized reference and the priced completion; `options` are those of
    `Provider.complete` (temperature, max_tokens, seed, stop, tools).
    """
    model = resolve(ref, settings, base_url=base_url)
    messages = [Message("system", system)] if system else []
    messages.append(Message("user", prompt))
    return model.ref, asyncio.run(model.complete(messages, **options))


def default_model_ref(settings: Settings) -> str:
    """The model used when none is named: Claude Sonnet with an Anthropic key, else OpenAI's
    default with an OpenAI key, else the embedded model (an HF token alone does not opt in to
    paid inference)."""
    if settings.anthropic_api_key:
        return ALIASES["sonnet"]
    if settings.openai_api_key:
        return DEFAULT_OPENAI_REF
    return EMBEDDED_REF


def _require(value: str | None, variable: str, what: str) -> str:
    if not value:
        raise MissingCredentials(f"{what} needs an API key: {variable} is not set",
                                 variable=variable)
    return value


@provider("anthropic")
def _anthropic(settings: Settings, base_url: str | None) -> Provider:
    from registry.providers.anthropic import AnthropicProvider

    key = _require(settings.anthropic_api_key, "ANTHROPIC_API_KEY", "Anthropic")
    return AnthropicProvider(base_url=base_url or settings.anthropic_base_url, api_key=key)


@provider("openai")
def _openai(settings: Settings, base_url: str | None) -> Provider:
    from registry.providers.openai_compat import OpenAIProvider

    key = _require(settings.openai_api_key, "OPENAI_API_KEY", "OpenAI")
    url = base_url or settings.openai_base_url or "https://api.openai.com/v1"
    return OpenAIProvider(base_url=url, api_key=key)


@provider("hf")
def _hf(settings: Settings, base_url: str | None) -> Provider:
    from registry.providers.openai_compat import HFRouterProvider

    key = _require(settings.hf_token, "HF_TOKEN", "Hugging Face Inference Providers")
    return HFRouterProvider(base_url=base_url or settings.hf_router_url, api_key=key)


@provider("local")
def _local(settings: Settings, base_url: str | None) -> Provider:
    from registry.providers.openai_compat import LocalProvider

    url = base_url or settings.base_url
    if not url:
        raise HubskillsError("a local/ model needs the URL of its OpenAI-compatible server",
                             hint="--base-url URL or export HUBSKILLS_BASE_URL=...")
    return LocalProvider(base_url=url, api_key=None)


@provider("embedded")
def _embedded(settings: Settings, base_url: str | None) -> Provider:
    from registry.providers.embedded import EmbeddedProvider

    return EmbeddedProvider()


from registry.providers.catalog import ModelStatus, known_models  # noqa: E402  (catalog uses the names above)
