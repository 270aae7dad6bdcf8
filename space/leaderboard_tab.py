"""The Leaderboard tab: skills × models ranked by lift, filters, a scatter plot, a model view.

Each view is built once per filter combination and version of the data, then served from
memory (`SpaceState.view`); the summary line ends with how fresh the data are.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import gradio as gr

from registry import (
    MIN_SPOT_K,
    Board,
    code_span,
    forged_claims,
    pending_badges,
    pending_view,
    safe_html,
)

from .cache import wire_plot, wire_table
from .columns import (
    BOARD_COLUMNS,
    MODEL_VIEW_WIDTHS,
    PENDING_COLUMNS,
    PENDING_WIDTHS,
    PINNED,
    SUBMITTED_BY,
    WIDTHS,
    datatypes,
)
from .keys import key_inputs, request_settings
from .leaderboard_view import (
    ALL,
    MODEL_VIEW_COLUMNS,
    VERDICT_COLORS,
    VERDICTS,
    leaderboard_view,
    model_choices,
    model_table,
    tag_choices,
)
from .messages import counted, error_markdown, friendly, warn
from .pending_replay import PendingReplays
from .snapshot import Snapshot
from .spot_check import DEFAULT_K, owner_token, run_spot_check, spot_targets
from .state import SpaceState
from .theme import EXPLAINER

READ_LIMIT = 16  # reads at once per read event: cheap when cached, and a miss never blocks all
POINTS = gr.ScatterPlot(render=False)  # turns scatter points into what the browser is sent
# What one response carries: Gradio walks every cell of a response twice (files, root URL)
# and serializes it, so its size is what a burst of visitors pays per visitor
# (bench/space_load.py at 10k x 10: 500 rows and 2,000 points cost 41 ms of server CPU per
# call; 100 rows and 500 points, 12 ms, two thirds of it in Gradio's walks; 100 rows and the
# top 250 points, sent without postprocessing, 8 ms).
TABLE_ROWS = 100
SCATTER_POINTS = 250


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
                verdict: str) -> tuple[dict, gr.ScatterPlot, str]:
    """The ranked table, the scatter points and a summary line for these filters (built once
    per filters and version of the data), then the data's freshness."""
    filters = ((query or "").strip(), model or ALL, tag or ALL, verdict or ALL)
    table, scatter, summary = state.view("leaderboard", filters,
                                         lambda: _leaderboard(state, *filters))
    return table, scatter, f"{summary}\n\n{state.data.note()}"


def _leaderboard(state: SpaceState, query: str, model: str, tag: str,
                 verdict: str) -> tuple[dict, gr.ScatterPlot, str]:
    view = leaderboard_view(state.board(), state.tags(), query=query, model=model,
                            tag=tag, verdict=verdict, limit=TABLE_ROWS)
    points = wire_plot(POINTS, view.scatter.head(SCATTER_POINTS))  # ranked: the top ones
    scatter = gr.ScatterPlot(points, x_lim=list(view.x_lim), render=False)
    return wire_table(view.table), scatter, view.summary


def per_model(state: SpaceState, model: str | None) -> dict:
    """Which skills help `model` most (built once per model and version of the data)."""
    return state.view("model", model or "",
                      lambda: wire_table(model_table(state.board(), model).head(TABLE_ROWS)))


