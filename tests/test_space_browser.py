"""The Space in a real browser: Debian's chromium driven by the PyPI `playwright` package.

Opens the leaderboard, filters it, opens a skill page from it (and by URL), reads the pull
command, and runs an evaluation of an example skill on the embedded model until it finishes.
Screenshots of each view are saved under the test's tmp folder and copied to
/tmp/space-shots/ for a person to look at. Without chromium the test skips, or fails when
HUBSKILLS_REQUIRE_BROWSER=1 (CI installs chromium).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from test_space import ENTRIES, MODELS, seeded_space

from registry.config import Settings
from registry.providers.embedded import availability

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
SHOTS_COPY = Path("/tmp/space-shots")
TIMEOUT_MS = 60_000
EVAL_TIMEOUT_MS = 240_000

pytestmark = pytest.mark.slow


def require_installed(path: Path, reason: str) -> None:
    """Skip the test without ``path`` (``reason`` says what is missing), or fail it under
    HUBSKILLS_REQUIRE_BROWSER=1, where CI installed what the browser tests need."""
    if path.is_file():
        return
    if os.environ.get("HUBSKILLS_REQUIRE_BROWSER") == "1":
        pytest.fail(reason + "; HUBSKILLS_REQUIRE_BROWSER=1 requires it")
    pytest.skip(reason)


def require_browser() -> None:
    require_installed(CHROMIUM, f"chromium is not installed at {CHROMIUM} (apt-get install "
                                "chromium)")


@pytest.fixture
def space_url(tmp_path):
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "HF_HUB_OFFLINE": "1"})
    demo, url = seeded_space(settings)
    yield url
    demo.close()


@contextmanager
def chromium(**launch: Any) -> Iterator[Any]:
    """Headless chromium (``launch``: more of its launch options), closed after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                             **launch)
        yield browser
        browser.close()


def new_page(browser, width: int = 1440, height: int = 1000):
    """A page of ``browser`` with a ``width`` x ``height`` window, waiting up to TIMEOUT_MS."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(TIMEOUT_MS)
    return page


@contextmanager
def chromium_page(width: int = 1440, height: int = 1000, **launch: Any) -> Iterator[Any]:
    """One page (`new_page`) of a headless chromium (`chromium`), closed after."""
    with chromium(**launch) as browser:
        yield new_page(browser, width, height)


@pytest.fixture
def page(tmp_path):
    require_browser()
    with chromium_page() as page:
        yield page


class Shots:
    """Full-page screenshots, numbered in order, also copied to /tmp/space-shots/."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.count = folder, 0
        folder.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(SHOTS_COPY, ignore_errors=True)
        SHOTS_COPY.mkdir(parents=True, exist_ok=True)

    def take(self, page, name: str) -> None:
        self.count += 1
        path = self.folder / f"{self.count:02d}-{name}.png"
        page.wait_for_timeout(800)  # let plots finish their transition before the picture
        page.screenshot(path=str(path), full_page=True)
        shutil.copy(path, SHOTS_COPY / path.name)


ROWS = "[role=row][data-index]"  # Gradio 6's data grid: header <table>, then div rows


def table_rows(page, elem_id: str) -> list[str]:
    return page.locator(f"#{elem_id} {ROWS}").all_inner_texts()


def wait_for_rows(page, elem_id: str, predicate: str) -> None:
    """Wait until every visible row's text satisfies the JS `predicate(text)`."""
    page.wait_for_function(
        """([id, body]) => { const test = new Function('text', body);
            const rows = [...document.querySelectorAll('#' + id + ' [role=row][data-index]')]
              .map(r => r.innerText).filter(t => t.trim());
            return rows.length > 0 && rows.every(t => test(t)); }""",
        arg=[elem_id, f"return {predicate};"])


def pull_command(page) -> str:
    box = page.locator("#pull-command textarea, #pull-command input").first
    page.wait_for_function(
        """() => { const b = document.querySelector('#pull-command textarea, #pull-command input');
            return b && b.value.startsWith('hubskills pull'); }""")
    return box.input_value()


def test_the_pages_fit_the_window_beside_a_real_scrollbar(space_url):
    """With classic scrollbars (not the overlay ones headless uses by default) the app was as
    wide as the window itself, so every page scrolled sideways by the scrollbar's width."""
    require_browser()
    with chromium_page(1280, 900, ignore_default_args=["--hide-scrollbars"]) as page:
        for url in (space_url, f"{space_url}?skill=hubskills/agent-skill-md"):
            page.goto(url)
            wait_for_rows(page, "leaderboard-table", "text.includes('hubskills/')")
            page.wait_for_timeout(500)
            scroll, client = page.evaluate("() => [document.documentElement.scrollWidth, "
                                           "document.documentElement.clientWidth]")
            assert client < 1280  # a real scrollbar takes its room
            assert scroll <= client, url


