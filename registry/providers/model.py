"""A resolved model (`Model`) and the one retry loop every model call goes through.

The official SDKs run with their own retries off; `Model.complete` retries what the provider's
`should_retry` calls transient (by HTTP status and error type) with exponential backoff and
jitter, honouring the server's `Retry-After` up to a cap, then prices the answer. The engine,
the judge, the teacher and `hubskills ask` all call models this way, so they retry alike.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from registry.errors import HubskillsError, ProviderError
from registry.providers.base import Completion, Message, Provider

logger = logging.getLogger(__name__)


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


@dataclass(frozen=True)
class Model:
    """A resolved model reference: the provider instance that serves it, the id it is served
    under, and the retry policy its calls follow."""

    ref: str
    provider: Provider
    model_id: str
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    @property
    def provider_name(self) -> str:
        """The provider family (`anthropic`, `openai`, `hf`, `local`, `embedded`)."""
        return self.provider.name

    @property
    def default_concurrency(self) -> int:
        """How many calls to run at once against this model's provider by default."""
        return self.provider.default_concurrency

    @property
    def connection_key(self) -> tuple[str, ...]:
        """Equal for models served over the same connection: bound concurrency by it."""
        return self.provider.connection_key()

    @property
    def context_window(self) -> int | None:
        """Tokens this model accepts (prompt plus output), or None when unknown."""
        return self.provider.context_window(self.model_id)

    async def complete(self, messages: list[Message], **options: Any) -> Completion:
        """Call the provider (options as `Provider.complete`), retrying transient failures as
        `retry` allows, and price the answer.

        Raises:
            ProviderError: a failure that is not transient, or the last attempt failed too
                ("keeps failing"); subclasses name the cause (`ContextOverflow`, ...).
            MissingCredentials: the server refused the key.
            UnknownModel: the server has no such model.
        """
        completion = await self._attempts(messages, options)
        return replace(completion, cost_usd=self.provider.cost(self.model_id, completion.usage))

    async def _attempts(self, messages: list[Message], options: dict[str, Any]) -> Completion:
        policy = self.retry
        for attempt in range(1, policy.attempts + 1):
            try:
                return await self.provider.complete(messages, model=self.model_id, **options)
            except HubskillsError:
                raise
            except Exception as exc:
                error = self.provider.error(exc, self.model_id)
                if error is None:
                    raise  # not a backend failure: a bug, shown as it is
                if not self.provider.should_retry(exc):
                    raise error from exc
                if attempt == policy.attempts:
                    raise self._gave_up(error, attempt) from exc
                pause = policy.delay(attempt, self.provider.retry_after(exc))
                logger.info("%s: %s; retry %d/%d in %.2fs", self.ref, error, attempt,
                            policy.attempts - 1, pause)
                await asyncio.sleep(pause)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _gave_up(self, error: HubskillsError, attempts: int) -> ProviderError:
        return ProviderError(
            f"{self.provider_name} keeps failing for {self.model_id} after {attempts} "
            f"attempt{'s' if attempts > 1 else ''}: {error}",
            status=error.status if isinstance(error, ProviderError) else None,
            hint="try again later; HUBSKILLS_DEBUG=1 shows the last error in full")

    def complete_sync(self, messages: list[Message], **options: Any) -> Completion:
        """`complete` from synchronous code (not inside a running event loop); the connection
        it opens is closed before it returns."""
        async def once() -> Completion:
            try:
                return await self.complete(messages, **options)
            finally:
                await self.provider.aclose()

        return asyncio.run(once())


async def aclose_all(models: Iterable[Model]) -> None:
    """Close what the models' providers opened in the running loop, each connection once."""
    providers = {model.connection_key: model.provider for model in models}
    for provider in providers.values():
        await provider.aclose()