def pending(state: SpaceState, replays: PendingReplays | None = None) -> tuple[dict, str]:
    """Submissions awaiting review (open pull requests on the results dataset), ranked among
    themselves and marked unreviewed, each under its pull request's author as the Hub reports
    it; rows that claim another producer are flagged. Asked on request only, never memoised
    with the merged data: a pull request opens or merges without changing that data's
    version. With ``replays``, a review is asked of its worker (never waited on: see
    `pending_replay`) and what the last one found is listed. The note is HTML from the one
    sanitiser: it quotes the submitters."""
    replayed = ""
    if replays is not None:
        replays.request()
        replayed = replays.note()
    listed = state.store.results.pending()  # listed once, for the rows and their badges
    frame, unread = pending_view(state.store, listed=listed)  # too large: listed, not parsed
    replayed = "\n".join(
        [f"- PR #{pr.num} by {code_span(pr.author)}: {code_span(f.path)}, {f.size / 1e6:.1f} MB"
         ": not read on a page load (too large); its replay says what it holds"
         for pr, f in unread] + ([replayed] if replayed else []))
    view = leaderboard_view(Board.build(frame, badges=pending_badges(state.store, listed)),
                            state.tags(), limit=TABLE_ROWS, include_unverified=True)
    if view.table.empty:
        empty = ("No pending rows small enough to read here." if unread
                 else "No pending submissions: nothing awaits review.")
        return wire_table(view.table), safe_html(f"{empty}\n\n{replayed}" if replayed else empty)
    claims = forged_claims(frame)
    table = view.table.assign(**{SUBMITTED_BY: [_submitter(e.produced_by, claims.get(e.run_id))
                                                for e in view.entries]})
    note = ("**Unreviewed**: proposed by their authors as pull requests on the results dataset "
            "and not yet merged by its owner; the *verified* column says what a replay found. "
            + view.summary)
    if claims:
        note += (f"\n\n⚠️ {counted(len(claims), 'run')} whose rows name another producer than "
                 "the pull request's author: shown under the author.")
    return wire_table(table), safe_html(f"{note}\n\n{replayed}" if replayed else note)


def _submitter(author: str | None, claimed: list[str] | None) -> str:
    """The pull request's author, flagged when the rows claimed someone else."""
    shown = author or "unknown"
    return f"{shown} ⚠️ rows claim: {', '.join(claimed)}" if claimed else shown


def _choices(state: SpaceState) -> tuple[list[str], list[str], str | None]:
    """The model and tag filters' choices, and the model the model view opens on."""
    models, tags = state.view("choices", "filters", lambda: (
        model_choices(state.board()), tag_choices(state.tags())))
    return models, tags, models[1] if len(models) > 1 else None


def filter_choices(state: SpaceState, opened_on: str | None = None
                   ) -> tuple[gr.Dropdown, gr.Dropdown, gr.Dropdown]:
    """Fresh choices for the model and tag filters and the model view's picker. The picker's
    value is set only when it is not `opened_on` (the model it shows already): a new value
    fires its change event, one more queued call."""
    models, tags, first = _choices(state)
    picker = (gr.Dropdown(choices=models[1:]) if opened_on is not None and first == opened_on
              else gr.Dropdown(choices=models[1:], value=first))
    return gr.Dropdown(choices=models), gr.Dropdown(choices=tags), picker


def filter_lists(state: SpaceState) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The model and tag filters' choices, to compare with those a page was built with."""
    models, tags, _ = _choices(state)
    return tuple(models), tuple(tags)


def first_model_view(state: SpaceState) -> dict:
    """The model view the page opens on (its picker's first model), as page load fills it."""
    return per_model(state, _choices(state)[2])


def warm(state: SpaceState, _: Snapshot | None = None) -> None:
    """Build what every page load shows (the default view, the first model's view and the
    filter choices), so that no visitor waits for them after a change of the data."""
    leaderboard(state, "", ALL, ALL, ALL)
    per_model(state, _choices(state)[2])


