"""Model reference strings: the aliases, the defaults, and how a reference is normalized.

A reference is `<provider>/<model id>` (`anthropic/claude-opus-5-5`, `hf/Qwen/Qwen3-8B:novita`,
`local/qwen3`, `embedded/smollm2-135m`) or one of the Claude aliases below.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

EMBEDDED_REF = "embedded/smollm2-135m"
ALIASES: dict[str, str] = {
    "opus": "anthropic/claude-opus-5-5",
    "sonnet": "anthropic/claude-sonnet-5-5",
    "haiku": "anthropic/claude-haiku-5-5",
}
DEFAULT_OPENAI_REF = "openai/gpt-6-sol"
MODELS_HINT = "hubskills models"


def normalize_ref(ref: str) -> str:
    """Expand aliases (`sonnet`, `anthropic/sonnet`) and trim whitespace; no other checks."""
    ref = ref.strip()
    alias = ref.removeprefix("anthropic/")
    return ALIASES.get(alias.lower(), ref)


def split_ref(ref: str) -> tuple[str, str]:
    """(provider name, model id) of a normalized reference; the id may be empty."""
    provider, _, model_id = normalize_ref(ref).partition("/")
    return provider, model_id


#: The provider of a bare model id, by how the id starts (`gpt-4.1-mini`: openai/gpt-4.1-mini).
_ID_PREFIXES = {"claude-": "anthropic", "gpt-": "openai", "o1": "openai", "o3": "openai",
                "o4": "openai"}


def suggest_ref(ref: str, catalogue: Iterable[str]) -> str | None:
    """The reference a mistyped or incomplete `ref` most likely means, or None: a bare id the
    price list knows (`gpt-4.1-mini`; `catalogue`: its references, `pricing.known_refs()`), a
    close spelling of a known reference or alias, a bare id of a known family, or `org/model`
    as a Hugging Face reference (`hf/Qwen/Qwen3-8B`)."""
    text = ref.strip()
    known = [*catalogue, EMBEDDED_REF]
    by_id = {k.partition("/")[2].lower(): k for k in known}
    provider, _, model_id = text.partition("/")
    exact = by_id.get(text.lower()) or by_id.get(model_id.lower())
    close = difflib.get_close_matches(text.lower(), [*known, *ALIASES], n=1, cutoff=0.85) \
        or [by_id[i] for i in difflib.get_close_matches((model_id or text).lower(), by_id, n=1,
                                                          cutoff=0.85)]
    if exact or close:
        return exact or ALIASES.get(close[0], close[0])
    if not model_id:
        family = next((p for prefix, p in _ID_PREFIXES.items()
                       if text.lower().startswith(prefix)), None)
        return f"{family}/{text}" if family else None
    if "/" not in model_id and provider not in {"anthropic", "openai", "hf", "local", "embedded"}:
        return f"hf/{text}"
    return None
