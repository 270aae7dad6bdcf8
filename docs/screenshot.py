"""Take docs/images/space.png: the Space's leaderboard on the seeded registry, in chromium.

Run from the repository root with the dev extra installed (playwright) and Debian's chromium:
`.venv/bin/python docs/screenshot.py`. The registry lives in a temporary HUBSKILLS_HOME, seeded
from `skills/` as on first use; nothing leaves the machine.
"""

from __future__ import annotations

import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from playwright.sync_api import Page, sync_playwright  # noqa: E402

from registry.config import Settings  # noqa: E402
from space import build_demo, launch  # noqa: E402

ROWS = "#leaderboard-table [role=row][data-index]"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def space_page(demo, height: int) -> Iterator[tuple[Page, str]]:
    """``demo`` launched on a free local port and opened in headless chromium (1360 wide,
    ``height`` tall): the page and the Space's URL; the Space is closed after."""
    _, url, _ = launch(demo, server_name="127.0.0.1", server_port=free_port(),
                       prevent_thread_lock=True, quiet=True)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                                 args=["--headless", "--no-sandbox"])
            page = browser.new_page(viewport={"width": 1360, "height": height})
            page.set_default_timeout(60_000)
            yield page, url
            browser.close()
    finally:
        demo.close()


def main() -> None:
    home = tempfile.mkdtemp(prefix="hubskills-shot-")
    demo = build_demo(Settings.from_env({"HUBSKILLS_HOME": home, "HF_HUB_OFFLINE": "1"}),
                      on_space=False)
    with space_page(demo, 960) as (page, url):
        page.goto(url)
        page.wait_for_function(f"() => [...document.querySelectorAll('{ROWS}')]"
                               ".some(r => r.innerText.includes('hubskills/'))")
        page.wait_for_timeout(1500)  # let the scatter finish its transition
        page.screenshot(path=str(ROOT / "docs" / "images" / "space.png"))


if __name__ == "__main__":
    main()
