"""The Space replays pending submissions for the results dataset's owner.

Each open pull request's runs are replayed (`registry.replay_pending`: no model is called and
no visitor's key is used; code checks run in the sandbox, or the run is `not replayable` where
none works), the verification recorded in the dataset and the result commented on the pull
request once per version of its rows. That happens when the *Pending submissions* view is
shown and, in the background, every refresh interval; one replay at a time, so a view and the
background never both comment. What the last replay found is what the view lists.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import TYPE_CHECKING, Any

from registry import HubskillsError, replay_pending

from .messages import describe

if TYPE_CHECKING:
    from .state import SpaceState

log = logging.getLogger(__name__)


class PendingReplays:
    """The replays of one Space's pending submissions (thread-safe; see the module
    docstring)."""

    def __init__(self, state: SpaceState) -> None:
        self.state = state
        self.found: list[Any] = []
        self.error: str | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def run(self) -> list[Any]:
        """Replay what waits now (what the last replay found when this one fails)."""
        with self._lock:
            try:
                self.found = replay_pending(self.state.store, self.state.settings)
                self.error = None
            except HubskillsError as err:
                self.error = describe(err)[0]
                log.warning("replaying the pending submissions failed: %s", self.error)
            return self.found

    def note(self) -> str:
        """The replays as markdown lines for the view ("" when nothing waits)."""
        lines = [check.line() for check in self.found]
        if self.error:
            lines.append(f"⚠️ The last replay failed: {self.error}")
        if not lines:
            return ""
        return "**Replayed by hubskills** (no model called):\n\n" + "\n".join(
            f"- {line}" for line in lines)

    def start(self) -> None:
        """Replay in a daemon thread every refresh interval of the Space's data (once; it ends
        with `self` or when the interval is set to 0)."""
        if self._thread is None:
            self._thread = threading.Thread(target=_replay_loop, args=(weakref.ref(self),),
                                            name="space-pending-replay", daemon=True)
            self._thread.start()


def _replay_loop(ref: weakref.ref[PendingReplays]) -> None:
    wake = threading.Event()
    while True:
        owner = ref()
        if owner is None or owner.state.data.interval <= 0:
            return
        interval = owner.state.data.interval
        del owner
        wake.wait(interval)
        owner = ref()
        if owner is None or owner.state.data.interval <= 0:
            return
        owner.run()
        del owner
