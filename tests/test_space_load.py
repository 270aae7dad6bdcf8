"""The Space under load: each view built once per version of the data, fresh data without
blocking readers, a failed refresh that keeps the last good data, bounded work, and bursts of
visitors that wait instead of failing. Behaviour only; the timings are `bench/space_load.py`.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gradio as gr
import huggingface_hub.constants
import pytest
from fakes.hub_server import FakeHub
from fakes.openai_server import FakeOpenAIServer
from gradio_client import Client
from gradio_client.utils import Status
from space_pages import handler, pages, private_handler
from test_space import MODELS, SEEDED, append_run, free_port

from registry.config import Settings
from registry.stores import LocalStore
from registry.stores.hub import HubStore
from space import build_demo, launch, leaderboard_tab, skill_page, workbench
from space.cache import Memo
from space.leaderboard_view import ALL, skill_from_link
from space.state import MAX_KEY_CHARS, SpaceState

MODEL = "org/new-model"
VISITOR = "test-visitor"  # the name of the threads `at_once` starts
RUNNING = (Status.PROCESSING, Status.PROGRESS)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"})


@pytest.fixture
def state(settings: Settings) -> SpaceState:
    state = SpaceState(settings, on_space=False)
    for k, repo in enumerate(SEEDED):
        append_run(state.store, repo, "org/model-a", 0.2, 0.3 + 0.3 * k, seed=k)
    return state


def counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[int]:
    """Count this test's calls of `module.name` (the real function still runs): those made
    in the test's own thread or its visitors' (`at_once`). Other threads' are left out: the
    Space an earlier test built may still refresh its own data while this test runs (its
    folder went at that test's teardown, which changes its data), its warm-up builds views of
    its own state, and its server's workers answer whatever still asks it (the whole suite
    once counted a second build here, none of this test's)."""
    calls: list[int] = []
    real = getattr(module, name)
    mine = threading.current_thread()

    def counted(*args, **kwargs):
        here = threading.current_thread()
        if here is mine or here.name.startswith(VISITOR):
            calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def at_once(count: int, call) -> list:
    """`call()` from `count` threads released together."""
    barrier = threading.Barrier(count)

    def one(_: int):
        barrier.wait()
        return call()

    with ThreadPoolExecutor(count, thread_name_prefix=VISITOR) as pool:
        return list(pool.map(one, range(count)))


def models_shown(state: SpaceState) -> set[str]:
    table, _, _ = leaderboard_tab.leaderboard(state, "", ALL, ALL, ALL)
    return {row[2] for row in table["data"]}


def test_twenty_identical_reads_build_the_view_once(state, monkeypatch):
    built = counting(monkeypatch, leaderboard_tab, "leaderboard_view")
    pages = counting(monkeypatch, skill_page, "skill_page")
    views = at_once(20, lambda: leaderboard_tab.leaderboard(state, "", ALL, ALL, ALL))
    assert len(built) == 1 and all(v[0] is views[0][0] for v in views)
    assert {skill_from_link(row[1]) for row in views[0][0]["data"]} == set(SEEDED)
    rendered = at_once(20, lambda: skill_page.render(state, SEEDED[0]))
    assert len(pages) == 1 and rendered[0][1].startswith(f"<div><h2>{SEEDED[0]}</h2>")
    leaderboard_tab.leaderboard(state, "kernel", ALL, ALL, ALL)  # other filters: a new view
    assert len(built) == 2


def test_new_results_reach_the_next_read_and_nothing_else_is_rebuilt(state, monkeypatch):
    before = models_shown(state)
    assert "org/model-a" in before and MODEL not in before
    built = counting(monkeypatch, leaderboard_tab, "leaderboard_view")
    state.invalidate()  # nothing changed: the snapshot and its views are kept
    assert models_shown(state) == before and built == []
    append_run(state.store, SEEDED[1], MODEL, 0.2, 0.9, seed=7)
    assert models_shown(state) == before  # served from memory until refreshed
    state.invalidate()  # what a push from the Space does
    assert models_shown(state) == before | {MODEL} and len(built) == 1


def test_forgetting_old_views_keeps_those_already_built_on_the_new_data(state, monkeypatch):
    """The views are let go in the refreshing thread after the new data are swapped in, so a
    reader may have built one on the new data first: that one is kept, or a burst of visitors
    builds it twice (the whole suite on Python 3.13 caught it: 2 builds of 1 view)."""
    models_shown(state)  # a view on the first data
    append_run(state.store, SEEDED[1], MODEL, 0.2, 0.9, seed=7)
    listeners = state.data._listeners  # noqa: SLF001 - stand between the swap and the forget
    monkeypatch.setattr(state.data, "_listeners", [])
    state.invalidate()  # the new data are in; their listener has not run yet
    built = counting(monkeypatch, leaderboard_tab, "leaderboard_view")
    assert MODEL in models_shown(state) and len(built) == 1  # a reader builds it first
    for listener in listeners:
        listener(state.snapshot())  # then the refreshing thread lets go of old views
    assert MODEL in models_shown(state) and len(built) == 1  # kept: not built again
    assert len(state.views["leaderboard"]) == 1  # the first data's view is gone


def test_a_write_from_elsewhere_is_picked_up_by_the_background_refresh(settings, state):
    refreshing = SpaceState(settings, refresh_every=0.05)
    before = models_shown(refreshing)
    assert MODEL not in before
    refreshing.start_refresh()
    try:
        other = LocalStore(settings.store_dir)  # another process: the CLI, say
        append_run(other, SEEDED[0], MODEL, 0.1, 0.8, seed=9)
        deadline = time.monotonic() + 30
        while MODEL not in models_shown(refreshing) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert models_shown(refreshing) == before | {MODEL}
        assert "Results as of" in leaderboard_tab.leaderboard(refreshing, "", ALL, ALL, ALL)[2]
    finally:
        refreshing.data.stop()


@pytest.fixture
def hub_state(tmp_path, monkeypatch, skills_dir):
    if huggingface_hub.constants.HF_HUB_OFFLINE or not huggingface_hub.constants.HF_HUB_DISABLE_XET:
        pytest.skip("huggingface_hub was imported offline or with Xet; it reads both once")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with FakeHub() as hub:
        settings = Settings(home=tmp_path / "hub-home", hf_endpoint=hub.url,
                            hf_token=hub.token, namespace="tester",
                            results_repo="tester/hubskills-evals")
        store = HubStore(settings)
        store.publish(skills_dir / "agent-skill-md", repo="tester/agent-skill-md",
                      version="1.0.0")
        append_run(store, "tester/agent-skill-md", "org/model-a", 0.2, 0.8, seed=1)
        yield SpaceState(settings, store, on_space=False), hub, store


def test_a_failed_refresh_keeps_the_last_good_data_and_says_so(hub_state):
    state, hub, store = hub_state
    assert models_shown(state) == {"org/model-a"}
    assert "Results as of" in state.data.note() and state.data.error is None
    append_run(store, "tester/agent-skill-md", MODEL, 0.2, 0.8, seed=2)
    hub.fail_next(3, status=500, path_contains="/api/datasets/")
    assert state.data.refresh() is False  # the Hub failed: nothing was swapped
    summary = leaderboard_tab.leaderboard(state, "", ALL, ALL, ALL)[2]
    assert models_shown(state) == {"org/model-a"}  # the last good data, still served
    assert "refresh" in summary and "failed" in summary and "500" in summary
    for _ in range(5):  # each failing refresh uses at least one of the injected failures
        if state.data.refresh():
            break
    assert models_shown(state) == {"org/model-a", MODEL} and state.data.error is None
    assert "failed" not in leaderboard_tab.leaderboard(state, "", ALL, ALL, ALL)[2]


def test_a_hub_refresh_reads_the_results_only_when_they_changed(hub_state):
    state, hub, store = hub_state
    assert models_shown(state) == {"org/model-a"}
    hub.reset_counts()
    assert state.data.refresh() is False  # the change token is the same: nothing re-read
    assert hub.count(path_contains="/tree/") == 0 and hub.count(path_contains="/resolve/") == 0
    assert hub.count() <= 2  # the dataset's head and the newest skill
    append_run(store, "tester/agent-skill-md", MODEL, 0.2, 0.8, seed=3)
    assert state.data.refresh() is True
    assert models_shown(state) == {"org/model-a", MODEL}


def test_the_memo_is_bounded_and_keeps_no_errors():
    memo = Memo(size=3)
    for key in range(5):
        memo.get(key, lambda key=key: key * 10)
    assert len(memo) == 3 and memo.get(4, lambda: "recomputed") == 40
    assert memo.get(0, lambda: "recomputed") == "recomputed"  # the oldest was dropped

    def failing():
        raise ValueError("store down")

    for _ in range(2):
        with pytest.raises(ValueError, match="store down"):
            memo.get("bad", failing)
    assert memo.misses == 8 and memo.get("bad", lambda: "fine") == "fine"


def test_one_computation_serves_every_waiter_and_its_error_reaches_them_all():
    memo, started, release = Memo(size=4), threading.Event(), threading.Event()
    runs: list[int] = []

    def slow():
        runs.append(1)
        started.set()
        release.wait(600)
        raise RuntimeError("once")

    with ThreadPoolExecutor(8) as pool:
        first = pool.submit(memo.get, "k", slow)
        started.wait(10)
        waiters = [pool.submit(memo.get, "k", slow) for _ in range(7)]
        deadline = time.monotonic() + 600  # a deadlock guard only
        while memo.hits < 7 and time.monotonic() < deadline:  # each waiter counts as a hit
            time.sleep(0.01)
        release.set()
        errors = [f.exception(10) for f in (first, *waiters)]
    assert len(runs) == 1 and all(isinstance(e, RuntimeError) for e in errors)


def test_long_visitor_input_is_answered_but_not_kept(state):
    query = "x" * (MAX_KEY_CHARS + 1)
    table, _, summary = leaderboard_tab.leaderboard(state, query, ALL, ALL, ALL)
    assert "No results match" in summary and table["data"] == []
    assert len(state.views["leaderboard"]) == 0


def test_reads_run_many_at_once_and_heavy_work_shares_two_slots(settings):
    demo = build_demo(settings, on_space=False)
    try:
        fns = {fn.api_name: fn for page in pages(demo) for fn in page.fns.values()
               if fn.api_name}
        reads = ("leaderboard", "model_view", "skill_page", "skill_version", "page_load")
        for name in reads:
            assert fns[name].concurrency_limit == leaderboard_tab.READ_LIMIT >= 8, name
        assert len({fns[name].concurrency_id for name in reads}) == 4  # skill pages share one
        heavy = {fns[name].concurrency_id for name in ("evaluate", "generate")}
        assert heavy == {"model-work"} and heavy.isdisjoint(fns[n].concurrency_id for n in reads)
        assert all(fns[name].concurrency_limit <= 2 for name in ("evaluate", "generate"))
        assert fns["evaluate"].show_progress != "hidden"  # the visitor sees their place in line
    finally:
        demo.hubskills_state.data.stop()


def test_page_loads_send_the_skill_lists_only_when_they_changed(settings, skills_dir):
    demo = build_demo(settings, on_space=False)
    state, load = demo.hubskills_state, handler(demo, "page_load")
    # what page load leaves to a second call; the Evaluate tab's picker, on the workbench's load
    follow = private_handler(demo, "filter-model", "filter-tag", "model-view-picker",
                             "skill-picker", "hs-tabs")
    work_load = private_handler(demo, "hs-tabs", "eval-skill", None)  # None: a gr.State

    def opened() -> gr.Dropdown:
        return work_load(None)[1]

    try:
        first = load("", ALL, ALL, ALL, None)
        assert first[-1] is None and "choices" not in opened().constructor_args  # the page has them
        append_run(state.store, SEEDED[0], MODELS[0], 0.2, 0.9, seed=7)  # new results alone
        state.invalidate()
        again = load("", ALL, ALL, ALL, None)
        assert len(again[1]["data"]) == len(first[1]["data"]) + 1 and again[-1] is None
        state.store.publish(skills_dir / "agent-skill-md", repo="someone/agent-skill-md",
                            version="1.0.0")
        state.invalidate()
        later = load("", ALL, ALL, ALL, None)[-1]
        assert later is not None and later[0] == ""  # the data changed; no skill asked for
        picker, eval_skill = follow(later)[3], opened()
        assert ("someone/agent-skill-md", "someone/agent-skill-md") in picker.choices
        assert picker.choices == eval_skill.choices
    finally:
        state.data.stop()


def test_an_arriving_visitor_queues_one_event_that_fills_the_model_view_too(settings):
    """Issue 38: the page's only load event is `page_load`; it fills the model view, whose
    picker the page opens on its first model (a value set by page load fires `model_view`,
    one more queued call); the Evaluate, Generate and Review tabs are the workbench's page, so
    an arriving visitor's session holds none of their blocks."""
    demo = build_demo(settings, on_space=False)
    try:
        loads = [f.api_name for f in demo.fns.values()  # calls to the server (not js alone)
                 if f.fn is not None and any(event == "load" for _, event in f.targets)]
        assert loads == ["page_load"]
        assert not {b.elem_id for b in demo.blocks.values()} & {"eval-run", "gen-run",
                                                               "review-run"}
        picker = next(b for b in demo.blocks.values() if b.elem_id == "model-view-picker")
        assert picker.value in MODELS
        header, _, _, _, model_view, later = handler(demo, "page_load")("", ALL, ALL, ALL, None)
        assert "3</b><span>skills" in header and later is None
        assert model_view == handler(demo, "model_view")(picker.value)
        assert {skill_from_link(r[1]) for r in model_view["data"]} == set(SEEDED)
        follow = private_handler(demo, "filter-model", "filter-tag", "model-view-picker",
                                 "skill-picker", "hs-tabs")
        view_picker = follow(("", True))[2]  # the lists changed, but not the first model
        assert "value" not in view_picker.constructor_args
    finally:
        demo.hubskills_state.data.stop()


def test_a_burst_of_100_reads_waits_rather_than_fails(state):
    demo = build_demo(state.settings, on_space=False)
    _, url, _ = launch(demo, server_name="127.0.0.1", server_port=free_port(),
                       prevent_thread_lock=True, quiet=True)
    try:
        memo = demo.hubskills_state.views["leaderboard"]
        misses = memo.misses
        clients = [Client(url, verbose=False, ssl_verify=False) for _ in range(10)]
        jobs = [c.submit("", ALL, ALL, ALL, api_name="/leaderboard") for c in clients
                for _ in range(10)]
        tables = [job.result(timeout=120)[0] for job in jobs]
        assert len(tables) == 100 and all(t == tables[0] for t in tables)
        assert {skill_from_link(r[1]) for r in tables[0]["data"]} == set(SEEDED)
        assert memo.misses == misses  # built before the burst, served from memory
    finally:
        demo.close()
        demo.hubskills_state.data.stop()


def test_evaluations_wait_in_their_own_line_told_their_place_while_reads_pass(state):
    gate = threading.Event()

    def held(body: dict) -> str:  # every answer waits until the test lets it through
        gate.wait(60)
        return "Port 4417."

    demo = build_demo(state.settings, on_space=False)
    _, url, _ = launch(demo, server_name="127.0.0.1", server_port=free_port(),
                       prevent_thread_lock=True, quiet=True)
    try:
        with FakeOpenAIServer(responder=held) as server:
            client = Client(url, verbose=False, ssl_verify=False)
            work = Client(workbench.url(url), verbose=False, ssl_verify=False)
            deadline, runs = time.monotonic() + 60, []

            def evaluate(running: int):  # submit one, then wait until `running` hold a slot
                runs.append(work.submit(SEEDED[0], [], ["local/x"], server.url, 1, "inline",
                                          "user", 1, 16, 0, "", "", "", api_name="/evaluate"))
                while time.monotonic() < deadline and sum(
                        r.status().code in RUNNING for r in runs) < running:
                    time.sleep(0.05)

            evaluate(1)  # the first creates the response cache; two at once race on it (sqlite)
            evaluate(2)
            evaluate(2)
            waiting = [r for r in runs if r.status().code not in RUNNING]
            assert len(waiting) == 1  # two slots for model work, both held
            while time.monotonic() < deadline and waiting[0].status().rank != 0:
                time.sleep(0.05)  # positions are sent every STATUS_UPDATE_S
            assert waiting[0].status().code == Status.IN_QUEUE and waiting[0].status().rank == 0
            table, _, _ = client.predict("", ALL, ALL, ALL, api_name="/leaderboard")
            assert {skill_from_link(r[1]) for r in table["data"]} == set(SEEDED)  # not held
            gate.set()
            statuses = [r.result(timeout=120)[0] for r in runs]
        assert all(s.startswith("✅") for s in statuses), statuses
    finally:
        gate.set()
        demo.close()
        demo.hubskills_state.data.stop()
