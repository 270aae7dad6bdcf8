"""The Space read without a mouse and by assistive technology, in a real browser (chromium, as
`test_space_browser`), checked by axe-core (pinned, installed by `make axe` under .tools/axe;
never fetched at test time).

On every tab at 1280 and 390 px wide, axe finds no serious or critical violation in what the
app controls (the theme's colours, our markup, heading levels); the search box and the
dropdowns show a visible focus ring on keyboard focus; and a reader can go from the search box
to a skill page with the keyboard alone, focus landing on that page rather than the page's top.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_space_browser import (  # noqa: F401 - `space_url` is the fixture
    chromium,
    chromium_page,
    new_page,
    require_browser,
    require_installed,
    space_url,
    wait_for_rows,
)

pytestmark = pytest.mark.slow

AXE = Path(__file__).resolve().parent.parent / ".tools/axe/node_modules/axe-core/axe.min.js"
WIDTHS = (1280, 390)
TABS = ("Leaderboard", "Skill", "Evaluate", "Generate", "Review")
# the workbench's tabs (`space.workbench`, a page of its own) and what shows each is built
WORK_TABS = {"Evaluate": "#eval-run", "Generate": "#gen-run", "Review": "#review-run"}
# Nodes that Gradio renders and our theme and markup cannot reach, with why (a CSS selector the
# node matches or lies inside). Every other node of a serious or critical violation fails.
GRADIO_INTERNALS = {
    ".search-input": "the Dataframe's own filter box (show_search='filter') is named by a title "
                     "only (label-title-only): Gradio renders it without a label",
    ".empty.unpadded_box": "Gradio's empty-value placeholder (an empty plot or code box) puts "
                           "aria-label='Empty value' on a div with no role",
    ".virtual-table-viewport": "the Dataframe's own scroller: an empty table wider than a "
                               "390 px window scrolls with no focusable cell in it",
}
# An empty component's frame that scrolls only because of Gradio's placeholder in it.
EMPTY_FRAME = ".empty.unpadded_box"


def require_axe() -> None:
    require_installed(AXE, f"axe-core is not installed at {AXE} (make axe)")


def run_axe(page) -> list[dict]:
    """Serious and critical violations on the page as it is (hidden tabs are not checked),
    less the nodes inside Gradio's internals (`GRADIO_INTERNALS`)."""
    if not page.evaluate("() => !!window.axe"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate("""async ([internals, emptyFrame]) => {
      const r = await axe.run(document, {resultTypes: ['violations']});
      const gradios = el => !!el && (!!el.closest(internals) ||
        (!!el.querySelector(emptyFrame) && el.matches('.block')));
      return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
        .map(v => ({id: v.id, impact: v.impact, nodes: v.nodes
          .filter(n => !gradios(document.querySelector(n.target[0])))
          .map(n => ({target: n.target.join(' '), html: n.html.slice(0, 160),
                      summary: (n.failureSummary || '').slice(0, 240)}))}))
        .filter(v => v.nodes.length);
    }""", [", ".join(GRADIO_INTERNALS), EMPTY_FRAME])


def open_tab(page, name: str) -> None:
    """Click the tab; in a narrow window, through Gradio's overflow menu of tabs."""
    tab = page.get_by_role("tab", name=re.compile(name))
    if not tab.is_visible():
        page.locator(".overflow-menu > button").first.click()
        tab = page.locator(".overflow-dropdown button", has_text=name).first
    tab.click()
    page.wait_for_timeout(600)


def tabs(page, url: str):
    """Open each tab in turn, with data in it, and yield its name."""
    page.goto(url)
    wait_for_rows(page, "leaderboard-table", "text.includes('hubskills/')")
    yield "Leaderboard"
    page.goto(f"{url}?skill=hubskills/agent-skill-md")
    wait_for_rows(page, "skill-results", "text.includes('hubskills/agent-skill-md')")
    yield "Skill"
    for name, shown in WORK_TABS.items():  # as the header's links open them
        page.goto(f"{url}work/?tab={name.lower()}")
        page.locator(shown).first.wait_for(state="visible")
        page.wait_for_timeout(600)
        yield name


# Visible headings in order, and visible links that open a new tab without saying so.
HEADINGS = """() => [...document.querySelectorAll('h1,h2,h3,h4,h5,h6')]
  .filter(h => h.getClientRects().length).map(h => [+h.tagName[1], h.innerText.slice(0, 40)])"""
SILENT_NEW_TABS = """() => [...document.querySelectorAll('a[target=_blank]')]
  .filter(a => a.getClientRects().length)
  .filter(a => !/new tab/i.test((a.getAttribute('aria-label') || '') + a.innerText
                                + getComputedStyle(a, '::after').content))
  .map(a => a.outerHTML.slice(0, 160))"""



def skipped_levels(headings: list[list]) -> list[str]:
    """Headings more than one level below the one before them (h1 -> h3)."""
    pairs = zip(headings, headings[1:], strict=False)
    return [f"h{b} '{text}' after h{a}" for (a, _), (b, text) in pairs
            if b > a + 1]


def report(found: list[tuple[str, int, dict]]) -> str:
    lines = []
    for tab, width, v in found:
        lines.append(f"{tab} at {width} px: {v['id']} ({v['impact']}), {len(v['nodes'])} node(s)")
        lines += [f"    {n['target']}: {n['summary'][:200]!r}" for n in v["nodes"][:6]]
    return "\n".join(lines)


def test_axe_finds_no_serious_violation_on_any_tab(space_url, tmp_path):  # noqa: F811
    require_browser()
    require_axe()
    found: list[tuple[str, int, dict]] = []
    with chromium() as browser:
        for width in WIDTHS:
            page = new_page(browser, width, 900)
            for tab in tabs(page, space_url):
                page.screenshot(path=str(tmp_path / f"{width}-{tab}.png"), full_page=True)
                found += [(tab, width, v) for v in run_axe(page)]
                found += [(tab, width, {"id": "heading skips a level", "impact": "ours",
                                        "nodes": [{"target": h, "summary": ""}]})
                          for h in skipped_levels(page.evaluate(HEADINGS))]
                found += [(tab, width, {"id": "new tab unannounced", "impact": "ours",
                                        "nodes": [{"target": a, "summary": ""}]})
                          for a in page.evaluate(SILENT_NEW_TABS)]
            page.close()
    (tmp_path / "axe.json").write_text(json.dumps(found, indent=1))
    assert not found, report(found)


FOCUSABLE = {"the search box": "#filter-query textarea, #filter-query input",
             "the model filter": "#filter-model input", "the tag filter": "#filter-tag input",
             "the verdict filter": "#filter-verdict input",
             "the skill picker": "#skill-picker input"}
# The focused element's ring: an opaque outline of 2 px or more (Soft's own focus is a faint
# drop shadow, 10% black, which is no ring).
RING = """() => { const el = document.activeElement, s = getComputedStyle(el);
  return {visible: el.matches(':focus-visible'),
          outline: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2
                   && !/rgba\\(.*, 0\\)|transparent/.test(s.outlineColor),
          style: `${s.outline} / ${s.boxShadow}`}; }"""


def tab_to(page, selector: str, presses: int = 40) -> None:
    """Press Tab until the element matching `selector` has the focus, as a keyboard user."""
    for _ in range(presses):
        if page.evaluate("s => document.activeElement?.matches(s)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{selector} never took the focus in {presses} presses of Tab")


def test_the_search_box_and_dropdowns_show_where_the_focus_is(space_url):  # noqa: F811
    require_browser()
    missing = []
    with chromium_page(1280, 900) as page:
        page.goto(space_url)
        wait_for_rows(page, "leaderboard-table", "text.includes('hubskills/')")
        for name, selector in FOCUSABLE.items():
            if name == "the skill picker":
                open_tab(page, "Skill")
            tab_to(page, selector)
            ring = page.evaluate(RING)
            if not (ring["visible"] and ring["outline"]):
                missing.append(f"{name}: {ring}")
    assert not missing, "no visible focus ring on " + "; ".join(missing)


def test_a_keyboard_reaches_a_skill_page_from_the_search_box_and_keeps_its_place(
        space_url):  # noqa: F811
    """Search, Tab into the table, Enter on a skill's row: the skill page opens in the same
    tab and the focus lands on its header (it fell to the page's top), with a visible ring."""
    require_browser()
    with chromium_page(1280, 900) as page:
        page.goto(space_url)
        wait_for_rows(page, "leaderboard-table", "text.includes('hubskills/')")
        tab_to(page, FOCUSABLE["the search box"])
        page.keyboard.type("agent-skill")
        page.keyboard.press("Enter")
        wait_for_rows(page, "leaderboard-table", "text.includes('agent-skill-md')")
        tab_to(page, "#leaderboard-table [role=gridcell]")
        page.keyboard.press("ArrowRight")  # from the rank to the skill
        page.keyboard.press("Enter")
        page.wait_for_function("""() => document.activeElement.closest('#skill-header')
            && document.activeElement.innerText.includes('hubskills/agent-skill-md')""")
        ring = page.evaluate(RING)
        selected = page.get_by_role("tab", selected=True).inner_text()
        pages = len(page.context.pages)
    assert "Skill" in selected and pages == 1
    assert ring["visible"] and ring["outline"], ring
