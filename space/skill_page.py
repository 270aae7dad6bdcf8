"""The Skill tab: one skill's SKILL.md, files, versions, results, history, scan and pull command.

Opened by picking a skill, by clicking a skill on the leaderboard, or by URL (`?skill=ns/name`,
handled in `space.ui`). A page is built once per skill, version and version of the data, then
served from memory (`SpaceState.view`).
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Sequence
from dataclasses import dataclass

import gradio as gr

from registry import (
    HubskillsError,
    SkillNotFound,
    check_repo_id,
)

from .cache import wire_plot, wire_table
from .columns import (
    BOARD_COLUMNS,
    FILE_COLUMNS,
    TRIGGER_WIDTHS,
    VERSION_COLUMNS,
    WIDTHS,
    datatypes,
)
from .leaderboard_tab import READ_LIMIT
from .leaderboard_view import TRIGGER_COLUMNS, VERDICT_COLORS
from .messages import error_markdown, warn
from .review_tab import people_line
from .skill_data import skill_page
from .state import SpaceState

EMPTY_NOTE = "Pick a skill above, or click one on the leaderboard."
TRIGGER_NOTE = ("Trigger evals: does the agent open this skill, listed among others? Recall on "
                "queries that should open it, false triggers on those that should not (Wilson "
                "95% intervals over queries; not ranked, no lift)")
HISTORY_NOTE = ("Each bar is a version's point lift, coloured by its verdict: only a green bar "
                "(*helps*) is a lift the evaluation is sure of, its whole 95% interval above "
                "zero. A grey or red one is not, however tall: its interval is under it.")
BARS = gr.BarPlot(render=False)  # turns the history into what the browser is sent


@dataclass
class SkillTab:
    """The components other parts of the UI wire to."""

    picker: gr.Dropdown
    version: gr.Dropdown
    outputs: list[gr.components.Component]


def render(state: SpaceState, repo: str | None, version: str | None = None) -> tuple:
    """Every output of the page for `repo` at `version` (built once per version of the data);
    errors become a readable header."""
    repo, version = (repo or "").strip(), version or None
    return state.view("skill", (repo, version), lambda: _render(state, repo, version))


def _render(state: SpaceState, repo: str, version: str | None) -> tuple:
    if not repo:
        return (gr.Dropdown(choices=[], value=None), EMPTY_NOTE, "", "", None, None, None,
                None, "", gr.Dataframe(visible=False), "", gr.Markdown("", visible=False))
    try:
        check_repo_id(repo)
    except HubskillsError:  # a visitor's `?skill=` that is no id: nothing of it runs further
        return _not_found(state, repo)
    try:
        page = skill_page(state, repo, version)
    except SkillNotFound:  # said in the visitor's words: the store's own names its folder
        return _not_found(state, repo)
    except HubskillsError as err:
        warn(err)
        return (gr.Dropdown(choices=[], value=None), error_markdown(err), "", "", None, None,
                None, None, "", gr.Dataframe(visible=False), "", gr.Markdown("", visible=False))
    return (gr.Dropdown(choices=page.versions, value=page.version), page.header, page.body,
            page.raw, wire_table(page.files), wire_table(page.version_table),
            wire_table(page.results), wire_plot(BARS, page.history), page.findings,
            gr.Dataframe(wire_table(page.triggers), visible=not page.triggers.empty),
            page.pull_command, gr.Markdown(page.claims, visible=bool(page.claims)))


def _not_found(state: SpaceState, repo: str) -> tuple:
    return (gr.Dropdown(choices=[], value=None), not_on_board(repo, state.skill_ids()), "", "",
            None, None, None, None, "", gr.Dataframe(visible=False), "",
            gr.Markdown("", visible=False))


def not_on_board(repo: str, known: Sequence[str] = ()) -> str:
    """The page's header for a skill this registry does not have (a visitor's `?skill=`),
    naming the closest skill it has, if one is close."""
    shown = html.escape(repo[:200].replace("`", ""), quote=False)
    close = difflib.get_close_matches(repo[:200], list(known), n=1, cutoff=0.6)
    nearest = f"Did you mean `{close[0]}`? " if close else ""
    return (f"### No skill `{shown}` here\n\n{nearest}Pick a skill from the list above, or "
            "search the leaderboard by name, tag or description.")


def build(state: SpaceState) -> SkillTab:
    """Render the tab's components and wire its events."""
    with gr.Row(equal_height=True):
        # the minimum widths stack them on a phone, where side by side cut the skill's id
        picker = gr.Dropdown(state.skill_ids(), value=None, label="Skill", scale=3,
                             min_width=260, allow_custom_value=True, elem_id="skill-picker")
        version = gr.Dropdown([], label="Version", scale=1, min_width=120,
                              elem_id="skill-version")
    header = gr.Markdown(EMPTY_NOTE, elem_id="skill-header")
    pull = gr.Textbox(label="Install with one command", buttons=["copy"], interactive=False,
                      max_lines=2, elem_id="pull-command")  # one line (theme.CSS)
    with gr.Row():
        with gr.Column(scale=3):
            body = gr.Markdown(elem_id="skill-body", container=True, max_height=640)
            with gr.Accordion("Raw SKILL.md", open=False):
                raw = gr.Code(language="markdown", interactive=False, wrap_lines=True)
        with gr.Column(scale=2):
            # headers before a skill is picked (else Gradio shows "1 2 3")
            files = gr.Dataframe(label="Files", interactive=False, max_height=240,
                                 headers=list(FILE_COLUMNS), elem_id="skill-files",
                                 elem_classes="hs-table")
            versions = gr.Dataframe(label="Versions", interactive=False, max_height=200,
                                    headers=list(VERSION_COLUMNS),
                                    column_widths=["20%", "18%", "34%", "28%"],
                                    elem_id="skill-versions", elem_classes="hs-table")
            gr.Markdown("## Security scan")
            findings = gr.Markdown(elem_id="skill-findings")
    gr.Markdown("## Evaluations\nThis skill's leaderboard entries: one per version, model, "
                "mode and suite. The lift is in percentage points with its paired 95% interval; "
                "*helps* means the whole interval is above zero and the exact test agrees.",
                elem_classes="hs-note")
    results = gr.Dataframe(interactive=False, max_height=260, elem_id="skill-results",
                           headers=list(BOARD_COLUMNS), datatype=datatypes(BOARD_COLUMNS),
                           column_widths=list(WIDTHS), wrap=True, elem_classes="hs-table")
    people = gr.Markdown(elem_id="skill-people", elem_classes="hs-note")  # beside, not in
    # coloured by verdict, not by model (labels name it, where several): a bar is the point lift
    # only, and a tall one whose interval reaches zero looked better than every *helps*;
    # its label is long for a phone's narrow bars: slanted, labels do not overlap
    history = gr.BarPlot(x="point", y="lift_points", color="verdict", color_map=VERDICT_COLORS,
                         x_title="version, lift [95% CI]", x_label_angle=-20,
                         y_title="lift (percentage points)", title="Lift over versions", height=300,
                         tooltip=["version", "model", "date", "lift_points", "lift_ci",
                                  "baseline", "with_skill", "verdict"],
                         elem_id="skill-history")
    gr.Markdown(HISTORY_NOTE, elem_id="skill-history-note", elem_classes="hs-note")
    triggers = gr.Dataframe(label=TRIGGER_NOTE, interactive=False, max_height=320, wrap=True,
                            column_widths=TRIGGER_WIDTHS, datatype=datatypes(TRIGGER_COLUMNS),
                            visible=False,
                            elem_id="skill-triggers", elem_classes="hs-table")
    claims = gr.Markdown(visible=False, elem_id="skill-claims", container=True)
    outputs = [version, header, body, raw, files, versions, results, history, findings,
               triggers, pull, claims]
    tab = SkillTab(picker, version, outputs)
    _wire(state, tab)
    picker.change(lambda repo: people_line(state, repo), picker, people,
                  api_name="skill_people", concurrency_limit=READ_LIMIT,
                  concurrency_id="skill_people", show_progress="hidden")
    return tab


def _wire(state: SpaceState, tab: SkillTab) -> None:
    def open_skill(repo: str | None):
        return render(state, repo)

    def open_version(repo: str | None, version: str | None):
        return render(state, repo, version)

    tab.picker.change(open_skill, tab.picker, tab.outputs, api_name="skill_page",
                      concurrency_limit=READ_LIMIT, concurrency_id="skill_page")
    tab.version.input(open_version, [tab.picker, tab.version], tab.outputs,
                      api_name="skill_version", concurrency_limit=READ_LIMIT,
                      concurrency_id="skill_page")
