"""The Space's first screen, in a real browser at a laptop's 1280 × 800 and a phone's 390 × 844:
the leaderboard's first rows are visible without scrolling (the explainer waits one click away,
below the table), and no cell shows a glyph the page's own CSS garbled (a Python string once
turned the new-tab arrow's CSS escapes into control characters)."""

from __future__ import annotations

import pytest
from test_space_browser import chromium_page, pull_command, require_browser, space_url  # noqa: F401

pytestmark = pytest.mark.slow

ROWS = "#leaderboard-table [role=row][data-index]"
SCREENS = {"laptop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("screen", SCREENS)
def test_the_first_screen_shows_the_leaderboards_rows(space_url, screen):  # noqa: F811
    require_browser()
    viewport = SCREENS[screen]
    with chromium_page(viewport["width"], viewport["height"]) as page:
        page.goto(space_url)
        page.wait_for_function(f"() => [...document.querySelectorAll('{ROWS}')]"
                               ".some(r => r.innerText.includes('hubskills/'))")
        first = page.locator(ROWS).first.bounding_box()
        assert first is not None and first["y"] + first["height"] <= viewport["height"], (
            f"the first row ends at {first} on a {viewport} screen")
        explainer = page.locator("#board-explainer").bounding_box()
        assert explainer is not None and explainer["y"] > first["y"]  # below the table
        assert page.get_by_text("How to read this table.").is_hidden()  # one click away
        arrow = page.evaluate("""() => getComputedStyle(
            document.querySelector('#leaderboard-table a[target=_blank]'), '::after').content""")
        assert arrow.startswith('"\u2009\u2197"'), arrow
        if screen == "laptop":  # a lift and its interval on two lines at most, never three
            lines = page.evaluate("""() => [...document.querySelectorAll(
                '#leaderboard-table [role=gridcell][data-col="6"]')].map(cell => {
                  const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
                  const tops = new Set();
                  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
                    const range = document.createRange(); range.selectNodeContents(node);
                    for (const r of range.getClientRects()) tops.add(Math.round(r.top));
                  }
                  return [cell.innerText, tops.size]; })""")
            assert lines and all(n <= 2 for _, n in lines), lines


def test_a_skill_page_on_a_phone_cuts_neither_its_id_nor_its_install_command(
        space_url):  # noqa: F811
    require_browser()
    with chromium_page(390, 844) as page:
        page.goto(f"{space_url}?skill=hubskills/agent-skill-md")
        command = pull_command(page)
        assert command.startswith("hubskills pull hubskills/agent-skill-md@v"), command
        cut = page.evaluate("""() => ['#skill-picker input', '#pull-command textarea',
              '#pull-command input'].map(css => { const box = document.querySelector(css);
              return box && [css, box.value, box.scrollWidth, box.clientWidth]; })
              .filter(found => found && found[2] > found[3])""")
        assert cut == [], cut  # each shown whole: no text past its box's edge
        below = page.evaluate("""() => { const box = document.querySelector(
              '#pull-command textarea'); return box && [box.scrollHeight, box.clientHeight]; }""")
        assert below is None or below[0] <= below[1] + 1, below  # its second line shown too
