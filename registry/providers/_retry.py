"""Retries with backoff, and the one place SDK errors become hubskills errors.

Both official SDKs (`openai`, `anthropic`) raise the same family of exceptions
(`APIStatusError` with `status_code`, `APITimeoutError`, `APIConnectionError`), so one
translator serves both. Transient failures (429, 408, 5xx, timeouts, dropped connections,
unreadable bodies) are retried with exponential backoff and jitter, honouring `Retry-After`;
everything else becomes a typed `HubskillsError` at once. Classification is by HTTP status and
error type, never by the wording of a message.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import Any, TypeVar

from registry.errors import ContextOverflow, MissingCredentials, ProviderError, UnknownModel

logger = logging.getLogger(__name__)
T = TypeVar("T")

RETRY_STATUSES = frozenset({408, 409, 429})
"""Besides every 5xx: request timeout, conflict (lock contention) and rate limiting."""


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. `attempts` counts the first try; delays are in seconds."""

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based).

        A server's `Retry-After` wins (capped at `max_retry_after`); otherwise exponential
        backoff with "equal jitter": half the step fixed, half random.
        """
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        step = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return step / 2 + random.uniform(0, step / 2)


class Transient(Exception):
    """A failure worth another try; `status` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class CallContext:
    """What an error message needs to name: who was called, for what, with which key."""

    provider: str
    model: str
    base_url: str
    variable: str | None = None


async def with_retries(call: Callable[[], Awaitable[T]], *, policy: RetryPolicy,
                       context: CallContext) -> T:
    """Await `call()` until it succeeds, retrying `Transient` failures as `policy` allows.

    Raises:
        ProviderError: the last attempt failed too ("provider keeps failing").
    """
    for attempt in range(1, policy.attempts + 1):
        try:
            return await call()
        except Transient as exc:
            if attempt == policy.attempts:
                raise ProviderError(
                    f"{context.provider} keeps failing for {context.model} after "
                    f"{attempt} attempt{'s' if attempt > 1 else ''}: {exc}",
                    status=exc.status,
                    hint="try again later; HUBSKILLS_DEBUG=1 shows the last error in full",
                ) from exc
            pause = policy.delay(attempt, exc.retry_after)
            logger.info("%s %s: %s; retry %d/%d in %.2fs", context.provider, context.model,
                        exc, attempt, policy.attempts - 1, pause)
            await asyncio.sleep(pause)
    raise AssertionError("unreachable")  # pragma: no cover - the loop always returns or raises


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


def translate(exc: BaseException, sdk: ModuleType, context: CallContext,
              is_overflow: Callable[[Any], bool]) -> BaseException:
    """Map an exception raised by an official SDK (`sdk` is the `openai` or `anthropic` module)
    to `Transient` (retry it) or a `HubskillsError` (raise it). Unknown exceptions pass through.
    """
    if isinstance(exc, sdk.APITimeoutError):
        return Transient("the request timed out")
    if isinstance(exc, sdk.APIConnectionError):
        return Transient(f"cannot connect to {context.base_url}")
    if isinstance(exc, sdk.APIResponseValidationError | json.JSONDecodeError):
        return Transient("the server sent a malformed response")
    if isinstance(exc, sdk.APIStatusError):
        return _from_status(exc, context, is_overflow)
    return exc


def _from_status(exc: Any, context: CallContext,
                 is_overflow: Callable[[Any], bool]) -> BaseException:
    status: int = exc.status_code
    detail = _api_message(exc)
    where = f"{context.provider} ({context.base_url})"
    if status >= 500 or status in RETRY_STATUSES:
        return Transient(f"HTTP {status}: {detail}", status=status,
                         retry_after=retry_after_seconds(exc.response.headers))
    if status in (401, 403):
        if context.variable:
            return MissingCredentials(
                f"{where} refused the key in {context.variable} (HTTP {status}): {detail}",
                variable=context.variable,
                hint=f"check {context.variable}: export {context.variable}=... with a valid key",
            )
        return ProviderError(f"{where} refused the request (HTTP {status}): {detail}",
                             status=status, hint="check the server's API key settings")
    if status == 404 or getattr(exc, "code", None) == "model_not_found":
        return UnknownModel(f"{where} has no model {context.model!r} (HTTP 404): {detail}",
                            hint="hubskills models  (and check --base-url, it usually ends in /v1)")
    if status in (400, 413, 422) and is_overflow(exc):
        return ContextOverflow(
            f"the prompt does not fit {context.model}'s context window: {detail}",
            status=status, hint="shorten the skill or the case, or use a model with more context")
    return ProviderError(f"{where} rejected the request for {context.model} (HTTP {status}): "
                         f"{detail}", status=status)


def _api_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
    return str(getattr(exc, "message", exc))

