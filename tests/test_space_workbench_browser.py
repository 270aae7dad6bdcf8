"""The Space's two pages in a real browser: the header's links between the leaderboard's page
(`/`) and the workbench's (`/work/`, Evaluate, Generate and Review), `?tab=` opening a tab
there, and a sign-in's return to `/` with the workbench's query sent back to the workbench."""

from __future__ import annotations

import re

import pytest
from test_space_browser import (  # noqa: F401
    chromium_page,
    require_browser,
    space_url,
    wait_for_rows,
)

pytestmark = pytest.mark.slow


def selected_tab(page) -> str:
    return page.locator("#hs-tabs [role=tab][aria-selected=true]").first.inner_text()


def test_the_header_links_the_two_pages_and_tab_opens_a_tab(space_url):  # noqa: F811
    require_browser()
    with chromium_page(1280, 900) as page:
        page.goto(space_url)
        page.locator("#hs-header nav").get_by_role("link", name=re.compile("Generate")).click()
        page.wait_for_url(re.compile(r"/work/\?tab=generate$"))
        page.locator("#gen-run").wait_for(state="visible")
        assert "Generate" in selected_tab(page)
        assert page.locator("#eval-run").is_hidden()  # the other tabs are there, not shown
        page.locator("#hs-header nav").get_by_role("link", name=re.compile("Review")).click()
        page.locator("#review-run").wait_for(state="visible")
        page.wait_for_function("() => (document.querySelector('#review-runs') || {})"
                               ".innerText?.includes('in the registry: pick')")  # filled
        page.locator("#hs-header nav").get_by_role("link", name=re.compile("Leaderboard")).click()
        page.wait_for_url(re.compile(r"127\.0\.0\.1:\d+/$"))
        wait_for_rows(page, "leaderboard-table", "text.includes('hubskills/')")
        assert page.locator("#eval-run").count() == 0  # the forms are the workbench's alone


def test_a_return_to_the_leaderboard_with_a_workbench_tab_goes_back_there(
        space_url):  # noqa: F811
    """Gradio's sign-in button sends the visitor to `/` with the page's query, `?tab=review`
    when pressed on the Review tab."""
    require_browser()
    with chromium_page(1280, 900) as page:
        page.goto(f"{space_url}?tab=review")
        page.wait_for_url(re.compile(r"/work/\?tab=review$"))
        page.locator("#review-run").wait_for(state="visible")
        assert "Review" in selected_tab(page)
        page.goto(f"{space_url}?tab=elsewhere")  # not a workbench tab: the leaderboard stays
        wait_for_rows(page, "leaderboard-table", "text.includes('hubskills/')")
        assert re.search(r"127\.0\.0\.1:\d+/\?tab=elsewhere$", page.url), page.url


@pytest.mark.parametrize(("width", "stacked"), [(1280, False), (390, True)])
def test_the_generate_preview_stacks_on_a_phone(space_url, width, stacked):  # noqa: F811
    """The skill and its suite side by side on a laptop, one under the other on a phone
    (side by side there, the suite's box was 160 px and its lines overflowed it)."""
    require_browser()
    with chromium_page(width, 900) as page:
        page.goto(f"{space_url}work/?tab=generate")
        page.locator("#gen-suite").wait_for(state="visible")
        skill, suite = (page.locator(f"#{name}").bounding_box()
                        for name in ("gen-skill", "gen-suite"))
        assert skill and suite
        assert (suite["y"] >= skill["y"] + skill["height"]) is stacked, (skill, suite)
        assert suite["x"] + suite["width"] <= width


def test_on_a_phone_the_page_links_take_one_line_and_a_model_id_stays_whole(
        space_url):  # noqa: F811
    require_browser()
    with chromium_page(390, 844) as page:
        heights = {}
        for url in (space_url, f"{space_url}work/"):
            page.goto(url)
            nav = page.locator("#hs-header nav")
            nav.wait_for(state="visible")
            heights[url] = nav.bounding_box()["height"]
            line = page.evaluate("""() => parseFloat(getComputedStyle(
                document.querySelector('#hs-header nav a')).lineHeight)""")
            assert heights[url] < 2 * line, (url, heights[url], line)
        token = page.locator("#eval-models .token").first
        token.wait_for(state="visible")
        lines = page.evaluate("""() => { const el = document.querySelector('#eval-models .token');
            const range = document.createRange(); range.selectNodeContents(el.firstElementChild
              || el);
            return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size; }""")
        assert lines == 1, f"the model id takes {lines} lines"
