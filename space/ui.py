"""The Space: header, the leaderboard and skill tabs, page-load wiring (`?skill=ns/name`), the
workbench's page (`workbench`: Evaluate, Generate, Review at `/work/`), queue and launch.

Capacity: reads (leaderboard, model view, skill pages, page load) are served from memory and
run up to `leaderboard_tab.READ_LIMIT` at once per event; evaluations and generations share
two slots (`model-work`) and writes have their own small limits (set where they are wired).
Past those, requests wait in Gradio's queue (up to `QUEUE_SIZE`, far above any burst of
readers) and are told their place in line every `STATUS_UPDATE_S` seconds.
"""

from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, metadata
from typing import Any

import gradio as gr

from registry import (
    Settings,
    SkillStore,
    scrub_logs,
)

from . import (
    leaderboard_tab,
    mcp_endpoint,
    page_cache,
    skill_page,
    workbench,
)
from .columns import floor_css
from .keys import scrub_responses
from .leaderboard_view import skill_from_link
from .messages import friendly
from .state import SpaceState
from .theme import CSS, TITLE, header_html, theme

DEFAULT_CONCURRENCY = 4  # events that set no limit (the refresh after a write)
QUEUE_SIZE = 5000  # waiting events of every kind: a burst waits rather than being turned away
STATUS_UPDATE_S = 1.0  # queue positions are sent on this clock, not after every event
MAX_THREADS = 96  # worker threads: at least the sum of the per-event limits
ANALYTICS_EVERY = 1000  # events between two rebuilds of Gradio's timing summary
SESSIONS = 1000  # visitors' sessions kept (least recently active dropped), ~0.1 MB each
# After a row opens a skill, the focus moves to the skill page's header: the row it was on is
# hidden with the leaderboard, and a keyboard or screen reader user was left at the page's top.
# In the browser as the page loads (no call to the server): Gradio's sign-in button returns the
# visitor to `/` with the page's query, so one pressed on the workbench (`?tab=evaluate`) goes
# back there.
# The SKILL.md box scrolls (at most 640 px): a keyboard user reaches it to scroll it (axe's
# scrollable-region-focusable), whether or not the skill has links in it; Gradio mounts a tab's
# content when it is first shown, so the box is marked whenever it appears.
ON_LOAD = ("() => { const tab = new URLSearchParams(location.search).get('tab');"
           f" if ({list(workbench.TABS)}.includes(tab))"
           " location.replace('work/' + location.search);"
           " const mark = () => { const body = document.getElementById('skill-body');"
           " if (body && body.tabIndex !== 0) { body.tabIndex = 0;"
           " body.setAttribute('role', 'region'); body.setAttribute('aria-label', 'SKILL.md'); } };"
           " new MutationObserver(mark).observe(document.body, {childList: true, subtree: true});"
           " mark();"
           " let shown = new URLSearchParams(location.search).get('skill');"
           " addEventListener('popstate', () => {"
           " const now = new URLSearchParams(location.search).get('skill');"
           " if (now !== shown) location.reload(); });"
           " const push = history.pushState.bind(history);"
           " history.pushState = (...args) => { push(...args);"
           " shown = new URLSearchParams(location.search).get('skill'); }; }")
# The address says which skill is open (`?skill=ns/name`, as page load reads it), so a skill
# page opened from a row or the picker can be shared; the leaderboard's tab takes it off. Each
# change is a history entry: Back reloads the address it returns to (the tabs are the page's
# own, which a history entry does not restore). The leaderboard's tab is selected as the page
# loads too, before page load reads `?skill=`: it takes it off only once a skill was shown.
SKILL_URL = """(repo) => {
  const url = new URL(location.href);
  if (!repo) return;
  window.hsSkillShown = true;
  if (url.searchParams.get('skill') === repo) return;
  url.searchParams.set('skill', repo);
  history.pushState({skill: repo}, '', url.pathname + '?'
                    + url.searchParams.toString().replace(/%2F/gi, '/') + url.hash);
}"""
BOARD_URL = """() => {
  const url = new URL(location.href);
  if (!window.hsSkillShown || !url.searchParams.has('skill')) return;
  url.searchParams.delete('skill');
  const query = url.searchParams.toString();
  history.pushState({}, '', url.pathname + (query ? '?' + query : '') + url.hash);
}"""
FOCUS_SKILL = """() => requestAnimationFrame(() => {
  const header = document.getElementById('skill-header');
  if (header) { header.tabIndex = -1; header.focus(); }
})"""


