"""The Space's workbench: the Evaluate, Generate and Review tabs, a page of their own at
`/work/` beside the leaderboard's page at `/` (issue 38).

Why a second page: Gradio builds, for every new session, the configuration of every block of
the page it arrived at (~0.06 ms a block), and returns an updated component as a new one in
that session. These three tabs are 111 of the 182 blocks the Space had in one page: 100
visitors arriving at once to read the leaderboard paid ~6 ms of server CPU each for forms most
of them never open. On their own page they cost only the visitors who work there.

Their API endpoints (`/evaluate`, `/estimate_evaluation`, `/stop_evaluation`, `/push_results`,
`/generate`, `/publish`, `/review_*`) are this page's: `gradio_client.Client(SPACE + "/work/")`.
The page is mounted on the leaderboard's app when it starts (`attach`, a lifespan, as `/mcp` and
the cached page are); the tab to open is `?tab=evaluate|generate|review`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import gradio as gr

from . import evaluate_actions, evaluate_tab, generate_tab, review_tab
from .keys import scrub_responses
from .messages import friendly
from .state import SpaceState
from .theme import TITLE, header_html

PATH = "/work"  # where the page is served, beside the leaderboard's `/`
TABS = ("evaluate", "generate", "review")  # the `?tab=` values, the first the default


def build(state: SpaceState) -> gr.Blocks:
    """The workbench's Blocks on `state` (shared with the leaderboard's page)."""
    built_with = state.snapshot().skills_token  # the skill list in the page's config
    with gr.Blocks(title=f"{TITLE}: workbench", analytics_enabled=False) as work:
        gr.HTML(header_html(page="work"), elem_id="hs-header")
        landed = gr.State(None)  # the tab `?tab=` opened when not the first: it fills itself
        with gr.Tabs(selected=TABS[0], elem_id="hs-tabs") as tabs:
            with gr.Tab("🧪 Evaluate", id="evaluate", elem_id="tab-evaluate") as evaluate:
                ev = evaluate_tab.build(state, [evaluate.select, work.load])
            with gr.Tab("✨ Generate", id="generate", elem_id="tab-generate"):
                generate_tab.build(state, evaluate_actions.model_refs(state))
            with gr.Tab("👀 Review", id="review", elem_id="tab-review"):
                review_tab.build(state, also=[landed.change])

        @friendly
        def on_load(request: gr.Request) -> tuple[gr.Tabs, gr.Dropdown, str | None]:
            wanted = (request.query_params.get("tab") or "") if request else ""
            picker = picker_update(state, built_with)
            if wanted not in TABS[1:]:
                return gr.Tabs(), picker, None
            return gr.Tabs(selected=wanted), picker, wanted

        work.load(on_load, None, [tabs, ev.skill, landed], api_visibility="private")
        work.unload(ev.on_leave)  # a closed tab stops its evaluations (`evaluate_tab`)
    scrub_responses(work)
    return work


def picker_update(state: SpaceState, built_with: str, **value: Any) -> gr.Dropdown:
    """A skill picker's update: new choices only when the skill list changed since the page
    was built with `built_with` (10,000 skills are a megabyte per visitor); `value`:
    gr.Dropdown's, when given (an update sets only the arguments passed)."""
    snapshot = state.snapshot()
    if snapshot.skills_token == built_with:
        return gr.Dropdown(**value)
    return gr.Dropdown(choices=snapshot.skill_ids, **value)


def attach(demo: gr.Blocks, launch_kwargs: dict[str, Any], *, sessions: int,
           threads: int, **mount: Any) -> None:
    """Serve `demo.hubskills_workbench` at `PATH` once the leaderboard's app starts: wraps the
    lifespan in `launch_kwargs["app_kwargs"]` (any other still runs). `sessions` and `threads`:
    what `launch` gives the leaderboard's page; `mount`: `gr.mount_gradio_app`'s look (theme,
    css, footer links)."""
    work: gr.Blocks | None = getattr(demo, "hubskills_workbench", None)
    if work is None:
        return
    app_kwargs = dict(launch_kwargs.get("app_kwargs") or {})
    inner: Callable[[Any], Any] | None = app_kwargs.get("lifespan")
    work.state_session_capacity, work.max_threads = sessions, threads

    @contextlib.asynccontextmanager
    async def run(app: Any) -> AsyncIterator[None]:
        # rendered in the browser, as the leaderboard's page is (page_cache): no second node
        # server for a page of forms
        gr.mount_gradio_app(app, work, path=PATH, ssr_mode=False, **mount)
        mounted = app.routes[-1].app  # the workbench's own app, mounted last
        async with mounted.router.lifespan_context(mounted):
            work.run_startup_events()  # its queue: what a mounted app's start-up runs
            await work.run_extra_startup_events()
            try:
                if inner is None:
                    yield
                else:
                    async with inner(app):
                        yield
            finally:
                work.close(verbose=False)

    app_kwargs["lifespan"] = run
    launch_kwargs["app_kwargs"] = app_kwargs


def url(base: str, tab: str | None = None) -> str:
    """The workbench's page of a Space served at `base` (its API clients' URL), opened at
    `tab` when given."""
    return f"{base.rstrip('/')}{PATH}/" + (f"?tab={tab}" if tab else "")
