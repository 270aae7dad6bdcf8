"""The owner's "Spot-check on my Jobs" in a real browser (chromium, as `test_space_browser`).

Off a Space the local user owns the results dataset, so *Show pending submissions* reveals the
control with the replayed run to pick; before that it is not on the page. The Job itself is
`test_space_spot`'s; this only checks what the browser shows.
"""

from __future__ import annotations

import os

import pytest
from test_space import free_port
from test_space_browser import chromium_page, require_browser
from test_space_spot import hub, replayed_run  # noqa: F401 - `hub` is the fixture

from registry.config import Settings
from space import build_demo, launch

pytestmark = pytest.mark.slow


def test_the_owner_finds_the_control_under_pending_submissions(hub, tmp_path,  # noqa: F811
                                                               capsys):
    require_browser()
    run_id = replayed_run(tmp_path, capsys)  # before playwright's event loop runs here
    settings = Settings.from_env({**os.environ, "HUBSKILLS_HOME": str(tmp_path / "space")})
    demo = build_demo(settings, on_space=False)
    _, url, _ = launch(demo, server_name="127.0.0.1", server_port=free_port(),
                       prevent_thread_lock=True, quiet=True)
    try:
        with chromium_page() as page:
            see_the_control(page, url, run_id)
    finally:
        demo.close()


def see_the_control(page, url: str, run_id: str) -> None:
    """Hidden until the pending submissions are shown, then there with the run picked."""
    page.goto(url)
    page.get_by_text("Pending submissions (unreviewed)").click()
    page.locator("#pending-show").wait_for()
    assert not page.locator("#spot-check").is_visible()
    page.locator("#pending-show").click()
    page.locator("#spot-start").wait_for(state="visible")
    page.wait_for_function(
        """id => { const box = document.querySelector('#spot-target input');
            return box && box.value.includes(id); }""", arg=run_id)
    assert page.locator("#spot-k input").input_value() == "10"
