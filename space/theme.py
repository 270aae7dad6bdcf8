"""The Space's look: a Gradio theme, a little CSS, and the header and explainer texts.

`theme`, `css` and `head` go to `launch()` (Gradio 6 warns when they are given to `gr.Blocks`).
"""

from __future__ import annotations

from html import escape

import gradio as gr

TITLE = "hubskills · skills for coding agents, ranked by measured lift"
PITCH = ("Agent Skills for Claude Code, Codex, Cursor and friends, ranked by how much they "
         "actually help a model: paired A/B evaluations with honest intervals, not stars.")

CSS = """
.hs-header {display:flex; flex-wrap:wrap; align-items:center; justify-content:space-between;
  gap:12px; padding:18px 22px; border-radius:14px; margin-bottom:4px;
  background:linear-gradient(120deg,#eef2ff 0%,#ecfdf5 100%); border:1px solid #e0e7ff;}
.dark .hs-header {background:linear-gradient(120deg,#1e1b4b 0%,#052e16 100%);
  border-color:#312e81;}
.hs-header h1 {margin:0; font-size:1.65rem; line-height:1.2;}
.hs-header p {margin:4px 0 0 0; opacity:.85; max-width:760px;}
.hs-counts {display:flex; gap:10px;}
.hs-count {min-width:84px; text-align:center; padding:8px 12px; border-radius:10px;
  background:rgba(255,255,255,.75); border:1px solid #e5e7eb;}
.dark .hs-count {background:rgba(0,0,0,.25); border-color:#374151;}
.hs-count b {display:block; font-size:1.35rem;}
.hs-count span {font-size:.78rem; text-transform:uppercase; letter-spacing:.04em; opacity:.7;}
.hs-note {font-size:.88rem; opacity:.85;}
.hs-nav {flex-basis:100%; display:flex; flex-wrap:wrap; gap:4px 18px; font-weight:600;}
.hs-nav a {color:#3730a3; text-decoration:underline; text-underline-offset:3px;}
.dark .hs-nav a {color:#c7d2fe;}
.hs-nav a[aria-current=page] {text-decoration:none; color:inherit;}
/* A phone's first screen shows the table: a one-line header, the counts beside the title. */
@media (max-width: 640px) {
  .hs-header {padding:10px 14px; gap:6px;}
  .hs-header h1 {font-size:1.3rem;}
  .hs-header p {display:none;}
  .hs-count {min-width:0; padding:2px 6px; white-space:nowrap;}
  .hs-count span {font-size:.7rem;}
  .hs-count b {display:inline; font-size:1rem; margin-right:4px;}
  /* one line: no icons, not the page it is on; the workbench keeps only the way back (its
     tabs are right below) */
  .hs-nav {gap:2px 8px; font-size:.9rem;}
  .hs-nav a {padding:2px 4px !important;}
  .hs-nav a[aria-current=page], .hs-nav span, .hs-nav-work a + a {display:none;}
  #filter-query {flex-basis:100% !important;}
}
.hs-status p {margin:.2rem 0;}
/* The Evaluate tab's progress (answers done, the last answer, the time left) is drawn over the
   status box, which is empty while a run goes: room for its lines, or they are clipped. */
#eval-status {min-height: 4.5rem;}
.hs-table [role=gridcell], .hs-table th {font-family: var(--font) !important;
  font-variant-numeric: tabular-nums;}
.hs-table th .cell-wrap, .hs-table [role=gridcell] .cell-wrap {padding-left: 6px !important;
  padding-right: 4px !important;}
.hs-table th .header {word-break: normal !important; overflow-wrap: normal !important;
  hyphens: none;}
.gradio-container {max-width: 1480px !important; margin: 0 auto !important;
  width: 100% !important;}
/* Keyboard focus is always visible (Soft shows a faint shadow only), and text that does not
   fit a phone's width wraps instead of making a region that scrolls without a keyboard. */
.gradio-container :is(input, textarea, select, button, a, summary, [tabindex]):focus-visible
  {outline: 3px solid #4338ca !important; outline-offset: 2px !important;}
.dark .gradio-container :is(input, textarea, select, button, a, summary, [tabindex]):focus-visible
  {outline-color: #a5b4fc !important;}
/* Gradio opens markdown links in a new tab: say so, visibly (an arrow) and to screen readers. */
.gradio-container a[target=_blank]::after {content: "\\2009\\2197" / " (opens in a new tab)";}
.hs-note code, #skill-body pre, #skill-body code {white-space: pre-wrap;
  overflow-wrap: anywhere;}
/* Gradio draws inline code as an inline-flex box: one that wraps takes the whole line and
   pushes what follows it (the sentence's ".") onto a line of its own. Inline, it wraps as text. */
.gradio-container .md :not(pre) > code {display: inline !important;
  box-decoration-break: clone; -webkit-box-decoration-break: clone;}
/* The install command stays on one line: a phone broke it inside the skill's id
   ("acme/csv-" / "cleaning@v0.1.0"); one wider than its box scrolls sideways instead. */
#pull-command textarea {white-space: pre !important; overflow-wrap: normal !important;
  overflow-x: auto !important;}
/* A review's answers side by side: a code block wider than its column scrolls sideways in it
   (one pushed Answer B past the page's edge, cut off). */
#review-a, #review-b, #review-prompt {min-width: 0; max-width: 100%;}
:is(#review-a, #review-b, #review-prompt) pre {overflow-x: auto; max-width: 100%;}
.hs-error {border-left:4px solid #dc2626; padding:6px 12px; background:rgba(220,38,38,.06);
  border-radius:6px;}
"""

