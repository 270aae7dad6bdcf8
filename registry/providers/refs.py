"""Model reference strings: the aliases, the defaults, and how a reference is normalized.

A reference is `<provider>/<model id>` (`anthropic/claude-opus-5-5`, `hf/Qwen/Qwen3-8B:novita`,
`local/qwen3`, `embedded/smollm2-135m`) or one of the Claude aliases below.
"""

from __future__ import annotations

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
