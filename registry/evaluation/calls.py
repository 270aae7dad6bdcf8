"""The model-calls core every evaluation shares (chat, agent and trigger runs, and `tune`).

`ModelCalls` holds what a run's model calls go through: its models resolved once (a
`--base-url` applied to `local/` references only), one concurrency limit per connection, the
content-addressed response cache and the cost cap (`--max-cost`, `--max-calls`). `complete` is
the one cached, limited and budgeted model call: a cached request is answered from the cache
without a slot or a reservation; otherwise a slot of the model's connection is taken first, and
the cap reserves the call's worst case only while it is sent. A request identical to one in
flight (two judges grading one answer by one rubric) waits for that call's answer instead of
sending its own: the cache would answer it a moment later, for nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence

from registry.config import Settings
from registry.evaluation.cache import (
    ResponseCache,
    completion_from_dict,
    completion_key,
    completion_to_dict,
    message_dict,
)
from registry.evaluation.config import EvalConfig
from registry.providers import Completion, CostCap, Message, Model, ToolSpec, aclose_all, resolve


class ModelCalls:
    """A run's models, their per-connection limits, the response cache and the cost cap."""

    def __init__(self, config: EvalConfig, settings: Settings) -> None:
        self.config = config
        if config.base_url:  # only local/ references read it: API models keep their endpoints
            settings = settings.with_(base_url=config.base_url, base_url_given=True)
        self.call_settings = settings  # what the run's models (and a judge, a teacher) use
        self.models = [self.resolve(ref) for ref in config.models]
        self.cache = ResponseCache(settings.cache_path)
        self.cap = CostCap(config.max_cost, config.max_calls)  # a judge's, a teacher's calls too
        self._limits: dict[tuple[str, ...], asyncio.Semaphore] = {}
        self._in_flight: dict[str, asyncio.Future[Completion]] = {}  # by cache key

    def resolve(self, ref: str) -> Model:
        """`ref` as this run resolves models (its endpoint and retry policy)."""
        return resolve(ref, self.call_settings, retry=self.config.retry)

    def slots(self, model: Model) -> int:
        """Calls `model`'s connection takes at once: `--concurrency`, else the model's own."""
        return max(1, self.config.concurrency or model.default_concurrency)

    def limit(self, model: Model) -> asyncio.Semaphore:
        """The semaphore every call on `model`'s connection holds while it is sent."""
        key = model.connection_key
        if key not in self._limits:
            self._limits[key] = asyncio.Semaphore(self.slots(model))
        return self._limits[key]

    async def complete(self, model: Model, messages: list[Message], *,
                       tools: Sequence[ToolSpec] = (), seed: int, repeat: int,
                       temperature: float | None = None, max_tokens: int | None = None
                       ) -> tuple[Completion, bool]:
        """One cached model call under the connection's limit and the cost cap; the
        completion and whether it came from the cache.

        Raises:
            CapReached: the cap has no room for the call.
            ProviderError: the call failed after the provider's retries.
        """
        temperature = self.config.temperature if temperature is None else temperature
        max_tokens = max_tokens or self.config.max_tokens
        # Two servers behind one `local/` name are two models: the endpoint is part of the key.
        key = completion_key(model=model.ref, endpoint=model.provider.endpoint,
                             messages=[message_dict(m) for m in messages], tools=tools,
                             temperature=temperature, max_tokens=max_tokens, seed=seed,
                             repeat=repeat)
        while self.config.use_cache:
            if (hit := self.cache.get(key)) is not None:
                return completion_from_dict(hit), True
            if (pending := self._in_flight.get(key)) is None:
                break
            try:  # shielded: this caller's cancellation must not cancel the first's call
                shared = await asyncio.shield(pending)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not pending.cancelled() or (task is not None and task.cancelling()):
                    raise  # this caller is cancelled, not (only) the first
                continue  # the first caller was cancelled: look again (or send it ourselves)
            return completion_from_dict(completion_to_dict(shared)), True  # a copy of its own
        pending = self._in_flight[key] = asyncio.get_running_loop().create_future()
        try:
            async with self.limit(model):  # a slot first: a reservation is held only while sent
                completion = await self.cap.complete(model, messages, tools=list(tools) or None,
                                                     seed=seed, temperature=temperature,
                                                     max_tokens=max_tokens)
            self.cache.put(key, completion_to_dict(completion))
        except BaseException as err:
            _settle(pending, err)
            raise
        finally:
            if self._in_flight.get(key) is pending:
                del self._in_flight[key]
        pending.set_result(completion)
        return completion, False

    @property
    def spent(self) -> float:
        """USD the settled calls cost (known prices only)."""
        return self.cap.spent

    def refuse_unpriced(self, extra: Iterable[Model], command: str) -> None:
        """Before any call: refuse a `--max-cost` the run's models (and `extra`) cannot keep.

        Raises:
            HubskillsError: a model has no known price and no `--max-calls` bounds it.
        """
        self.cap.refuse_unpriced([m.ref for m in [*self.models, *extra]], command)

    async def aclose(self, extra: Iterable[Model] = ()) -> None:
        """Close the clients of the run's models (and `extra`)."""
        await aclose_all([*self.models, *extra])


def _settle(pending: asyncio.Future[Completion], err: BaseException) -> None:
    """Hand the first call's failure to the identical calls waiting on it (the same request
    would fail the same way); a cancelled first call lets them look again."""
    if isinstance(err, asyncio.CancelledError):
        pending.cancel()
    else:
        pending.set_exception(err)
        pending.exception()  # retrieved: no "never retrieved" warning when nobody waited