def footer(settings: Settings) -> str:
    """The footer: install the CLI, pull a skill, evaluate and publish your own.

    There is no release on PyPI yet, so the install names a git URL: on a Space its own
    repository (which holds the whole project), elsewhere the `Source` URL this install's
    metadata lists (`[project.urls]`), else a clone.
    """
    source = (f"{settings.hf_endpoint}/spaces/{settings.space_id}" if settings.space_id
              else _source_url())
    install = f"`pipx install git+{source}`" if source else "`pipx install .` in a clone"
    return (f"Install skills from your terminal: {install} (or `uv tool install`), then "
            "`hubskills pull ns/name@vX.Y.Z` · Evaluate and publish your own: "
            "`hubskills eval SKILL --push`, `hubskills publish SKILL`.")


def _source_url() -> str | None:
    try:
        listed = metadata("hubskills").get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    urls = dict(entry.split(",", 1) for entry in listed if "," in entry)
    return urls["Source"].strip() if "Source" in urls else None


def build_demo(settings: Settings | None = None, *, store: SkillStore | None = None,
               on_space: bool | None = None, refresh_every: float | None = None) -> gr.Blocks:
    """Build the Space's Blocks on the configured store (local by default).

    The data are loaded once here and refreshed in the background every `refresh_every`
    seconds (see `state.SpaceState`).

    On a Space (`on_space`; by default, whether Spaces set `SPACE_ID`) the server's own model
    keys are not lent to visitors unless `HUBSKILLS_SPACE_LEND_KEYS=1`, and writing (push,
    publish) needs the visitor's Hugging Face sign-in (see `state`). Every handler's response
    and every log record is scrubbed of secrets.
    """
    scrub_logs()
    state = SpaceState(settings, store, on_space=on_space, refresh_every=refresh_every)
    with gr.Blocks(title=TITLE, analytics_enabled=False) as demo:
        header = gr.HTML(header_html(), elem_id="hs-header")
        with gr.Tabs(selected="leaderboard", elem_id="hs-tabs") as tabs:
            with gr.Tab("🏆 Leaderboard", id="leaderboard", elem_id="tab-leaderboard") as first:
                board = leaderboard_tab.build(state)
            with gr.Tab("📄 Skill", id="skill", elem_id="tab-skill"):
                page = skill_page.build(state)
        gr.Markdown(footer(state.settings), elem_classes="hs-note")
        _wire(demo, state, header, tabs, board, page)
        # the address names the skill shown (`SKILL_URL`), and no skill on the leaderboard
        page.picker.change(None, page.picker, None, js=SKILL_URL, api_visibility="private")
        first.select(None, js=BOARD_URL, api_visibility="private")
    scrub_responses(demo)
    state.start_refresh()
    demo.hubskills_state = state  # for tests and benchmarks
    demo.hubskills_workbench = workbench.build(state)  # `/work/`, mounted by `launch`
    return demo


