"""Settings, resolved once from the environment and passed down explicitly."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from platformdirs import user_data_dir

from registry.secrets import url_secrets

DEFAULT_HF_ENDPOINT = "https://huggingface.co"
DEFAULT_HF_ROUTER = "https://router.huggingface.co/v1"


def _env(name: str, environ: dict[str, str]) -> str | None:
    value = environ.get(name, "").strip()
    return value or None


def _flag(name: str, environ: dict[str, str]) -> bool:
    return (_env(name, environ) or "0").lower() in {"1", "true", "yes"}


def _positive(name: str, environ: dict[str, str], default: float) -> float:
    """A positive number from `name` (`default` when unset, unreadable or not positive)."""
    try:
        value = float(_env(name, environ) or default)
    except ValueError:
        return default
    return value if value > 0 else default


def _names(name: str, environ: dict[str, str]) -> tuple[str, ...]:
    """A comma-separated list of names (empty when unset)."""
    return tuple(part.strip() for part in (_env(name, environ) or "").split(",") if part.strip())


@dataclass(frozen=True)
class Settings:
    """Everything hubskills reads from the environment. Secrets never appear in repr."""

    home: Path
    registry: str = "local"
    hf_endpoint: str = DEFAULT_HF_ENDPOINT
    hf_router_url: str = DEFAULT_HF_ROUTER
    namespace: str | None = None
    results_repo: str | None = None
    base_url: str | None = None
    # base_url came with a request (`--base-url`, a Space visitor's form), not from this
    # process's environment: on a Space it is connected to only at checked public addresses
    base_url_given: bool = False
    anthropic_base_url: str | None = None
    openai_base_url: str | None = None
    offline: bool = False
    space_id: str | None = None
    space_lend_keys: bool = False
    bwrap_path: str | None = None
    github_url: str = "https://github.com"  # where `github:` sources are fetched from
    require_signed: bool = False  # pull/install refuse skills without a skill.oms.sig
    allow_namespaces: tuple[str, ...] = ()  # namespaces dependencies may come from (any pull)
    # Reviewing submissions (pull requests on the results dataset): the verifier's bounds,
    # never a submitter's (docs/verify.md#on-the-space), and whose records count beside the
    # dataset owner's.
    verifiers: tuple[str, ...] = ()
    review_max_prs: int = 5  # pull requests examined per refresh
    review_max_runs: int = 10  # run files one pull request may add
    review_max_run_mb: float = 64.0  # the largest run file replayed (MB)
    review_spot_check: bool = False  # admit only runs with a consistent spot check
    replay_max_samples: int = 5000  # samples one replay regrades
    replay_timeout_s: float = 900.0  # one replay, start to end
    replay_check_timeout_s: float = 60.0  # one code check during a replay
    hf_token: str | None = field(default=None, repr=False)
    anthropic_api_key: str | None = field(default=None, repr=False)
    openai_api_key: str | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Build settings from `environ` (default: the process environment)."""
        env = dict(os.environ if environ is None else environ)
        home = _env("HUBSKILLS_HOME", env) or user_data_dir("hubskills", appauthor=False)
        return cls(
            home=Path(home).expanduser(),
            registry=(_env("HUBSKILLS_REGISTRY", env) or "local").lower(),
            hf_endpoint=(_env("HF_ENDPOINT", env) or DEFAULT_HF_ENDPOINT).rstrip("/"),
            hf_router_url=_env("HUBSKILLS_HF_ROUTER", env) or DEFAULT_HF_ROUTER,
            namespace=_env("HUBSKILLS_NAMESPACE", env),
            results_repo=_env("HUBSKILLS_RESULTS_REPO", env),
            base_url=_env("HUBSKILLS_BASE_URL", env),
            anthropic_base_url=_env("ANTHROPIC_BASE_URL", env),
            openai_base_url=_env("OPENAI_BASE_URL", env),
            offline=_flag("HF_HUB_OFFLINE", env),
            space_id=_env("SPACE_ID", env),
            space_lend_keys=_flag("HUBSKILLS_SPACE_LEND_KEYS", env),
            bwrap_path=_env("HUBSKILLS_BWRAP", env),
            github_url=(_env("HUBSKILLS_GITHUB_URL", env) or "https://github.com").rstrip("/"),
            require_signed=_flag("HUBSKILLS_REQUIRE_SIGNED", env),
            allow_namespaces=_names("HUBSKILLS_ALLOW_NAMESPACES", env),
            verifiers=_names("HUBSKILLS_VERIFIERS", env),
            review_max_prs=int(_positive("HUBSKILLS_REVIEW_MAX_PRS", env, 5)),
            review_max_runs=int(_positive("HUBSKILLS_REVIEW_MAX_RUNS", env, 10)),
            review_max_run_mb=_positive("HUBSKILLS_REVIEW_MAX_RUN_MB", env, 64.0),
            review_spot_check=_flag("HUBSKILLS_REVIEW_SPOT_CHECK", env),
            replay_max_samples=int(_positive("HUBSKILLS_REPLAY_MAX_SAMPLES", env, 5000)),
            replay_timeout_s=_positive("HUBSKILLS_REPLAY_TIMEOUT", env, 900.0),
            replay_check_timeout_s=_positive("HUBSKILLS_REPLAY_CHECK_TIMEOUT", env, 60.0),
            hf_token=_env("HF_TOKEN", env) or _env("HUGGING_FACE_HUB_TOKEN", env),
            anthropic_api_key=_env("ANTHROPIC_API_KEY", env),
            openai_api_key=_env("OPENAI_API_KEY", env),
        )

    def with_(self, **changes: Any) -> Settings:
        """Return a copy with some fields changed (e.g. a `--base-url` from the CLI)."""
        return replace(self, **changes)

    @property
    def on_space(self) -> bool:
        """Whether this process serves a Hugging Face Space (Spaces set `SPACE_ID`)."""
        return self.space_id is not None

    @property
    def runs_dir(self) -> Path:
        """Where evaluation runs are saved, one folder per run id."""
        return self.home / "runs"

    @property
    def cache_path(self) -> Path:
        """The sqlite response cache."""
        return self.home / "cache.sqlite"

    @property
    def store_dir(self) -> Path:
        """The embedded local registry."""
        return self.home / "registry"

    def secrets(self) -> list[str]:
        """Every secret value set, so writers can scrub them from logs and results: the keys,
        and any credential inside an endpoint's URL (a `--base-url` with a gateway key in it)."""
        values = [self.hf_token, self.anthropic_api_key, self.openai_api_key]
        for url in (self.hf_endpoint, self.base_url, self.openai_base_url,
                    self.anthropic_base_url, self.hf_router_url):
            values += url_secrets(url) if url else ()
        return [v for v in values if v]
