"""The fake Hub a test module shares: started once for the module, and skipped where
huggingface_hub was imported offline (it reads HF_HUB_OFFLINE once, at import)."""

from __future__ import annotations

from collections.abc import Iterator

import huggingface_hub.constants
import pytest

from tests.fakes.hub_server import FakeHub


def require_online() -> None:
    """Skip the test where huggingface_hub was imported offline: it reads HF_HUB_OFFLINE once,
    at import, so no test can turn it back on."""
    if huggingface_hub.constants.HF_HUB_OFFLINE:
        pytest.skip("huggingface_hub was imported with HF_HUB_OFFLINE=1 (read once, at import)")


def online_hub() -> Iterator[FakeHub]:
    """A module fixture's body: a `FakeHub`, or a skip when huggingface_hub is offline."""
    require_online()
    with FakeHub() as server:
        yield server
