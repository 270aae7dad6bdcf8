"""The bwrap sandbox for tests that run code, or a skip; under HUBSKILLS_REQUIRE_SANDBOX=1
(set by CI, which installs bubblewrap) a missing sandbox fails those tests instead."""

from __future__ import annotations

import os

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

