"""The Hugging Face Hub: the only package that imports `huggingface_hub`.

- `HubClient` (in `client.py`): metadata, commits, tags, downloads through the HF cache
  (`snapshot_download` with parallel workers; a pinned commit one GET per file, `pinned.py`).
  Loaded lazily: importing `registry.hub` costs nothing until a client is made.
- `translate` / `user_errors` (in `errors.py`): the one error translator, typed `HubError`s
  carrying the repo id, and the mapping to `HubskillsError` + hint at the edge.
- `JobsClient` (in `jobs.py`): Hugging Face Jobs (run, inspect, logs, cancel, list, hardware).
- `reachable`: the one reachability probe. `offline_mode`, `stored_token`: what
  huggingface_hub itself reads from the environment and the token file.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from registry.hub.errors import (
    AuthFailed,
    Conflict,
    EntryNotFound,
    HubError,
    NotCached,
    RefusedPath,
    RepoNotFound,
    RevisionNotFound,
    StaleParent,
    Unreachable,
    translate,
    user_error,
    user_errors,
)

if TYPE_CHECKING:
    from registry.hub.client import (
        HubClient,
        PullRequest,
        Refs,
        RemoteFile,
        RepoInfo,
        with_retry,
    )
    from registry.hub.jobs import JobsClient, JobState

__all__ = [
    "AuthFailed", "Conflict", "EntryNotFound", "HubClient", "HubError", "JobState",
    "JobsClient", "NotCached", "PullRequest", "RefusedPath", "Refs", "RemoteFile", "RepoInfo",
    "RepoNotFound", "RevisionNotFound", "StaleParent", "Unreachable", "offline_mode",
    "reachable", "stored_token", "translate", "user_error", "user_errors", "with_retry",
]
PROBE_TIMEOUT_S = 2.0
#: Names loaded on first use, with the module that has them (and huggingface_hub's HTTP stack).
_LAZY = {**dict.fromkeys(("HubClient", "PullRequest", "RemoteFile", "RepoInfo", "Refs",
                          "with_retry"), "client"),
         **dict.fromkeys(("JobsClient", "JobState"), "jobs")}


def __getattr__(name: str) -> Any:
    """Load `client.py` or `jobs.py` on first use only."""
    if name in _LAZY:
        return getattr(importlib.import_module(f"registry.hub.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'registry.hub' has no attribute {name!r}")


def reachable(endpoint: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether `endpoint` answers HTTP at all within `timeout` (any status counts).

    Goes through huggingface_hub's own session, so proxies apply and the connection is reused
    by the calls that follow. Use it before calls that retry for long when unreachable
    (`list_models` retries for ~23 s); other calls fail fast and raise `Unreachable` themselves.
    """
    from huggingface_hub.utils import get_session, httpx

    try:
        get_session().get(f"{endpoint.rstrip('/')}/api/models", params={"limit": 1},
                          timeout=timeout)
    except httpx.TransportError:
        return False
    return True


def offline_mode() -> bool:
    """Whether huggingface_hub was imported with `HF_HUB_OFFLINE=1` (it reads it only then)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def stored_token() -> str | None:
    """The token huggingface_hub would use: `HF_TOKEN`, else the token file (`hf auth login`)."""
    from huggingface_hub import get_token

    return get_token()
