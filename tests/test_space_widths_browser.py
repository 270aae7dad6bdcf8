"""The Space's tables at common window widths, in a real browser (chromium, as
`test_space_browser`).

At 1024 and 1280 px every visible table header wraps only between words: no word of a header
lies on two lines ("baseli/ne") or reaches past its cell's edge, and each header is as wide as
its body column. The leaderboard fits at 1280 px; at 1024 px it scrolls sideways with its
rank and skill columns pinned. The pages looked at are the
leaderboard (with the model view and the pending submissions opened), a skill page and the
Evaluate tab's empty tables. Full-page screenshots go to the test's tmp folder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_space_browser import (  # noqa: F401 - `space_url` is the fixture
    chromium,
    new_page,
    require_browser,
    space_url,
    wait_for_rows,
)

pytestmark = pytest.mark.slow

WIDTHS = (1024, 1280)
# Each header word of every visible `.hs-table`: its name, and the lines its range spans and
# how far it reaches past its cell, both measured by the browser.
HEADER_WORDS = """() => {
  const words = [];
  for (const th of document.querySelectorAll('.hs-table th')) {
    if (!th.getClientRects().length) continue;  // in a hidden tab or accordion
    const table = th.closest('.hs-table').id, cell = th.getBoundingClientRect();
    const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const rects = [...range.getClientRects()].filter(r => r.width > 0);
        words.push({table, word: match[0],
                    lines: new Set(rects.map(r => Math.round(r.top))).size,
                    past: Math.max(0, ...rects.map(r => r.right - cell.right))});
      }
    }
  }
  return words;
}"""


# Each visible table's columns whose header and first row differ in width: a header that grew
# to keep a word whole over a body that did not.
MISALIGNED = """() => {
  const found = [];
  for (const table of document.querySelectorAll('.hs-table')) {
    const row = table.querySelector('[role=row][data-index="0"]');
    if (!table.getClientRects().length || !row) continue;
    for (const th of table.querySelectorAll('th[data-heading]')) {
      const cell = row.querySelector(`[role=gridcell][data-col="${th.dataset.heading}"]`);
      const a = th.getBoundingClientRect().width, b = cell.getBoundingClientRect().width;
      if (Math.abs(a - b) > 1) found.push(`${table.id} '${th.innerText}' ${a} px over ${b} px`);
    }
  }
  return found;
}"""


# Scroll a table (its element id) to its right end: where its first two columns' header and
# first cells were and are now, and whether there was anywhere to scroll.
SCROLL = """async id => {
  const table = document.getElementById(id);
  const viewport = table.querySelector('.virtual-table-viewport');
  const cells = [...table.querySelectorAll(`th[data-heading="0"], th[data-heading="1"],
    [role=row][data-index="0"] [data-col="0"], [role=row][data-index="0"] [data-col="1"]`)];
  const before = cells.map(c => Math.round(c.getBoundingClientRect().left));
  viewport.scrollLeft = viewport.scrollWidth;
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  const after = cells.map(c => Math.round(c.getBoundingClientRect().left));
  return {scrolls: viewport.scrollLeft > 0, before, after};
}"""


def board_problems(page, width: int) -> list[str]:
    """At 1280 px the leaderboard fits; narrower, it scrolls with rank and skill pinned."""
    moved = page.evaluate(SCROLL, "leaderboard-table")
    if width >= 1280:
        return ["the leaderboard at 1280 px scrolls sideways"] if moved["scrolls"] else []
    if not moved["scrolls"]:
        return [f"the leaderboard at {width} px does not scroll sideways: nothing to pin"]
    if moved["before"] != moved["after"]:
        return [f"the leaderboard's rank and skill moved as it scrolled at {width} px: "
                f"{moved['before']} -> {moved['after']}"]
    return []


def broken_words(page, view: str, width: int) -> list[str]:
    """Header words split across lines or reaching past their cell, or none to look at."""
    words = page.evaluate(HEADER_WORDS)
    assert words, f"no visible table header on {view} at {width} px"
    return [f"{view} at {width} px: {w['table']} '{w['word']}' "
            + (f"on {w['lines']} lines" if w["lines"] > 1 else f"{w['past']:.0f} px past its cell")
            for w in words if w["lines"] > 1 or w["past"] > 1]


def settle(page) -> None:
    """Wait until the header table's column widths stop changing (Gradio sizes them after
    the first paint, then again as rows arrive)."""
    page.wait_for_function(
        """() => { const now = [...document.querySelectorAll('.hs-table th')]
              .map(th => th.getBoundingClientRect().width).join();
            const same = now === window.__hsWidths; window.__hsWidths = now;
            return same; }""", polling=250)


def views(page, url: str):
    """Open each view in turn and yield its name once its tables have rows (or headers)."""
    page.goto(url)
    wait_for_rows(page, "leaderboard-table", "text.includes('hubskills/')")
    wait_for_rows(page, "model-view-table", "text.includes('hubskills/')")
    page.get_by_text("Pending submissions (unreviewed)").click()
    page.locator("#pending-table th").first.wait_for()
    yield "the leaderboard"
    page.goto(f"{url}?skill=hubskills/agent-skill-md")
    wait_for_rows(page, "skill-results", "text.includes('hubskills/agent-skill-md')")
    page.locator("#skill-files").get_by_text("SKILL.md", exact=True).first.wait_for()
    yield "a skill page"
    page.goto(f"{url}work/?tab=evaluate")  # the workbench's page (`space.workbench`)
    page.locator("#eval-summary th").first.wait_for()
    yield "the Evaluate tab"


def looked_at(url: str, views: Callable[[Any, str], Iterator[str]], widths: tuple[int, ...],
              tmp_path: Path, **launch: Any) -> Iterator[tuple[Any, str, int]]:
    """Each of ``views(page, url)`` at each width in chromium (``launch``: more of its launch
    options), settled and screenshot (full page) into ``tmp_path``: the page, the view's name
    and the width."""
    with chromium(**launch) as browser:
        for width in widths:
            page = new_page(browser, width, 900)
            for view in views(page, url):
                settle(page)
                page.screenshot(path=str(tmp_path / f"{width}-{view.split()[-1]}.png"),
                                full_page=True)
                yield page, view, width
            page.close()


def table_problems(page, view: str, width: int) -> list[str]:
    """Header words broken (`broken_words`) and headers wider than their body column."""
    return broken_words(page, view, width) + [f"{view} at {width} px: {column} (header over body)"
                                              for column in page.evaluate(MISALIGNED)]


def test_table_headers_wrap_only_between_words(space_url, tmp_path):  # noqa: F811
    require_browser()
    broken: list[str] = []
    for page, view, width in looked_at(space_url, views, WIDTHS, tmp_path):
        broken += table_problems(page, view, width)
        if view == "the leaderboard":
            broken += board_problems(page, width)
    assert not broken, "\n".join(broken)
