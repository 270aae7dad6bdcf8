"""A Space's background workers end when they are told to (`snapshot.stop_all`, what the suite
calls after each test module), not a refresh interval later: a Space a test built would
otherwise read its store, and collect and freeze the heap, behind every later test."""

from __future__ import annotations

import threading

from registry.config import Settings
from space import build_demo
from space.snapshot import REFRESH_THREAD, stop_all
from tests.sandbox_required import eventually

WORKERS = {REFRESH_THREAD, "space-pending-replay"}


def _workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name in WORKERS]


def test_stopping_the_spaces_ends_the_refresher_and_the_pending_replays_at_once(tmp_path):
    stop_all()  # the Spaces of earlier tests in this module
    assert eventually(lambda: not _workers())
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "HF_HUB_OFFLINE": "1"})
    demo = build_demo(settings, on_space=False, refresh_every=3600)  # an hour between looks
    try:
        assert {t.name for t in _workers()} == WORKERS
        stop_all()
        assert eventually(lambda: not _workers())  # within the wait's limit, not an hour
        assert demo.hubskills_state.data.interval == 0
    finally:
        demo.close()
