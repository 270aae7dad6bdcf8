"""The Jobs one command starts, and the clean-up when their start is cut short.

A Ctrl-C (or a failed or timed-out create) while a create's POST is out leaves a Job whose id
was never read: nothing would cancel it, and it would run, and bill, to its timeout. So every
Job a command creates carries the label ``hubskills-launch=<uuid4 hex>``, new for each command
(never shared with another user's or another command's Jobs, as in the Space), and
`Launch.guard` around the creates looks that label up on an interrupt or a failure (only the
stages still going) and cancels what it finds: the Jobs already started and the one in flight.
The clean-up only lists and cancels Jobs: no model call, nothing written.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from registry._install import hf_command
from registry.errors import HubskillsError
from registry.hub import HubError, JobsClient, JobState

LAUNCH_LABEL = "hubskills-launch"
GOING = ("SCHEDULING", "RUNNING")  # the stages a cancel still stops


@dataclass(frozen=True)
class Undone:
    """What the clean-up did: the Jobs it cancelled; why it could not finish (``failure``);
    whether a create whose answer was never read may have started a Job it did not find
    (``unseen``, say when the Hub lists it only later); the label that finds them all."""

    label: str
    namespace: str | None
    cancelled: tuple[str, ...]
    failure: str | None = None
    unseen: bool = False
    run_id: str | None = None  # the sharded run whose Jobs these were, if any

    @property
    def is_clean(self) -> bool:
        """Nothing this command started may still be running."""
        return self.failure is None and not self.unseen

    def commands(self) -> str:
        """The `hf` command that lists, then cancels, what may be left (the label's Jobs)."""
        where = f" --namespace {self.namespace}" if self.namespace else ""
        hf = hf_command()
        return f"{hf} jobs ps --label {self.label}{where} -q | xargs -n1 {hf} jobs cancel{where}"

    def summary(self) -> str:
        """One clause: what was cancelled, and what may be left."""
        said = (f"cancelled {len(self.cancelled)} Hugging Face Job(s) this command had started: "
                f"{', '.join(self.cancelled)}" if self.cancelled else "")
        if self.failure:
            rest = "the others" if self.cancelled else "this command's Jobs"
            return (f"{said}; " if said else "") + \
                f"{rest} could not be looked up or cancelled ({self.failure}): Jobs labelled " \
                f"{self.label} may still be running, and billing, on your account"
        said = said or "no Job this command started was found running"
        if self.unseen:
            return f"{said}; a Job whose create was cut short may appear later labelled " \
                   f"{self.label}"
        return said


class LaunchInterrupted(KeyboardInterrupt):
    """Ctrl-C while Jobs were being started; ``undone`` says what was cancelled."""

    def __init__(self, undone: Undone) -> None:
        super().__init__(undone.summary())
        self.undone = undone


class LaunchFailed(HubskillsError):
    """Starting the Jobs failed (a create refused or timed out); ``undone`` says what of it
    was cancelled."""

    def __init__(self, cause: HubskillsError, undone: Undone) -> None:
        super().__init__(f"{cause.message}: starting the Jobs stopped, {undone.summary()}",
                         hint=cause.hint if undone.is_clean else undone.commands())
        self.undone = undone


class Launch:
    """The Jobs one command creates through ``jobs``, all labelled as this launch (the shards of
    sharded run ``run_id``, when given)."""

    def __init__(self, jobs: JobsClient, run_id: str | None = None) -> None:
        self.jobs, self.run_id = jobs, run_id
        launch_id = uuid.uuid4().hex
        self.labels = {LAUNCH_LABEL: launch_id}
        self.label = f"{LAUNCH_LABEL}={launch_id}"  # as `hf jobs ps --label` takes it
        self.in_flight = False  # a create was sent and its answer not read (yet)
        self.created: list[str] = []  # the ids whose create answered

    def run(self, *, labels: Mapping[str, str], **job: Any) -> JobState:
        """`JobsClient.run` with this launch's label added to ``labels``."""
        self.in_flight = True
        state = self.jobs.run(labels={**labels, **self.labels}, **job)
        self.in_flight = False
        self.created.append(state.id)
        return state

    @contextmanager
    def guard(self) -> Iterator[Launch]:
        """Around the creates: an interrupt or a failure in the block cancels every Job of this
        launch still going, then raises `LaunchInterrupted` or `LaunchFailed`."""
        try:
            yield self
        except KeyboardInterrupt:
            raise LaunchInterrupted(self.undo(maybe_created=self.in_flight)) from None
        except HubskillsError as err:
            refused = isinstance(err, HubError) and 400 <= (err.status or 0) < 500
            raise LaunchFailed(err, self.undo(maybe_created=self.in_flight and not refused)) \
                from err

    def undo(self, *, maybe_created: bool = False) -> Undone:
        """Cancel every Job of this launch still going (``maybe_created``: a create's answer
        was never read, so its Job may exist unseen)."""
        namespace: str | None = None
        cancelled: list[str] = []
        try:
            namespace = self.jobs.namespace  # asked already by any create that was sent
            for job in self.jobs.list(self.labels, stages=GOING):
                self.jobs.cancel(job.id)
                cancelled.append(job.id)
        except (HubskillsError, KeyboardInterrupt) as err:
            why = "interrupted again" if isinstance(err, KeyboardInterrupt) else str(err)
            return Undone(self.label, namespace, tuple(cancelled), failure=why, run_id=self.run_id)
        # A create cut short whose Job is not listed (yet): the Hub may list it only later.
        unseen = maybe_created and not set(cancelled) - set(self.created)
        return Undone(self.label, namespace, tuple(cancelled), unseen=unseen, run_id=self.run_id)
