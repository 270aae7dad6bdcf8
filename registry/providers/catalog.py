"""What `hubskills models` lists: known references, whether each is usable here, and why."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass

from registry.config import Settings
from registry.providers import pricing
from registry.providers.refs import ALIASES, DEFAULT_OPENAI_REF, EMBEDDED_REF

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 1.0
EXTRA_ANTHROPIC = ("anthropic/claude-fable-5-1", "anthropic/claude-haiku-4-5")
OPENAI_REFS = (DEFAULT_OPENAI_REF, "openai/gpt-6-luna", "openai/gpt-5.5", "openai/gpt-4.1-mini")
HF_EXAMPLE = "hf/Qwen/Qwen3-8B"


@dataclass(frozen=True)
class ModelStatus:
    """One row of `hubskills models`."""

    ref: str
    provider: str
    usable: bool
    why: str
    price: str
    alias: str | None = None
    tools: bool = True  # calls tools: agent mode, trigger evals and `tune` need it

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return asdict(self)


def probe_local(base_url: str, timeout: float = PROBE_TIMEOUT_S) -> tuple[list[str] | None, str]:
    """`GET {base_url}/models`: the model ids served, or None and the reason it failed."""
    url = base_url.rstrip("/") + "/models"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - user URL
            data = json.loads(response.read())
    except (OSError, ValueError) as err:
        logger.debug("probe %s failed: %s", url, err)
        return None, f"no answer from {url} ({type(err).__name__})"
    items = data.get("data") if isinstance(data, dict) else None
    ids = [str(item.get("id")) for item in items or [] if isinstance(item, dict)]
    return ids, f"reachable at {base_url}"


def _keyed(ref: str, key: str | None, variable: str, alias: str | None = None) -> ModelStatus:
    provider = ref.partition("/")[0]
    why = f"{variable} is set" if key else f"set {variable}"
    return ModelStatus(ref, provider, bool(key), why,
                       pricing.format_price(pricing.price_for(ref)), alias)


def _local_rows(settings: Settings, base_url: str | None) -> list[ModelStatus]:
    url = base_url or settings.base_url
    free = pricing.format_price(pricing.FREE)
    if not url:
        return [ModelStatus("local/<model>", "local", False,
                            "set --base-url URL or HUBSKILLS_BASE_URL", free)]
    ids, why = probe_local(url)
    if ids is None:
        return [ModelStatus("local/<model>", "local", False, why, free)]
    if not ids:
        return [ModelStatus("local/<model>", "local", True, why + ", lists no model", free)]
    return [ModelStatus(f"local/{model_id}", "local", True, why, free) for model_id in ids]


def known_models(settings: Settings, *, base_url: str | None = None) -> list[ModelStatus]:
    """Every reference worth showing, with whether it is usable now and why (a local server is
    probed for at most a second)."""
    from registry.providers.embedded import EmbeddedProvider, availability, install_hint

    rows = [_keyed(ref, settings.anthropic_api_key, "ANTHROPIC_API_KEY", alias)
            for alias, ref in ALIASES.items()]
    rows += [_keyed(ref, settings.anthropic_api_key, "ANTHROPIC_API_KEY")
             for ref in EXTRA_ANTHROPIC]
    rows += [_keyed(ref, settings.openai_api_key, "OPENAI_API_KEY") for ref in OPENAI_REFS]
    rows.append(_keyed(HF_EXAMPLE, settings.hf_token, "HF_TOKEN"))
    rows += _local_rows(settings, base_url)
    ok, why = availability()
    why = why if ok else f"{why}: {install_hint()}"
    rows.append(ModelStatus(EMBEDDED_REF, "embedded", ok, why,
                            pricing.format_price(pricing.FREE),
                            tools=EmbeddedProvider.supports_tools))
    return rows
