"""The Space's first screen, in a real browser at a laptop's 1280 × 800 and a phone's 390 × 844:
the leaderboard's first rows are visible without scrolling (the explainer waits one click away,
below the table), a lift and its interval take one line on the laptop (a skill id of usual
length two), and no cell shows a glyph the page's own CSS garbled (a Python string once turned
the new-tab arrow's CSS escapes into control characters). On a phone's skill page the install
command stays on one line (scrolling sideways where it is longer), and the text after an inline
code span stays on its line."""

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
        if screen == "laptop":  # a lift and its interval on one line ("+17 [+7," / "+28]")
            lifts = page.evaluate(LINES, 6)
            assert lifts and all(n == 1 for _, n in lifts), lifts
            skills = dict(page.evaluate(LINES, 1))  # and a skill id of usual length on two
            assert all(n <= 2 for text, n in skills.items() if "agent-skill-md" in text), skills


# Each leaderboard cell of a column (its index) with the lines its text takes.
LINES = """col => [...document.querySelectorAll(
    `#leaderboard-table [role=gridcell][data-col="${col}"]`)].map(cell => {
      const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      const tops = new Set();
      for (let node = walk.nextNode(); node; node = walk.nextNode()) {
        const range = document.createRange(); range.selectNodeContents(node);
        for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
      }
      return [cell.innerText, tops.size]; })"""


def test_a_skill_page_on_a_phone_keeps_its_id_whole_and_its_install_command_on_one_line(
        space_url):  # noqa: F811
    require_browser()
    with chromium_page(390, 844) as page:
        page.goto(f"{space_url}?skill=hubskills/agent-skill-md")
        command = pull_command(page)
        assert command.startswith("hubskills pull hubskills/agent-skill-md@v"), command
        cut = page.evaluate("""() => { const box = document.querySelector('#skill-picker input');
              return box.scrollWidth > box.clientWidth ? [box.value, box.scrollWidth] : null; }""")
        assert cut is None, cut  # the id shown whole in the picker
        # the command on one line, never broken inside the id ("acme/csv-" / "cleaning@v0.1.0"):
        # one wider than its box scrolls sideways
        page.goto(f"{space_url}?skill=hubskills/kernel-builder-cuda-kernels")
        page.wait_for_function("""() => document.querySelector('#pull-command textarea')
              ?.value.includes('kernel-builder')""")
        box = page.evaluate("""() => { const box = document.querySelector('#pull-command textarea');
              const style = getComputedStyle(box);
              const inner = box.clientHeight - parseFloat(style.paddingTop)
                            - parseFloat(style.paddingBottom);
              const wide = box.scrollWidth > box.clientWidth;
              box.scrollLeft = box.scrollWidth;
              return {lines: inner / parseFloat(style.lineHeight), hidden: box.scrollHeight
                      > box.clientHeight + 1, wide, scrolled: box.scrollLeft > 0}; }""")
        assert box["lines"] < 1.5 and not box["hidden"], box  # one line, nothing below it
        assert box["wide"] and box["scrolled"], box  # 390 px: it scrolls to its end


# Each inline code span of the SKILL.md followed by punctuation (".", ",", ":" or ";"), with
# whether that punctuation lies on the line where the span ends.
PUNCTUATION_AFTER_CODE = """() => [...document.querySelectorAll('#skill-body :not(pre) > code')]
  .filter(code => /^[.,:;]/.test(code.nextSibling?.textContent || ''))
  .map(code => { const range = document.createRange();
    range.setStart(code.nextSibling, 0); range.setEnd(code.nextSibling, 1);
    const mark = range.getBoundingClientRect(), spans = [...code.getClientRects()];
    const last = spans[spans.length - 1];
    return [code.innerText, Math.abs(mark.bottom - last.bottom) < 4]; })"""


def test_punctuation_after_inline_code_stays_on_its_line_on_a_phone(space_url):  # noqa: F811
    """Gradio drew inline code as an inline-flex box: one that wrapped took the whole line
    and left the sentence's "." on a line of its own."""
    require_browser()
    with chromium_page(390, 844) as page:
        page.goto(f"{space_url}?skill=hubskills/kernel-builder-cuda-kernels")
        page.locator("#skill-body code").first.wait_for()
        found = page.evaluate(PUNCTUATION_AFTER_CODE)
    assert len(found) >= 3, found
    assert [code for code, same_line in found if not same_line] == [], found
