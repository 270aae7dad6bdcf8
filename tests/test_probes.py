"""`Probes`: each endpoint's probe runs beside the run's own first calls, not a round trip
before them, and still refuses a dead endpoint before any answer is kept or paid for.

The providers here are in-process (no network): a probe that answers only once a call has been
made proves the calls did not wait for it (waiting would never end, and the test would fail at
its timeout, not pass).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest

from registry.errors import ProviderError
from registry.evaluation.preflight import Probes
from registry.evaluation.stopping import StopSignal
from registry.providers import Completion, Model
from registry.providers.base import Provider, Usage

WAIT_S = 60  # only a broken `Probes` ever waits this long


class Endpoint(Provider):
    """A provider at `url` whose probe answers once a call was made (`answers_after_a_call`),
    at once, or refuses (`dead`); `calls` counts the calls made."""

    name: ClassVar[str] = "local"

    def __init__(self, url: str, *, dead: bool = False, answers_after_a_call: bool = False):
        self.url, self.dead, self.after_a_call = url, dead, answers_after_a_call
        self.called = asyncio.Event()
        self.calls = 0

    @property
    def endpoint(self) -> str:
        return self.url

    def connection_key(self) -> tuple[str, ...]:
        return ("local", self.url)

    async def probe(self) -> None:
        if self.dead:
            raise ProviderError(f"cannot reach {self.url}: connection refused")
        if self.after_a_call:
            await self.called.wait()

    async def complete(self, messages: Any, **options: Any) -> Completion:
        self.calls += 1
        self.called.set()
        return Completion(text="ok", tool_calls=[], finish_reason="stop", model="m", latency_s=0.0,
                          usage=Usage())


def model(provider: Endpoint) -> Model:
    return Model(ref=f"local/{provider.url}", provider=provider, model_id="m")


async def sample(probes: Probes, m: Model, shown: list[str], label: str) -> None:
    """One sample as the engines run one: clear, call, then show its row."""
    await probes.clear_for(m)
    await m.provider.complete([])
    probes.show(shown.append, label)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, WAIT_S))


def test_calls_go_out_before_their_endpoints_probe_has_answered():
    server = Endpoint("http://a", answers_after_a_call=True)
    m = model(server)
    shown: list[str] = []

    async def main() -> str:
        probes = Probes([m])
        probes.show(shown.append, "started")
        await probes.around(asyncio.gather(*(sample(probes, m, shown, f"row{i}")
                                             for i in range(3))))
        return "done"

    assert run(main()) == "done"
    assert server.calls == 3
    assert shown == ["started", "row0", "row1", "row2"]  # held, then shown in order


def test_rows_are_held_until_the_probe_answers():
    server = Endpoint("http://a", answers_after_a_call=True)
    m = model(server)
    shown: list[str] = []
    seen_before_answer: list[list[str]] = []

    async def main() -> None:
        probes = Probes([m])

        async def work() -> None:
            await sample(probes, m, shown, "row")
            seen_before_answer.append(list(shown))  # the probe has not run since the call

        await probes.around(work())

    run(main())
    assert seen_before_answer == [[]] and shown == ["row"]


def test_a_refused_probe_cancels_the_run_and_shows_nothing():
    server = Endpoint("http://a", dead=True)
    m = model(server)
    shown: list[str] = []
    probes = Probes([m])

    async def main() -> None:
        probes.show(shown.append, "started")
        await probes.around(asyncio.gather(*(sample(probes, m, shown, "row")
                                             for _ in range(3))))

    with pytest.raises(ProviderError, match="connection refused"):
        run(main())
    assert probes.refused and shown == []


def test_no_call_goes_out_until_every_other_endpoint_has_answered():
    """A student's calls wait for a dead judge's probe: nothing is paid for a refused run."""
    student, judge = Endpoint("http://students"), Endpoint("http://judge", dead=True)
    probes = Probes([model(student), model(judge)])

    async def main() -> None:
        await probes.around(sample(probes, model(student), [], "row"))

    with pytest.raises(ProviderError, match="judge"):
        run(main())
    assert student.calls == 0 and probes.refused


def test_a_run_without_endpoints_is_shown_at_once():
    class InProcess(Endpoint):
        @property
        def endpoint(self) -> None:  # type: ignore[override]
            return None

    m = model(InProcess("embedded"))
    shown: list[str] = []

    async def main() -> None:
        probes = Probes([m])
        await probes.around(sample(probes, m, shown, "row"))

    run(main())
    assert shown == ["row"]


def test_a_stop_before_the_probe_answers_keeps_what_finished():
    """An interrupted run keeps its finished rows, even when a probe is still unanswered."""
    server = Endpoint("http://a", answers_after_a_call=True)
    m = model(server)
    shown: list[str] = []
    stop = StopSignal()

    async def main() -> str:
        probes = Probes([m])

        async def work() -> str:
            probes.show(shown.append, "row")  # finished without a call: the probe still waits
            stop.request()
            return "interrupted"

        return await probes.around(work(), stop)

    assert run(main()) == "interrupted"
    assert shown == ["row"] and server.calls == 0
