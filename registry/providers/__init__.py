"""Model references → providers.

One string names a model everywhere (`--model`, `--teacher`, `--student`, `--judge`):

    anthropic/<model>  or  opus | sonnet | haiku     ANTHROPIC_API_KEY
    openai/<model>                                   OPENAI_API_KEY
    hf/<org>/<model>[:<provider>]                    HF_TOKEN (Inference Providers router)
    local/<model>  + --base-url / HUBSKILLS_BASE_URL any OpenAI-compatible server
    embedded/smollm2-135m                            llama.cpp in-process, no network

`resolve` turns a reference into a `Model`, whose `complete` is the one way to call a model (it
owns the retry loop and prices the answer). Each backend is a `Provider` subclass; prices and
context windows come from the dated data file `data/models.json` (`price_for`, `cost`,
`is_free`, `context_window`, `prices_as_of`). A run's `--max-cost` and `--max-calls` are one
`CostCap`, which reserves each call's `worst_case` before it is sent. SDKs are imported lazily,
on first call.

This module is the package's public face: the rest of hubskills imports from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from registry._lazy import lazy_names
from registry.providers._factories import ask, default_model_ref, provider, resolve
from registry.providers.base import (
    BadResponse,
    Completion,
    Message,
    Provider,
    ToolCall,
    ToolSpec,
    Usage,
)
from registry.providers.model import Model, RetryPolicy, aclose_all
from registry.providers.pricing import (
    Price,
    context_window,
    cost,
    format_price,
    is_free,
    price_for,
    prices_as_of,
)
from registry.providers.refs import (
    ALIASES,
    DEFAULT_OPENAI_REF,
    EMBEDDED_REF,
    normalize_ref,
)
from registry.providers.spending import CapReached, CostCap, worst_case

if TYPE_CHECKING:
    from registry.providers.catalog import ModelStatus, known_models
    from registry.providers.embedded import availability as embedded_availability

#: What `hubskills models` lists loads on first use: a run lists no models.
__getattr__, __dir__ = lazy_names(__name__, {
    "ModelStatus": "registry.providers.catalog",
    "known_models": "registry.providers.catalog",
    "embedded_availability": "registry.providers.embedded:availability",
}, globals())

__all__ = [
    "ALIASES", "BadResponse", "CapReached", "Completion", "CostCap", "DEFAULT_OPENAI_REF",
    "EMBEDDED_REF", "Message",
    "Model", "ModelStatus", "Price", "Provider", "RetryPolicy", "ToolCall", "ToolSpec", "Usage",
    "aclose_all", "ask", "context_window", "cost", "default_model_ref", "embedded_availability",
    "format_price", "is_free", "known_models", "normalize_ref", "price_for",
    "prices_as_of", "provider", "resolve", "worst_case",
]
