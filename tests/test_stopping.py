"""`gather_until_stopped`, the stop the engine and the trigger evals share: a stop cancels what is
still running after its `before_cancel`, and says so; anything else is awaited as gathered."""

from __future__ import annotations

import asyncio

import pytest

from registry.evaluation.stopping import StopSignal, gather_until_stopped


def test_a_stop_cancels_what_runs_after_before_cancel_and_keeps_what_finished():
    stop, said, finished = StopSignal(), [], []

    async def quick() -> None:
        finished.append("quick")

    async def stopping() -> None:
        await asyncio.sleep(0)
        stop.request("SIGINT")
        await asyncio.Event().wait()  # only a cancel ends it

    async def main() -> bool:
        return await gather_until_stopped([quick(), stopping()], stop,
                                          before_cancel=lambda: said.append(stop.reason))

    assert asyncio.run(main()) is False
    assert finished == ["quick"] and said == ["SIGINT"]


def test_a_second_signal_during_the_first_marking_still_leaves_it_written():
    """The second Ctrl-C's handler runs between two bytecodes of the main thread, which may be
    inside the first stop's `before_cancel` (the run's manifest being written `interrupted`),
    and ends the process when it returns. The handler's `quit_now` must then run the marking
    whole itself: it skipped it as already done, and a run CI interrupted twice stayed
    `running`."""
    stop, events = StopSignal(), []

    def before_cancel() -> None:
        events.append("begun")
        if events.count("begun") == 1:  # the second signal arrives mid-way through the first
            stop.quit_now()
            events.append("process ended" if "written" in events else "ended, not written")
        events.append("written")

    async def stopping() -> None:
        await asyncio.sleep(0)
        stop.request("SIGINT")
        await asyncio.Event().wait()

    async def main() -> bool:
        return await gather_until_stopped([stopping()], stop, before_cancel=before_cancel)

    assert asyncio.run(main()) is False
    assert events[:3] == ["begun", "begun", "written"] and "process ended" in events, events


def test_without_a_stop_everything_finishes_and_before_cancel_is_not_called():
    stop, said = StopSignal(), []

    async def main() -> bool:
        return await gather_until_stopped([asyncio.sleep(0), asyncio.sleep(0)], stop,
                                          before_cancel=lambda: said.append("called"))

    assert asyncio.run(main()) is True and said == []
    stop.request()  # after the run: unsubscribed (else it would call onto the closed loop)


def test_a_cancellation_that_is_not_a_stop_propagates():
    async def main() -> None:
        task = asyncio.ensure_future(gather_until_stopped([asyncio.Event().wait()], None))
        await asyncio.sleep(0)
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
