"""A responder for the fake model servers that answers the first `free` calls and holds every
later one until the test opens the gate: a test then sees what a command does while calls are
in flight, and that it ends without waiting for them, on a machine of any speed."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Gate:
    """Answers the first `free` requests with `answer`, then holds each until `opened` is set
    (or `wait_s` passes: a guard against a test that never opens it)."""

    def __init__(self, free: int, answer: Callable[[dict], str], wait_s: float = 120.0) -> None:
        self.free, self.seen, self.answer, self.wait_s = free, 0, answer, wait_s
        self.opened = threading.Event()
        self.lock = threading.Lock()
        self.url = ""  # set by the test: the server it answers for

    def __call__(self, body: dict) -> str:
        with self.lock:
            self.seen += 1
            held = self.seen > self.free
        if held:
            self.opened.wait(self.wait_s)
        return self.answer(body)
