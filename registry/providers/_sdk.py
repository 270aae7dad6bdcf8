"""What the providers built on an official SDK (`openai`, `anthropic`) share.

Both SDKs raise the same family of exceptions (`APIStatusError` with `status_code`,
`APITimeoutError`, `APIConnectionError`, `APIResponseValidationError`), so one classifier and
one translator serve both. The SDKs' own retries are off (`max_retries=0`): `Model.complete`
is the one retry loop, and this module only says which failures it should retry (408, 409, 429,
5xx, timeouts, dropped connections, unreadable bodies; a server's `x-should-retry` header
wins) and how long the server asked it to wait (`Retry-After`, `retry-after-ms`).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import ssl
import time
import weakref
from abc import abstractmethod
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import Any, ClassVar

from registry._lazy import network_wait
from registry.errors import (
    ContextOverflow,
    HubskillsError,
    MissingCredentials,
    ProviderError,
    UnknownModel,
)
from registry.providers.base import Provider

RETRY_STATUSES = frozenset({408, 409, 429})
"""Besides every 5xx: request timeout, conflict (lock contention) and rate limiting."""
PROBE_TIMEOUT_S = 5.0
"""How long a probe (`SDKProvider.probe`) waits for an answer; a slow one is not refused."""


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi's roots, or `SSL_CERT_FILE` / `SSL_CERT_DIR`),
    built once: reading the CA bundle takes ~20 ms, which every new SDK client (one per run and
    event loop) paid on the loop before its first request. Built here as httpx builds it, since
    `import httpx` also loads its command line (rich's progress bars, pygments): the SDKs'
    own HTTP stack is httpx2, which a chat run loads anyway."""
    if cafile := os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=cafile)
    if capath := os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=capath)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class SDKProvider(Provider):
    """A provider that talks HTTP through an official SDK client, one client per event loop
    (an httpx connection pool cannot outlive the loop that opened it)."""

    variable: ClassVar[str | None] = None
    """The environment variable that holds the key, named in errors; None: key optional."""
    public_only: bool = False
    """Connect only to public addresses, each checked as it is connected to (on a Space, where
    a visitor may choose the endpoint: `public_url.PinnedTransport`, so a name that answers
    the check with a public address cannot then send the request to an internal one)."""

    def __init__(self, *, base_url: str, api_key: str, timeout: float,
                 http_client: Any = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self._http_client = http_client
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    @staticmethod
    @abstractmethod
    def sdk() -> ModuleType:
        """The SDK module (imported on first use, so importing hubskills stays cheap)."""

    @abstractmethod
    def new_client(self) -> Any:
        """A fresh SDK client for this endpoint and key, with the SDK's retries off."""

    def http_client(self) -> Any:
        """The httpx client a new SDK client uses: the one given, else the SDK's default one
        with a TLS context built once per process (`tls_context`), not following redirects (a
        model API does not redirect, and a server someone else chose must not send the
        request on to an address it could not name itself: `providers.public_url`)."""
        if self._http_client is not None:
            return self._http_client
        if self.public_only:  # a Space: every connection to a checked public address
            return self.sdk().DefaultAsyncHttpxClient(transport=self._pinned_transport(),
                                                      follow_redirects=False)
        return self.sdk().DefaultAsyncHttpxClient(verify=tls_context(), follow_redirects=False)

    def _pinned_transport(self) -> Any:
        """A transport of the SDK's own HTTP stack (httpx or its successor httpx2, whichever
        its `DefaultAsyncHttpxClient` is built on) that connects only to checked public
        addresses (`public_url.pin`)."""
        import importlib

        from registry.providers.public_url import pin

        client = self.sdk().DefaultAsyncHttpxClient
        base = next(c for c in client.__mro__ if c.__name__ == "AsyncClient")
        http = importlib.import_module(base.__module__.partition(".")[0])
        core = importlib.import_module(http.__name__.replace("httpx", "httpcore"))
        return pin(http.AsyncHTTPTransport(verify=tls_context()), core)

    def client(self) -> Any:
        """The running event loop's SDK client, created on first use."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self.new_client()
        return client

    async def aclose(self) -> None:
        """Close the running loop's client (its connection pool dies with the loop anyway)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    @property
    def endpoint(self) -> str | None:
        """The base URL calls go to."""
        return self.base_url

    def connection_key(self) -> tuple[str, ...]:
        """Provider, endpoint and a digest of the key (the key itself is not kept here)."""
        digest = hashlib.sha256(self.api_key.encode()).hexdigest()[:16]
        return (self.name, self.base_url, digest)

    probe_path: ClassVar[str] = "/models"
    """A route that lists models at no cost (relative to `base_url`)."""

    async def probe(self) -> None:
        """Ask `probe_path` once: any HTTP answer shows the endpoint is there (`probe_status`
        judges a status); nothing listening or a failed TLS handshake is refused. No answer in
        `PROBE_TIMEOUT_S` is not: a busy server is slow, not gone (the run's calls wait longer).

        Raises:
            ProviderError: the endpoint cannot be reached, or `probe_status` refuses it.
        """
        sdk = self.sdk()
        client = self.client()
        network_wait()  # what waits for this round trip may load now (`import_during_first_wait`)
        try:  # read as text: the one answer type every SDK's client takes as is
            await client.get(self.probe_path, cast_to=str, options={"timeout": PROBE_TIMEOUT_S})
        except sdk.APIStatusError as exc:
            await self.probe_status(exc.status_code)
        except sdk.APITimeoutError:
            return
        except sdk.APIConnectionError as exc:
            raise ProviderError(
                f"cannot reach {self.base_url}: {_unreachable(exc)}",
                hint="start the server or check the address (--base-url, or the provider's "
                     "*_BASE_URL variable), then run the same command again") from exc

    async def probe_status(self, status: int) -> None:
        """What an HTTP error status from `probe_path` means: the server answers, which is all
        a probe asks by default (a model listing may be missing or need another key)."""

    def should_retry(self, exc: Exception) -> bool:
        """Transient: timeouts, connection failures, unreadable bodies, 408/409/429/5xx."""
        sdk = self.sdk()
        if isinstance(exc, sdk.APIStatusError):
            verdict = exc.response.headers.get("x-should-retry")
            if verdict in ("true", "false"):
                return verdict == "true"
            return exc.status_code >= 500 or exc.status_code in RETRY_STATUSES
        return super().should_retry(exc) or isinstance(
            exc, sdk.APIConnectionError | sdk.APIResponseValidationError | json.JSONDecodeError)

    def retry_after(self, exc: Exception) -> float | None:
        """The wait an HTTP error response asked for, if any."""
        if isinstance(exc, self.sdk().APIStatusError):
            return retry_after_seconds(exc.response.headers)
        return None

    def is_overflow(self, exc: Any) -> bool:
        """Whether a 400/413/422 says the prompt does not fit the context window."""
        return False

    def error(self, exc: Exception, model: str) -> HubskillsError | None:
        """The typed error for an SDK exception; None for anything else (a bug)."""
        sdk = self.sdk()
        if isinstance(exc, sdk.APITimeoutError):
            return ProviderError("the request timed out")
        if isinstance(exc, sdk.APIConnectionError):
            return ProviderError(f"cannot connect to {self.base_url}")
        if isinstance(exc, sdk.APIResponseValidationError | json.JSONDecodeError):
            return ProviderError("the server sent a malformed response")
        if isinstance(exc, sdk.APIStatusError):
            return self._from_status(exc, model)
        return super().error(exc, model)

    def _from_status(self, exc: Any, model: str) -> HubskillsError:
        status: int = exc.status_code
        detail = _api_message(exc)
        where = f"{self.name} ({self.base_url})"
        if self.should_retry(exc):
            return ProviderError(f"HTTP {status}: {detail}", status=status)
        if status in (401, 403):
            if self.variable:
                return MissingCredentials(
                    f"{where} refused the key in {self.variable} (HTTP {status}): {detail}",
                    variable=self.variable,
                    hint=f"check {self.variable}: export {self.variable}=... with a valid key")
            return ProviderError(f"{where} refused the request (HTTP {status}): {detail}",
                                 status=status, hint="check the server's API key settings")
        if status == 404 or getattr(exc, "code", None) == "model_not_found":
            return UnknownModel(f"{where} has no model {model!r} (HTTP 404): {detail}",
                                hint="hubskills models  (and check --base-url, it usually "
                                     "ends in /v1)")
        if status in (400, 413, 422) and self.is_overflow(exc):
            return ContextOverflow(
                f"the prompt does not fit {model}'s context window: {detail}", status=status,
                hint="shorten the skill or the case, or use a model with more context")
        return ProviderError(f"{where} rejected the request for {model} (HTTP {status}): "
                             f"{detail}", status=status)


def _unreachable(exc: BaseException) -> str:
    """Why a connection failed, in words: the innermost OS-level cause of an SDK error."""
    cause: BaseException | None = exc
    found: BaseException | None = None
    for _ in range(10):  # the chain is short; a bound keeps a cyclic one finite
        if cause is None:
            break
        if isinstance(cause, OSError):
            found = cause
        cause = cause.__cause__ or cause.__context__
    if isinstance(found, ssl.SSLError):
        return f"the TLS handshake failed ({found})"
    if isinstance(found, ConnectionRefusedError):
        return "connection refused (nothing listens there)"
    return str(found or exc)


def retry_after_seconds(headers: Any) -> float | None:
    """Read `retry-after-ms` or `Retry-After` (seconds or an HTTP date) from response headers."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


def _api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
    return str(getattr(exc, "message", exc))