def test_browse_filter_open_a_skill_and_evaluate(space_url, page, tmp_path):
    shots = Shots(tmp_path / "shots")
    page.goto(space_url)
    wait_for_rows(page, "leaderboard-table", "text.includes('hubskills/')")
    assert len(table_rows(page, "leaderboard-table")) == ENTRIES
    page.locator("#lift-scatter canvas, #lift-scatter svg").first.wait_for()
    shots.take(page, "leaderboard")

    page.locator("#filter-query input, #filter-query textarea").first.fill("kernel")
    page.keyboard.press("Enter")
    wait_for_rows(page, "leaderboard-table", "text.includes('kernel-builder-cuda-kernels')")
    assert len(table_rows(page, "leaderboard-table")) == len(MODELS) + 1
    shots.take(page, "leaderboard-filtered")

    page.locator("#leaderboard-table [data-testid=cell-0-3]").click()  # select, not the link
    assert pull_command(page) == "hubskills pull hubskills/kernel-builder-cuda-kernels@v1.1.0"
    page.locator("#skill-body").get_by_text("kernel-builder", exact=False).first.wait_for()
    shots.take(page, "skill-page")

    page.goto(f"{space_url}?skill=hubskills/agent-skill-md")
    assert pull_command(page) == "hubskills pull hubskills/agent-skill-md@v1.1.0"
    shots.take(page, "skill-page-by-url")

    if not availability()[0]:
        pytest.skip("the embedded model is not installed: evaluation not exercised")
    page.locator("#hs-header nav").get_by_role("link", name=re.compile("Evaluate")).click()
    page.wait_for_url(re.compile(r"/work/\?tab=evaluate$"))  # the workbench's own page
    page.locator("#eval-skill input").click()
    page.get_by_role("option", name="hubskills/kernel-builder-cuda-kernels").click()
    page.locator("#eval-cases input").fill("2")
    page.locator("#eval-runs input[type=number]").fill("1")
    page.get_by_role("button", name=re.compile("^Limits")).click()
    page.locator("#eval-max-tokens input[type=number]").fill("32")
    page.locator("#eval-max-tokens input[type=number]").press("Enter")
    shots.take(page, "evaluate-form")
    page.locator("#eval-run").click()
    progress_or_done = page.locator("#eval-status").get_by_text(
        re.compile(r"\d+/\d+ answers|Run \d{8}-")).first
    progress_or_done.wait_for(timeout=EVAL_TIMEOUT_MS)
    if "answers" in progress_or_done.inner_text():  # usually: a picture of the progress bar
        shots.take(page, "evaluate-running")
    page.locator("#eval-status").get_by_text(re.compile(r"Run \d{8}-")).wait_for(
        timeout=EVAL_TIMEOUT_MS)
    status = page.locator("#eval-status").inner_text()
    assert "2 cases × 1 run ·" in status and "kernel-builder-cuda-kernels" in status, status
    wait_for_rows(page, "eval-summary", "text.includes('embedded/smollm2-135m')")
    shots.take(page, "evaluate-finished")
    page.get_by_role("tab", name=re.compile("Generate")).click()
    page.locator("#gen-task").wait_for()
    shots.take(page, "generate-form")


def test_a_skill_opened_from_a_row_has_an_address_to_share(space_url, page):
    """A row opened its skill's page with the address left at `/`: the page could not be
    shared. The address names the skill (`?skill=`, which opens it when loaded), the
    leaderboard's tab takes it off again, and Back returns to the skill."""
    here = "() => location.pathname + location.search"
    page.goto(space_url)
    wait_for_rows(page, "leaderboard-table", "text.includes('hubskills/')")
    page.locator("#leaderboard-table [data-testid=cell-0-3]").click()  # select, not the link
    command = pull_command(page)
    repo = command.split()[-1].split("@")[0]
    page.wait_for_function(f"() => location.search === '?skill={repo}'")
    page.get_by_role("tab", name=re.compile("Leaderboard")).click()
    page.wait_for_function("() => location.search === ''")
    page.go_back()  # the address of the skill again: loaded, it opens that skill
    page.wait_for_function(f"() => location.search === '?skill={repo}'")
    page.locator("#pull-command textarea").first.wait_for()
    assert pull_command(page) == command and page.evaluate(here).endswith(f"?skill={repo}")
    assert "Skill" in page.get_by_role("tab", selected=True).inner_text()
    page.goto(f"{space_url}?skill=hubskills/hf-hub-python-2x")  # as shared: opened, kept
    page.wait_for_function("""() => document.querySelector('#pull-command textarea')
        ?.value.includes('hf-hub-python-2x')""")
    assert page.evaluate(here).endswith("?skill=hubskills/hf-hub-python-2x")
