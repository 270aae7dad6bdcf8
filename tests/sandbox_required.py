"""The bwrap sandbox for tests that run code, or a skip; under HUBSKILLS_REQUIRE_SANDBOX=1
(set by CI, which installs bubblewrap) a missing sandbox fails those tests instead."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest

from registry.sandbox import BwrapSandbox


def bwrap_sandbox() -> BwrapSandbox:
    """A working `BwrapSandbox`, or skip (fail when HUBSKILLS_REQUIRE_SANDBOX=1)."""
    sandbox = BwrapSandbox(os.environ.get("HUBSKILLS_BWRAP"))
    works, why = sandbox.probe()
    if not works:
        if os.environ.get("HUBSKILLS_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"{why}; HUBSKILLS_REQUIRE_SANDBOX=1 requires it")
        pytest.skip(why)
    return sandbox



def eventually(condition: Callable[[], bool], limit_s: float = 120.0) -> bool:
    """Whether `condition()` holds within `limit_s` (polled): a test waits for what it expects
    instead of a duration, and the bound only stops a broken run from hanging."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
