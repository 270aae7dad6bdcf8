"""The one cost cap of a run (`CostCap`): `--max-cost` and `--max-calls`, held call by call.

Checking what was spent before each call lets every call in flight pass the check at once: 16
calls in flight overshoot a small cap many times over. Instead every paid call *reserves* its
worst case before it is sent: its prompt's tokens bounded from above (`prompt_token_bound`) plus
its whole `max_tokens` of output, at the catalogue price (`worst_case`). When it returns, the
reservation is settled to what its usage really cost (a failed call is settled at 0: providers
bill answers). A call whose worst case does not fit in what is left waits while other calls are
in flight (they may settle for less), and stops the run (`CapReached`) when none is. So the
money spent never passes the cap, however many calls are in flight.

A model without a known price has no worst case: with `--max-cost` it needs `--max-calls N`,
which counts calls (`refuse_unpriced`, called before any call). Money is only ever taken from
the catalogue (`pricing`) and the usage a provider reports, never from stored rows.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Sequence
from typing import Any

from registry.errors import HubskillsError
from registry.providers import pricing
from registry.providers.base import Completion, Message, ToolSpec
from registry.providers.model import Model

MESSAGE_ALLOWANCE = 16
"""Tokens a chat template may add around one message (role, separators): generous."""
REQUEST_ALLOWANCE = 32
"""Tokens around a whole request (the reply's priming)."""
TOOLS_ALLOWANCE = 1024
"""Tokens of the providers' own tool-use instructions when tools are offered (Anthropic adds
a few hundred), besides the tools' own JSON."""


class CapReached(Exception):
    """The cap leaves no room for the next call: no further call is made."""


def prompt_token_bound(messages: Sequence[Message], tools: Iterable[ToolSpec] | None = None
                       ) -> int:
    """An upper bound on a request's prompt tokens. A token of the priced APIs' byte-level
    tokenizers covers at least one byte of UTF-8, so the bytes of every message (its text and
    tool calls) and of every tool's JSON schema, plus an allowance per message, per request
    and for tool use, bound the prompt (about four times its usual count, for English)."""
    total = REQUEST_ALLOWANCE
    for message in messages:
        total += MESSAGE_ALLOWANCE + len(message.content.encode("utf-8"))
        for call in message.tool_calls:
            total += len(json.dumps([call.id, call.name, call.arguments]).encode("utf-8"))
    offered = list(tools or ())
    if offered:
        total += TOOLS_ALLOWANCE + sum(
            len(json.dumps([t.name, t.description, t.parameters]).encode("utf-8"))
            for t in offered)
    return total


def worst_case(ref: str, messages: Sequence[Message], tools: Iterable[ToolSpec] | None,
               max_tokens: int, *, more_prompt: int = 0) -> float | None:
    """The most one call to `ref` may cost: its prompt bound (plus `more_prompt` tokens known
    to join it, such as an answer still to come) and `max_tokens` of output, at the dearest
    input rate that may apply (a prompt-cache write, a long-prompt tier); None when the price
    is unknown."""
    price = pricing.price_for(ref)
    if price is None:
        return None
    prompt = prompt_token_bound(messages, tools) + more_prompt
    price = price.for_prompt(prompt)
    per_input = max(price.input, price.cache_write, price.cache_read)
    return (prompt * per_input + max_tokens * price.output) / 1_000_000


class CostCap:
    """A run's limits on money (`max_cost`, USD) and on calls (`max_calls`); None: no limit.

    `spent` is what the settled calls cost (known prices only), `calls` the calls sent,
    `unknown` whether a call had no known price, and `reached` which limit stopped the run
    (None while none has). One cap is shared by every call of a run, its judge and teacher too.
    """

    def __init__(self, max_cost: float | None = None, max_calls: int | None = None) -> None:
        self.max_cost, self.max_calls = max_cost, max_calls
        self.spent = 0.0
        self.calls = 0
        self.unknown = False
        self.reached: str | None = None
        self._held = 0.0  # reserved by the calls in flight
        self._holds = 0
        self._settled: asyncio.Event | None = None

    def refuse_unpriced(self, refs: Iterable[str], command: str) -> None:
        """Before any call: refuse `--max-cost` for a model without a known price unless
        `--max-calls` bounds its calls.

        Raises:
            HubskillsError: such a model, no `max_calls`; the hint adds `--max-calls N` to
                `command`.
        """
        if self.max_cost is None or self.max_calls is not None:
            return
        unknown = sorted({ref for ref in refs if pricing.price_for(ref) is None})
        if unknown:
            raise HubskillsError(
                f"{', '.join(unknown)} has no known price, so --max-cost cannot bound what "
                "its calls cost", hint=f"{command} --max-calls N  # at most N model calls")

    async def complete(self, model: Model, messages: list[Message], *, max_tokens: int,
                       tools: list[ToolSpec] | None = None, **options: Any) -> Completion:
        """`model.complete(messages, ...)` once its worst case is reserved; the reservation is
        settled to the completion's cost.

        Raises:
            CapReached: the call does not fit in what is left (nothing was sent).
        """
        worst = worst_case(model.ref, messages, tools, max_tokens)
        await self._reserve(worst)
        try:
            completion = await model.complete(messages, tools=tools, max_tokens=max_tokens,
                                              **options)
        except BaseException:
            self._settle(worst, 0.0)
            raise
        self._settle(worst, completion.cost_usd)
        return completion

    def record(self, cost: float | None) -> None:
        """Count money spent outside `complete` (an agent CLI's session), after the fact."""
        if cost is None:
            self.unknown = True
        else:
            self.spent += cost

    def check_open(self) -> None:
        """Before work whose calls are not reserved one by one (an agent CLI's session).

        Raises:
            CapReached: a limit is already reached or spent.
        """
        if self.reached or (self.max_cost is not None and self.spent >= self.max_cost):
            self.reached = self.reached or self._cost_note()
            raise CapReached(self.reached)

    def note(self) -> str | None:
        """What the run's manifest says of the cap: which limit stopped it, if one did."""
        if self.reached:
            return self.reached
        if self.unknown and self.max_cost is not None:
            return "some prices are unknown: their calls were bounded by --max-calls only"
        return None

    async def _reserve(self, worst: float | None) -> None:
        while True:
            if self.reached:
                raise CapReached(self.reached)
            if self.max_calls is not None and self.calls >= self.max_calls:
                self.reached = f"--max-calls {self.max_calls} reached after {self.calls} calls"
                raise CapReached(self.reached)
            if worst is None or self.max_cost is None \
                    or self.spent + self._held + worst <= self.max_cost:
                break
            if not self._holds:  # no call in flight will give anything back
                self.reached = self._cost_note()
                raise CapReached(self.reached)
            if self._settled is None:
                self._settled = asyncio.Event()
            await self._settled.wait()
        self.calls += 1
        self._holds += 1
        self._held += worst or 0.0

    def _settle(self, worst: float | None, cost: float | None) -> None:
        self._holds -= 1
        self._held = self._held - (worst or 0.0) if self._holds else 0.0
        self.record(cost)
        if self._settled is not None:
            self._settled.set()
            self._settled = None

    def _cost_note(self) -> str:
        return f"--max-cost ${self.max_cost:g} reached after ${self.spent:.4f}"
