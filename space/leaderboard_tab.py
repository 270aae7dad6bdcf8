"""The Leaderboard tab: skills × models ranked by lift, filters, a scatter plot, a model view."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import pandas as pd

from .leaderboard_view import (
    ALL,
    VERDICT_COLORS,
    VERDICTS,
    leaderboard_view,
    model_choices,
    model_table,
    tag_choices,
)
from .messages import friendly
from .state import SpaceState
from .theme import EXPLAINER

DATATYPES = ["str", "markdown", "str", "str", "str", "str", "str", "str", "str", "str", "str",
             "str", "str"]
WIDTHS = ["4%", "16%", "11%", "6.5%", "5.5%", "5.5%", "10%", "5%", "13%", "6%", "6.5%", "5%",
          "6%"]
MODEL_VIEW_WIDTHS = ["10%", "36%", "12%", "18%", "24%"]


@dataclass
class LeaderboardTab:
    """The components other parts of the UI wire to."""

    table: gr.Dataframe
    query: gr.Textbox
    model: gr.Dropdown
    tag: gr.Dropdown
    verdict: gr.Dropdown
    scatter: gr.ScatterPlot
    summary: gr.Markdown
    view_model: gr.Dropdown
    model_table: gr.Dataframe


def leaderboard(state: SpaceState, query: str, model: str, tag: str,
                verdict: str) -> tuple[pd.DataFrame, gr.ScatterPlot, str]:
    """The ranked table, the scatter points and a summary line for these filters."""
    view = leaderboard_view(state.frame(), state.tags(), query=query or "", model=model,
                            tag=tag, verdict=verdict)
    return view.table, gr.ScatterPlot(view.scatter, x_lim=view.x_lim), view.summary


def filter_choices(state: SpaceState) -> tuple[gr.Dropdown, gr.Dropdown, gr.Dropdown]:
    """Fresh choices for the model and tag filters and the model view's picker."""
    models, tags = model_choices(state.frame()), tag_choices(state.tags())
    first = models[1] if len(models) > 1 else None
    return (gr.Dropdown(choices=models), gr.Dropdown(choices=tags),
            gr.Dropdown(choices=models[1:], value=first))


def _filters() -> tuple[gr.Textbox, gr.Dropdown, gr.Dropdown, gr.Dropdown]:
    with gr.Row(equal_height=True):
        query = gr.Textbox(label="Search skills", placeholder="e.g. cuda, hub, skill-md "
                           "(press Enter)", scale=3, max_lines=1, elem_id="filter-query")
        model = gr.Dropdown([ALL], value=ALL, label="Model", scale=2, allow_custom_value=True,
                            elem_id="filter-model")
        tag = gr.Dropdown([ALL], value=ALL, label="Tag", scale=1, allow_custom_value=True,
                          elem_id="filter-tag")
        verdict = gr.Dropdown([ALL, *VERDICTS], value=ALL, label="Verdict", scale=1,
                              elem_id="filter-verdict")
    return query, model, tag, verdict


def build(state: SpaceState) -> LeaderboardTab:
    """Render the tab's components and wire its events."""
    gr.Markdown(EXPLAINER, elem_classes="hs-note")
    query, model, tag, verdict = _filters()
    summary = gr.Markdown()
    table = gr.Dataframe(label="Leaderboard (click a row to open the skill's page)",
                         datatype=DATATYPES, interactive=False, wrap=True,
                         show_search="filter", pinned_columns=2, max_height=560,
                         column_widths=WIDTHS, buttons=["fullscreen", "copy"],
                         elem_id="leaderboard-table", elem_classes="hs-table")
    with gr.Row():
        scatter = gr.ScatterPlot(
            x="token_overhead", y="lift_points", color="verdict", color_map=VERDICT_COLORS,
            x_title="tokens the skill adds per prompt", y_title="lift (percentage points)",
            title="Lift vs. token overhead", tooltip=["skill", "model", "lift_points",
                                                      "lift_ci", "token_overhead"],
            x_axis_format=",.0f", y_lim=[-100, 100], height=380, scale=1,
            elem_id="lift-scatter")
        with gr.Column(scale=1):
            gr.Markdown("### Model view\nPick a model to see which skills help it most.")
            view_model = gr.Dropdown([], label="Model", allow_custom_value=True,
                                     elem_id="model-view-picker")
            per_model = gr.Dataframe(interactive=False, max_height=300, wrap=True,
                                     datatype=["str", "markdown", "str", "str", "str"],
                                     column_widths=MODEL_VIEW_WIDTHS,
                                     elem_id="model-view-table", elem_classes="hs-table")
    tab = LeaderboardTab(table, query, model, tag, verdict, scatter, summary, view_model,
                         per_model)
    _wire(state, tab)
    return tab


def _wire(state: SpaceState, tab: LeaderboardTab) -> None:
    inputs = [tab.query, tab.model, tab.tag, tab.verdict]
    outputs = [tab.table, tab.scatter, tab.summary]

    @friendly
    def refresh(query: str, model: str, tag: str, verdict: str):
        return leaderboard(state, query, model, tag, verdict)

    @friendly
    def per_model(model: str) -> pd.DataFrame:
        return model_table(state.frame(), model)

    gr.on([tab.query.submit, tab.model.change, tab.tag.change, tab.verdict.change],
          refresh, inputs, outputs, api_name="leaderboard", concurrency_limit=8,
          show_progress="minimal")
    tab.view_model.change(per_model, tab.view_model, tab.model_table, api_name="model_view",
                          concurrency_limit=8, show_progress="minimal")
