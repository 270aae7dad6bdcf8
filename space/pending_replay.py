"""The Space reviews pending submissions for the results dataset's owner, off the request path.

Each open pull request is reviewed (`registry.replay_pending`: the one gate, then each run
replayed without calling any model and with no visitor's key, within the verifier's bounds;
the result recorded and commented once). That happens in one background worker: every refresh
interval, and when the *Pending submissions* view asks for it (`request`); a page load never
waits on a replay, it lists what the last one found and says when one is under way. One replay
at a time, so a view and the schedule never both comment.

What the view lists is the submitters' text (authors, run ids, file names, reasons): each is a
code span (`SubmissionCheck.line`), and the view renders the note through the one sanitiser.
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
    """The reviews of one Space's pending submissions (thread-safe; see the module
    docstring)."""

    def __init__(self, state: SpaceState) -> None:
        self.state = state
        self.found: list[Any] = []
        self.error: str | None = None
        self._lock = threading.Lock()  # one replay at a time
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._asked = self._busy = False

    def run(self) -> list[Any]:
        """Review what waits now, in the calling thread (what the last review found when this
        one fails). The worker calls it; a request handler never does."""
        with self._lock:
            try:
                self.found = replay_pending(self.state.store, self.state.settings)
                self.error = None
            except HubskillsError as err:
                self.error = describe(err)[0]
                log.warning("replaying the pending submissions failed: %s", self.error)
            except Exception:  # a bug must not end the worker: logged, said, tried again
                log.exception("replaying the pending submissions failed")
                self.error = "an internal error (in the Space's log); tried again next time"
            return self.found

    def request(self) -> None:
        """Ask the worker for a review now; returns at once (nothing is asked once the
        Space's refreshes stopped)."""
        if self.state.data.interval <= 0:
            return
        self._asked = True
        self.start()
        self._wake.set()

    @property
    def is_running(self) -> bool:
        """Whether a review is asked for or under way."""
        return self._asked or self._busy

    def note(self) -> str:
        """The reviews as markdown lines for the view ("" when there is nothing to say)."""
        lines = [check.line() for check in self.found]
        if self.error:
            lines.append(f"⚠️ The last replay failed: {self.error}")
        if self.is_running:
            lines.append("⏳ The pending submissions are being replayed: show them again "
                         "in a moment for the result.")
        if not lines:
            return ""
        return "**Replayed by hubskills** (no model called):\n\n" + "\n".join(
            f"- {line}" for line in lines)

    def start(self) -> None:
        """Start the worker (once; it ends with `self` or when the Space's refreshes stop)."""
        if self._thread is None and self.state.data.interval > 0:
            self._thread = threading.Thread(target=_replay_loop,
                                            args=(weakref.ref(self), self._wake),
                                            name="space-pending-replay", daemon=True)
            self.state.data.on_stop(self._wake.set)  # it ends with them, not an interval later
            self._thread.start()

    def _work(self) -> None:
        self._busy, self._asked = True, False
        try:
            self.run()
        finally:
            self._busy = False


def _replay_loop(ref: weakref.ref[PendingReplays], wake: threading.Event) -> None:
    """Review every refresh interval, or at once when asked."""
    while True:
        owner = ref()
        if owner is None or owner.state.data.interval <= 0:
            return
        interval = owner.state.data.interval
        del owner
        wake.wait(interval)
        wake.clear()
        owner = ref()
        if owner is None or owner.state.data.interval <= 0:
            return
        owner._work()
        del owner
