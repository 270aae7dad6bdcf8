"""The Space: header, four tabs, page-load wiring (`?skill=ns/name`), queue and launch."""

from __future__ import annotations

import os
from typing import Any

import gradio as gr

from registry import (
    Settings,
    SkillStore,
    scrub_logs,
)

from . import evaluate_tab, generate_tab, leaderboard_tab, skill_page
from .keys import scrub_responses
from .leaderboard_view import skill_from_link
from .messages import friendly
from .state import SpaceState
from .theme import CSS, TITLE, header_html, theme

DEFAULT_CONCURRENCY = 4
MAX_QUEUE = 64
FOOTER = ("Install skills from your terminal: `pip install hubskills` then "
          "`hubskills pull ns/name@vX.Y.Z` · Evaluate and publish your own: "
          "`hubskills eval SKILL --push`, `hubskills publish SKILL`.")


def build_demo(settings: Settings | None = None, *, store: SkillStore | None = None,
               on_space: bool | None = None) -> gr.Blocks:
    """Build the Space's Blocks on the configured store (local by default).

    On a Space (`on_space`; by default, whether Spaces set `SPACE_ID`) the server's own model
    keys are not lent to visitors unless `HUBSKILLS_SPACE_LEND_KEYS=1`, and writing (push,
    publish) needs the visitor's Hugging Face sign-in (see `state`). Every handler's response
    and every log record is scrubbed of secrets.
    """
    scrub_logs()
    state = SpaceState(settings, store, on_space=on_space)
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        header = gr.HTML(header_html(), elem_id="hs-header")
        with gr.Tabs(selected="leaderboard", elem_id="hs-tabs") as tabs:
            with gr.Tab("🏆 Leaderboard", id="leaderboard", elem_id="tab-leaderboard"):
                board = leaderboard_tab.build(state)
            with gr.Tab("📄 Skill", id="skill", elem_id="tab-skill"):
                page = skill_page.build(state)
            with gr.Tab("🧪 Evaluate", id="evaluate", elem_id="tab-evaluate"):
                ev = evaluate_tab.build(state)
            with gr.Tab("✨ Generate", id="generate", elem_id="tab-generate"):
                published = generate_tab.build(state, evaluate_tab.model_refs(state))
        gr.Markdown(FOOTER, elem_classes="hs-note")
        _wire(demo, state, header, tabs, board, page, ev.skill, [ev.push_event, published])
    scrub_responses(demo)
    demo.hubskills_state = state  # type: ignore[attr-defined]  # for tests and benchmarks
    return demo


def _wire(demo: gr.Blocks, state: SpaceState, header: gr.HTML, tabs: gr.Tabs,
          board: leaderboard_tab.LeaderboardTab, page: skill_page.SkillTab,
          eval_skill: gr.Dropdown, writes: list[gr.events.Dependency]) -> None:
    """Page load (with `?skill=`), row clicks that open a skill, refresh after writes."""
    filters = [board.query, board.model, board.tag, board.verdict]
    refreshed = [header, board.table, board.scatter, board.summary, board.model, board.tag,
                 board.view_model, page.picker, eval_skill]

    @friendly
    def refresh(query: str, model: str, tag: str, verdict: str) -> tuple:
        table, scatter, summary = leaderboard_tab.leaderboard(state, query, model, tag, verdict)
        models, tags, view_model = leaderboard_tab.filter_choices(state)
        skills = state.skill_ids()
        return (header_html(state.counts()), table, scatter, summary, models, tags, view_model,
                gr.Dropdown(choices=skills), gr.Dropdown(choices=skills))

    @friendly
    def on_load(query: str, model: str, tag: str, verdict: str, request: gr.Request) -> tuple:
        wanted = (request.query_params.get("skill") or "").strip() if request else ""
        opened = gr.Tabs(selected="skill") if wanted else gr.Tabs()
        values = refresh(query, model, tag, verdict)
        skills = state.skill_ids()
        picker = gr.Dropdown(choices=skills, value=wanted) if wanted else values[7]
        return (*values[:7], picker, values[8], opened)

    def open_from_table(evt: gr.SelectData) -> tuple[Any, Any]:
        row = evt.row_value or []
        repo = next((r for r in map(skill_from_link, map(str, row)) if r), None)
        if not repo:
            return gr.Dropdown(), gr.Tabs()
        return gr.Dropdown(value=repo), gr.Tabs(selected="skill")

    demo.load(on_load, filters, [*refreshed, tabs], api_name="page_load")
    for table in (board.table, board.model_table):
        table.select(open_from_table, None, [page.picker, tabs], api_visibility="private")
    for write in writes:
        write.then(refresh, filters, refreshed, api_visibility="private")


def launch(demo: gr.Blocks | None = None, *, server_name: str | None = None,
           server_port: int | None = None, **kwargs: Any) -> Any:
    """Queue the Space's events (bounded concurrency) and serve it.

    `server_name` defaults to `GRADIO_SERVER_NAME` or 127.0.0.1; `server_port` to Gradio's
    (`GRADIO_SERVER_PORT`, else 7860). The run history is off: it would keep typed inputs,
    API keys included, in the browser.
    """
    demo = demo or build_demo()
    demo.queue(default_concurrency_limit=DEFAULT_CONCURRENCY, max_size=MAX_QUEUE)
    return demo.launch(
        server_name=server_name or os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1",
        server_port=server_port, theme=theme(), css=CSS, footer_links=["api"],
        run_history=False, **kwargs)