def _filters(state: SpaceState) -> tuple[gr.Textbox, gr.Dropdown, gr.Dropdown, gr.Dropdown]:
    models, tags, _ = _choices(state)  # as the data stand at the build (page load: `ui`)
    with gr.Row(equal_height=True, elem_id="board-filters"):
        query = gr.Textbox(label="Search skills", placeholder="e.g. cuda, hub, skill-md "
                           "(press Enter)", scale=3, max_lines=1, elem_id="filter-query")
        # three narrow pickers share one line on a phone (min_width), so the table still
        # starts on its first screen
        model = gr.Dropdown(models, value=ALL, label="Model", scale=2, allow_custom_value=True,
                            min_width=96, elem_id="filter-model")
        tag = gr.Dropdown(tags, value=ALL, label="Tag", scale=1, allow_custom_value=True,
                          min_width=96, elem_id="filter-tag")
        verdict = gr.Dropdown([ALL, *VERDICTS], value=ALL, label="Verdict", scale=1,
                              min_width=96, elem_id="filter-verdict")
    return query, model, tag, verdict


def build(state: SpaceState) -> LeaderboardTab:
    """Render the tab's components and wire its events."""
    query, model, tag, verdict = _filters(state)
    summary = gr.Markdown()
    # named by the summary above it ("… Click a row to open its skill's page."): Gradio's label
    # beside the table's filter box was cut off on a phone
    table = gr.Dataframe(label="Leaderboard", show_label=False,
                         datatype=datatypes(BOARD_COLUMNS), interactive=False, wrap=True,
                         show_search="filter", pinned_columns=PINNED, max_height=560,
                         column_widths=list(WIDTHS), buttons=["fullscreen", "copy"],
                         elem_id="leaderboard-table", elem_classes="hs-table")
    # the table is the first screen (1280 px and a phone); how to read it, one click away
    with gr.Accordion("How to read this table", open=False, elem_id="board-explainer"):
        gr.Markdown(EXPLAINER, elem_classes="hs-note")
    with gr.Row():
        scatter = gr.ScatterPlot(
            x="token_overhead", y="lift_points", color="verdict", color_map=VERDICT_COLORS,
            x_title="tokens the skill adds per prompt", y_title="lift (percentage points)",
            title="Lift vs. token overhead", tooltip=["skill", "model", "lift_points",
                                                      "lift_ci", "token_overhead"],
            x_axis_format=",.0f", y_lim=[-100, 100], height=380, scale=1,
            elem_id="lift-scatter")
        with gr.Column(scale=1):
            gr.Markdown("## Model view\nPick a model to see which skills help it most.")
            # opens on the first model in the page (page load fills its table): were it set
            # by page load, its change would queue one more call for every arriving visitor
            models = _choices(state)[0][1:]
            view_model = gr.Dropdown(models, value=models[0] if models else None,
                                     label="Model", allow_custom_value=True,
                                     elem_id="model-view-picker")
            model_rows = gr.Dataframe(interactive=False, max_height=300, wrap=True,
                                     datatype=datatypes(MODEL_VIEW_COLUMNS),
                                     column_widths=MODEL_VIEW_WIDTHS,
                                     elem_id="model-view-table", elem_classes="hs-table")
    tab = LeaderboardTab(table, query, model, tag, verdict, scatter, summary, view_model,
                         model_rows)
    _wire(state, tab)
    replays = PendingReplays(state)
    _pending_section(state, replays)
    replays.start()
    return tab


def _pending_section(state: SpaceState, replays: PendingReplays) -> None:
    """Unreviewed submissions, apart from the ranked board and only when asked for."""
    with gr.Accordion("Pending submissions (unreviewed)", open=False, elem_id="pending"):
        show = gr.Button("Show pending submissions", size="sm", elem_id="pending-show")
        note = gr.Markdown()
        rows = gr.Dataframe(headers=list(PENDING_COLUMNS),  # not 1 2 3
                            datatype=datatypes(PENDING_COLUMNS), interactive=False, wrap=True,
                            pinned_columns=PINNED, column_widths=list(PENDING_WIDTHS),
                            elem_id="pending-table", elem_classes="hs-table")

        spot = _spot_section(state)

    @friendly
    def load(oauth: gr.OAuthToken | None = None) -> tuple:
        table, said = pending(state, replays)
        return table, said, *spot_choices(state, replays, oauth.token if oauth else None)

    show.click(load, None, [rows, note, spot.group, spot.target], api_name="pending",
               concurrency_limit=1, concurrency_id="pending", show_progress="minimal")