def _wire(demo: gr.Blocks, state: SpaceState, header: gr.HTML, tabs: gr.Tabs,
          board: leaderboard_tab.LeaderboardTab, page: skill_page.SkillTab) -> None:
    """Page load (with `?skill=`) and row clicks that open a skill.

    Page load sends the data only (the header's counts, the leaderboard, the model view): the
    pickers' choices are in the page as built, and Gradio rebuilds every output a handler
    updates in the arriving visitor's session (issue 38). When the visitor asked for a skill
    (`?skill=`) or the data changed since the build, page load changes `follow_up`, which
    updates the pickers (and opens the skill) in a second call; new results alone (the same
    models, tags and skills) need none. A visitor's writes happen on the workbench's page
    (`workbench`); this page shows them when next loaded."""
    filters = [board.query, board.model, board.tag, board.verdict]
    refreshed = [header, board.table, board.scatter, board.summary, board.model, board.tag,
                 board.view_model, page.picker]

    built_lists = leaderboard_tab.filter_lists(state)  # the filters' choices in the page
    built_with = state.snapshot().skills_token  # the skill lists in the page's config
    opened_on = board.view_model.value  # the model view's model in the page's config
    follow_up = gr.State(None)  # what page load leaves to a second call, if anything

    def skill_picker(**value: Any) -> gr.Dropdown:
        return workbench.picker_update(state, built_with, **value)

    @friendly
    def on_load(query: str, model: str, tag: str, verdict: str, request: gr.Request) -> tuple:
        wanted = (request.query_params.get("skill") or "").strip() if request else ""
        table, scatter, summary = leaderboard_tab.leaderboard(state, query, model, tag, verdict)
        changed = (state.snapshot().skills_token != built_with
                   or leaderboard_tab.filter_lists(state) != built_lists)
        later = (wanted, changed) if wanted or changed else None
        return (header_html(state.counts()), table, scatter, summary,
                leaderboard_tab.first_model_view(state), later)

    @friendly
    def follow(later: tuple[str, bool] | None) -> tuple:
        wanted = later[0] if later else ""
        models, tags, view_model = leaderboard_tab.filter_choices(state, opened_on)
        return (models, tags, view_model, skill_picker(value=wanted) if wanted
                else skill_picker(), gr.Tabs(selected="skill") if wanted else gr.Tabs())

    def open_from_table(evt: gr.SelectData) -> tuple[Any, Any]:
        row = evt.row_value or []
        repo = next((r for r in map(skill_from_link, map(str, row)) if r), None)
        if not repo:
            return gr.Dropdown(), gr.Tabs()
        return gr.Dropdown(value=repo), gr.Tabs(selected="skill")

    # what page load returns is what the browser is sent, as `/leaderboard` and `/model_view`
    # return it: Gradio's postprocessing (a walk over every cell) is skipped, 0.8 ms an arrival
    demo.load(None, js=ON_LOAD, api_visibility="private")
    demo.load(on_load, filters, [*refreshed[:4], board.model_table, follow_up],
              api_name="page_load", concurrency_limit=leaderboard_tab.READ_LIMIT,
              concurrency_id="page_load", postprocess=False)
    follow_up.change(follow, follow_up, [*refreshed[4:8], tabs], api_visibility="private",
                     concurrency_limit=leaderboard_tab.READ_LIMIT, concurrency_id="page_load")
    for table in (board.table, board.model_table):
        table.select(open_from_table, None, [page.picker, tabs], api_visibility="private"
                     ).then(None, js=FOCUS_SKILL, api_visibility="private")


def launch(demo: gr.Blocks | None = None, *, server_name: str | None = None,
           server_port: int | None = None, **kwargs: Any) -> Any:
    """Queue the Space's events (bounded concurrency, see the module docstring) and serve it.

    `server_name` defaults to `GRADIO_SERVER_NAME` or 127.0.0.1; `server_port` to Gradio's
    (`GRADIO_SERVER_PORT`, else 7860). The run history is off: it would keep typed inputs,
    API keys included, in the browser.
    """
    demo = demo or build_demo()
    # Gradio rebuilds its per-function timing summary (a DataFrame over up to 10,000 past
    # events) after every event unless told otherwise: ~10 ms per read on a busy Space.
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(ANALYTICS_EVERY))
    demo.queue(default_concurrency_limit=DEFAULT_CONCURRENCY, max_size=QUEUE_SIZE,
               status_update_rate=STATUS_UPDATE_S)
    kwargs.setdefault("max_threads", MAX_THREADS)
    kwargs.setdefault("state_session_capacity", SESSIONS)
    look: dict[str, Any] = {"theme": theme(), "css": CSS + floor_css(),
                            "footer_links": ["api"], "run_history": False}
    name = server_name or os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1"
    mcp_endpoint.attach(demo, kwargs)  # /mcp: the registry as an MCP server (docs/mcp.md)
    page_cache.attach(kwargs)  # GET / from memory once rendered (issue 38)
    work = getattr(demo, "hubskills_workbench", None)
    if work is not None:  # /work/: Evaluate, Generate, Review (`workbench`)
        work.queue(default_concurrency_limit=DEFAULT_CONCURRENCY, max_size=QUEUE_SIZE,
                   status_update_rate=STATUS_UPDATE_S)
        workbench.attach(demo, kwargs, sessions=kwargs["state_session_capacity"],
                         threads=kwargs["max_threads"], server_name=name,
                         server_port=server_port or 7860, **look)
    return demo.launch(server_name=name, server_port=server_port, **look, **kwargs)
