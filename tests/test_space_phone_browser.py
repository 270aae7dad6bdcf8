"""The Space on a phone (390 × 844), in a real browser (chromium, as `test_space_browser`).

The tables of results show the lift whole and the start of the verdict without a swipe, right
after the skill (each header over its own column), with a shade on the edge where more columns
lie; the model view shows its rows rather than two and a half of them.
"""

from __future__ import annotations

import pytest
from test_space_browser import (  # noqa: F401 - `space_url` is the fixture
    chromium_page,
    require_browser,
    space_url,
    wait_for_rows,
)

pytestmark = pytest.mark.slow

PHONE = (390, 844)
FIRST = ("rank", "skill@version", "lift [95% CI]", "verdict")
# Where each header of a table lies in its scroller's visible box (no sideways scroll), and
# whether the first row's cell of that column lies under it.
COLUMNS = """id => {
  const table = document.getElementById(id);
  const viewport = table.querySelector('.virtual-table-viewport');
  const box = viewport.getBoundingClientRect();
  const row = table.querySelector('[role=row][data-index="0"]');
  const shade = getComputedStyle(table.querySelector('.table-wrap'), '::after');
  return {shade: shade.backgroundImage, scrolls: viewport.scrollWidth > viewport.clientWidth,
          columns: [...table.querySelectorAll('th[data-heading]')].map(th => {
    const head = th.getBoundingClientRect();
    const cell = row.querySelector(`[role=gridcell][data-col="${th.dataset.heading}"]`)
      .getBoundingClientRect();
    return {name: th.innerText.replace(/\\s+/g, ' ').trim(), left: head.left,
            shown: head.left >= box.left - 1 && head.right <= box.left + viewport.clientWidth + 1,
            starts: head.left < box.left + viewport.clientWidth - 20,
            aligned: Math.abs(head.left - cell.left) <= 1
                     && Math.abs(head.width - cell.width) <= 1};
  })};
}"""


def phone_problems(page, elem_id: str) -> list[str]:
    """The lift not whole in view nor the verdict begun, or either after a column that is not
    the skill's; a header not over its column; no shade on a table that scrolls sideways."""
    found = page.evaluate(COLUMNS, elem_id)
    problems = [f"{elem_id}: '{c['name']}' not over its column" for c in found["columns"]
                if not c["aligned"]]
    shown = {c["name"] for c in found["columns"] if c["shown"]}
    starts = {c["name"] for c in found["columns"] if c["starts"]}
    problems += [f"{elem_id}: the lift out of view"] if "lift [95% CI]" not in shown else []
    problems += [f"{elem_id}: the verdict out of view"] if "verdict" not in starts else []
    if found["scrolls"] and "gradient" not in found["shade"]:
        problems.append(f"{elem_id}: scrolls sideways with no shade on its edge")
    first = [c["name"] for c in sorted(found["columns"], key=lambda c: c["left"])][:4]
    if first != list(FIRST):
        problems.append(f"{elem_id}: the first columns shown are {first}")
    return problems


def test_a_phone_sees_the_lift_and_verdict_of_every_table_of_results(space_url):  # noqa: F811
    require_browser()
    with chromium_page(*PHONE) as page:
        page.goto(space_url)
        wait_for_rows(page, "leaderboard-table", "text.includes('hubskills/')")
        wait_for_rows(page, "model-view-table", "text.includes('hubskills/')")
        problems = phone_problems(page, "leaderboard-table")
        problems += phone_problems(page, "model-view-table")
        rows = page.evaluate("""() => { const v = document.querySelector(
            '#model-view-table .virtual-table-viewport');
            return [v.scrollHeight, v.clientHeight, innerHeight]; }""")
        if rows[1] < min(rows[0], 0.7 * rows[2]) - 1:
            problems.append(f"the model view shows {rows[1]} px of its {rows[0]} px of rows")
        page.goto(f"{space_url}?skill=hubskills/agent-skill-md")
        wait_for_rows(page, "skill-results", "text.includes('hubskills/agent-skill-md')")
        problems += phone_problems(page, "skill-results")
    assert not problems, "\n".join(problems)
