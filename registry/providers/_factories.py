"""Provider factories by reference prefix, and `resolve`: a reference in, a `Model` out.

Provider instances (and so their HTTP clients) are created once per connection
(`Provider.connection_key`: provider, endpoint, key) and shared. Factories import their SDK
lazily, so resolving a reference costs no SDK import until the first call.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

from registry.config import Settings
from registry.errors import HubskillsError, MissingCredentials, UnknownModel
from registry.providers._sdk import SDKProvider
from registry.providers.base import Completion, Message, Provider
from registry.providers.model import Model, RetryPolicy
from registry.providers.refs import (
    ALIASES,
    DEFAULT_OPENAI_REF,
    EMBEDDED_REF,
    MODELS_HINT,
    normalize_ref,
    suggest_ref,
)

Factory = Callable[[Settings, str | None], Provider]
_FACTORIES: dict[str, Factory] = {}
# Weak values: an instance (and the key it holds) lives only while some Model uses it, so a key
# typed into the Space for one request does not stay in memory for the life of the process.
_INSTANCES: weakref.WeakValueDictionary[tuple[tuple[str, ...], bool], Provider] = (
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


def resolve(ref: str, settings: Settings, *, base_url: str | None = None,
            retry: RetryPolicy | None = None) -> Model:
    """Turn a model reference into a `Model`; `base_url` overrides the provider's endpoint and
    `retry` the model's retry policy (default: 4 attempts, backoff from 0.5 s). Models on the
    same connection (`Provider.connection_key`) share one provider instance.

    Raises:
        UnknownModel: the reference names no known provider, or is malformed.
        MissingCredentials: the provider's key is not set.
        HubskillsError: `local/` without a base URL, or the embedded model is not installed.
    """
    ref = normalize_ref(ref)
    name, _, model_id = ref.partition("/")
    if name not in _FACTORIES or not model_id:
        from registry.providers.pricing import known_refs

        meant = suggest_ref(ref, known_refs())
        raise UnknownModel(
            f"unknown model reference {ref!r}"
            + (f" (did you mean {meant!r}?)" if meant else "") + ": use anthropic/<model>, "
            f"openai/<model>, hf/<org>/<model>, local/<model> or {EMBEDDED_REF}",
            hint=MODELS_HINT)
    if name == "hf" and "/" not in model_id.partition(":")[0]:
        raise UnknownModel(f"a Hugging Face reference is hf/<org>/<model>[:<provider>], "
                           f"not {ref!r}", hint="e.g. hf/Qwen/Qwen3-8B or hf/Qwen/Qwen3-8B:novita")
    if name == "embedded" and model_id != EMBEDDED_REF.partition("/")[2]:
        raise UnknownModel(f"the only embedded model is {EMBEDDED_REF}, not {ref!r}",
                           hint=MODELS_HINT)
    instance = _FACTORIES[name](settings, base_url)
    # On a Space, an endpoint a visitor chose (`base_url`, or a `local/` one that came with
    # the request: `settings.base_url_given`; the owner's own come from the environment) is
    # connected to only at checked public addresses, each time it is connected to.
    chosen = base_url is not None or (name == "local" and settings.base_url_given)
    pinned = False
    if settings.on_space and chosen and isinstance(instance, SDKProvider):
        instance.public_only = pinned = True
    with _instances_lock:
        instance = _INSTANCES.setdefault((instance.connection_key(), pinned), instance)
    return Model(ref=f"{name}/{model_id}", provider=instance, model_id=model_id,
                 retry=retry or RetryPolicy())


def ask(ref: str, prompt: str, settings: Settings, *, base_url: str | None = None,
        system: str | None = None, **options: Any) -> tuple[str, Completion]:
    """Ask one model one question, synchronously (not from inside an event loop).

    Returns the normalized reference and the priced completion; `options` are those of
    `Provider.complete` (temperature, max_tokens, seed, stop, tools).
    """
    model = resolve(ref, settings, base_url=base_url)
    messages = [Message("system", system)] if system else []
    messages.append(Message("user", prompt))
    return model.ref, model.complete_sync(messages, **options)


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