EXPLAINER = """
**How to read this table.** Each row is one skill version evaluated on one model, in one mode,
over one test suite: the same cases are answered *without* the skill (baseline) and *with* it,
and each case is graded by deterministic checks. **Lift** is the difference in pass rate, in
percentage points, with a paired 95% score interval over cases (one that never collapses to a
point, however few cases vary); **p** is the exact sign test on the
cases that changed. The **verdict** is *helps* only when the whole interval is above zero *and*
the exact test agrees, *hurts* the same below zero, *no detectable effect* otherwise (more cases
narrow the interval). Fewer than 10 cases is *too few cases*; a verdict that would not hold
with every errored case counted against it is *inconclusive*. **+tokens** is what the skill
adds to each prompt; **cost** is the with-skill arm's spend ("unknown" when a price is
unknown, never a fake $0). Rows are ranked by the interval's lower bound; rows marked `-` are
unranked (too few cases, errors, a subset or partial run, or a skill not in the registry).
"""


def theme() -> gr.themes.Base:
    """A soft indigo/emerald theme with system fonts (no web font: the Space works offline).

    Soft's own text colours are too faint to read (WCAG AA wants 4.5:1 for text): labels
    indigo-500 on indigo-100 (3.6:1), links emerald-600 (3.6-3.8:1), hints slate-400 (2.6:1),
    white on an indigo-500 button (4.5:1 less a hair). Each is one or two steps darker here
    (`tests/test_space_a11y_browser.py` runs axe-core over every tab).
    """
    return gr.themes.Soft(
        primary_hue="indigo", secondary_hue="emerald", neutral_hue="slate",
        font=["ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "Roboto", "sans-serif"],
        font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"],
    ).set(
        block_label_text_color="*primary_700", block_title_text_color="*primary_700",  # 6.6:1
        body_text_color_subdued="*neutral_600",  # hints and info text: 7.6:1
        color_accent="*primary_600",  # the selected tab, upload prompts: 6:1
        link_text_color="*secondary_700", link_text_color_hover="*secondary_800",  # 5.2:1
        link_text_color_visited="*secondary_800", link_text_color_active="*secondary_800",
        button_primary_background_fill="*primary_600",  # white on it: 6.3:1
        button_primary_background_fill_hover="*primary_700",
        checkbox_label_background_fill_selected="*primary_600",  # a picked radio: 6.3:1
    )


# The Space's two pages: the leaderboard's at `/`, the workbench's at `/work/` (`workbench`);
# links relative to each, so a Space served under any root or proxy path keeps them.
ICONS = {"Leaderboard": "🏆", "Evaluate": "🧪", "Generate": "✨", "Review": "👀"}
PAGES = {"board": (("Leaderboard", "./"), ("Evaluate", "work/?tab=evaluate"),
                   ("Generate", "work/?tab=generate"), ("Review", "work/?tab=review")),
         "work": (("Leaderboard", "../"), ("Evaluate", "?tab=evaluate"),
                  ("Generate", "?tab=generate"), ("Review", "?tab=review"))}


def header_html(counts: dict[str, int] | None = None, page: str = "board") -> str:
    """The banner: name, one-line pitch, the links between the two pages and, on the
    leaderboard's (`page="board"`), the skill/run/model counts."""
    counts = counts or {}
    chips = "".join(
        f'<div class="hs-count"><b>{counts.get(key, "–")}</b>'
        f'<span>{escape(label if counts.get(key) != 1 else label[:-1])}</span></div>'
        for key, label in (("skills", "skills"), ("runs", "eval runs"), ("models", "models")))
    current = ' aria-current="page"'
    links = " ".join(
        f'<a href="{href}"{current if page == "board" and k == 0 else ""}>'
        f'<span aria-hidden="true">{ICONS[label]} </span>{escape(label)}</a>'
        for k, (label, href) in enumerate(PAGES[page]))
    return (
        '<div class="hs-header"><div><h1>🧰 hubskills</h1>'
        f"<p>{escape(PITCH)}</p></div>"
        + (f'<div class="hs-counts">{chips}</div>' if page == "board" else "")
        + f'<nav class="hs-nav hs-nav-{page}" aria-label="Pages">{links}</nav></div>'
    )