@dataclass
class SpotControl:
    """The owner's "Spot-check on my Jobs" control (hidden from everyone else)."""

    group: gr.Group
    target: gr.Dropdown


def spot_choices(state: SpaceState, replays: PendingReplays,
                 token: str | None) -> tuple[gr.Group, gr.Dropdown]:
    """The control shown to the results dataset's owner only, with the replayed runs they may
    spot-check (merged, and pending with a verified replay)."""
    if owner_token(state, token) is None:
        return gr.Group(visible=False), gr.Dropdown(choices=[], value=None)
    targets = spot_targets(state, replays.found)
    return gr.Group(visible=True), gr.Dropdown(
        choices=[(t.label, t.value) for t in targets],
        value=targets[0].value if targets else None)


def _spot_section(state: SpaceState) -> SpotControl:
    with gr.Group(visible=False, elem_id="spot-check") as group:
        gr.Markdown("**Spot-check on my Jobs** (you own the results dataset): re-ask K samples "
                    "per arm of a replayed run with its recorded model, as one Hugging Face "
                    "Job on your account; the badge becomes *spot-checked* or *mismatch*.",
                    elem_classes="hs-note")
        with gr.Row():
            target = gr.Dropdown([], label="Replayed run", scale=3, elem_id="spot-target")
            k = gr.Number(DEFAULT_K, label=f"K (samples per arm, {MIN_SPOT_K} or more)",
                          precision=0, minimum=MIN_SPOT_K,
                          scale=1, elem_id="spot-k")
            max_cost = gr.Number(None, label="Max cost (USD; refused above the estimate)",
                                 minimum=0, scale=1, elem_id="spot-max-cost")
        keys = key_inputs()
        start = gr.Button("Spot-check on my Jobs", size="sm", elem_id="spot-start")
        status = gr.Markdown(elem_id="spot-status")

    def launch(value: str | None, k_: float | None, cost: float | None, *typed: str,
               oauth: gr.OAuthToken | None = None) -> Iterator[str]:
        settings = request_settings(state.settings, state.lends_keys, *typed)
        try:
            yield from run_spot_check(state, value, k_, cost, settings,
                                      oauth.token if oauth else None)
        except Exception as err:  # noqa: BLE001 - shown as a readable message
            warn(err)
            yield error_markdown(err)

    start.click(launch, [target, k, max_cost, *keys.boxes], status, api_name="spot_check",
                concurrency_limit=1, concurrency_id="spot_check")
    return SpotControl(group, target)


def _wire(state: SpaceState, tab: LeaderboardTab) -> None:
    inputs = [tab.query, tab.model, tab.tag, tab.verdict]
    outputs = [tab.table, tab.scatter, tab.summary]

    @friendly
    def refresh(query: str, model: str, tag: str, verdict: str):
        return leaderboard(state, query, model, tag, verdict)

    @friendly
    def model_view(model: str) -> dict:
        return per_model(state, model)

    # Both return what the browser is sent (`wire_table`, `wire_plot`, a markdown line), so
    # Gradio's postprocessing, a walk over every cell on each response, is skipped.
    gr.on([tab.query.submit, tab.model.change, tab.tag.change, tab.verdict.change],
          refresh, inputs, outputs, api_name="leaderboard", concurrency_limit=READ_LIMIT,
          concurrency_id="leaderboard", show_progress="minimal", postprocess=False)
    tab.view_model.change(model_view, tab.view_model, tab.model_table, api_name="model_view",
                          concurrency_limit=READ_LIMIT, concurrency_id="model_view",
                          show_progress="minimal", postprocess=False)
    state.data.on_change(lambda snapshot: warm(state, snapshot))
    warm(state)  # the data the page was built on (read above for the model view's picker)
