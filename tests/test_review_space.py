"""The Space's *Review* tab without a browser (issue 42): who may review on a Space, under which
name, once per case, at a bounded rate; the skill page's line beside the lift."""

from __future__ import annotations

import json
import threading
import weakref

import gradio as gr
import pytest
from space_pages import blocks, pages
from test_review_browser import CASES, MODEL, REPO, RUN_ID, mixed_secret, rows_and_manifest
from test_space import handler

from registry.config import Settings
from registry.errors import HubskillsError
from registry.review.feedback import skill_side
from registry.stores.feedback import read_feedback
from space import build_demo
from space.review_tab import ANONYMOUS, SECRET_ENV, RateLimit, people_line


def profile(name: str) -> gr.OAuthProfile:
    return gr.OAuthProfile({"preferred_username": name, "name": name, "profile": "",
                            "picture": ""})


@pytest.fixture
def space(tmp_path, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, mixed_secret())
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "HF_HUB_OFFLINE": "1", "HUBSKILLS_REGISTRY": "local"})
    demo = build_demo(settings, on_space=True)
    state = demo.hubskills_state
    manifest, rows = rows_and_manifest(state.store.resolve(REPO).sha)
    state.store.append_results(manifest, rows)
    state.invalidate()
    return demo


def test_an_anonymous_visitor_sees_the_summary_only(space):
    opened = handler(space, "review_open")(RUN_ID, None)
    case, progress, prompt, a, b = opened[:5]
    assert case is None and progress == ANONYMOUS and (prompt, a, b) == ("", "", "")
    assert opened[-2].lower().count("no case") == 1  # said once ("with a preference" too)
    assert "no case reviewed yet" in opened[-2].lower()
    with pytest.raises(gr.Error, match="sign in to review"):
        handler(space, "review_a")(RUN_ID, CASES[0], "", None)
    assert read_feedback(space.hubskills_state.store, RUN_ID) == {}


def test_a_signed_in_reviewer_answers_once_per_case_under_their_hub_name(space):
    opened = handler(space, "review_open")(RUN_ID, profile("alice"))
    assert opened[0] == CASES[0] and "Case 1 of 5" in opened[1]
    handler(space, "review_tie")(RUN_ID, CASES[0], "close call", profile("alice"))
    with pytest.raises(gr.Error, match="already answered case"):
        handler(space, "review_a")(RUN_ID, CASES[0], "", profile("alice"))
    handler(space, "review_b")(RUN_ID, CASES[0], "", profile("bob"))
    files = read_feedback(space.hubskills_state.store, RUN_ID)
    assert sorted(files) == [f"feedback/{RUN_ID}/alice.jsonl", f"feedback/{RUN_ID}/bob.jsonl"]
    assert b'"reviewer":"alice"' in files[f"feedback/{RUN_ID}/alice.jsonl"]
    assert handler(space, "review_next")(RUN_ID, profile("alice"))[0] == CASES[1]
    line = people_line(space.hubskills_state, REPO)
    bob_for_skill = skill_side(mixed_secret(), RUN_ID, CASES[0], f"{MODEL}#0", "bob") == "B"
    assert "not part of the lift" in line  # a tie and a vote: the case goes to bob's side
    assert f"in {int(bob_for_skill)} of 1 reviewed case" in line


def test_answers_are_rate_limited_per_reviewer():
    limit = RateLimit(limit=3, window=3600)
    for _ in range(3):
        limit.take("alice")
    with pytest.raises(HubskillsError, match="answered 3 cases in the last 3600 s"):
        limit.take("alice")
    limit.take("bob")  # another reviewer has their own budget


def test_agent_mode_shows_the_final_files_through_the_sanitiser(tmp_path):
    from registry.results.replay_record import WorkspaceFile
    from registry.results.runs import ResultRow
    from registry.review.pairs import review_cases
    from registry.review.session import Review
    from space.review_tab import shown

    rows = [ResultRow(run_id="r", skill_name="s", model="m", arm=arm, case_id="c", mode="agent",
                      passed=True, output=f"{arm} done",
                      workspace=[WorkspaceFile(path="kernel.cu", status="added", size=9,
                                               content=f"<img src=x onerror=alert(1)>{arm}"),
                                 WorkspaceFile(path="big.bin", status="added", size=10**7)])
            for arm in ("baseline", "skill")]
    cases = review_cases("r", rows, "5" * 64, {"c": "Write the kernel"})
    review = Review("r", cases, [], save=lambda *_: None)
    html = shown(review, "c", cases[0].skill_side, "alice")
    assert "skill done" in html and "kernel.cu" in html and "content not stored" in html
    assert "<img" not in html and "&lt;img" in html  # the file's text is shown, not run


def test_the_run_picker_lists_runs_pushed_after_the_space_started(space):
    picker = next(b for b in blocks(space) if getattr(b, "elem_id", "") == "review-run")
    assert RUN_ID not in [value for _, value in picker.choices]  # pushed after the build
    runs_now = next(f.fn for page in pages(space) for f in page.fns.values()
                    if getattr(f.fn, "__name__", "") == "runs_now")
    update, said = runs_now()
    assert RUN_ID in [value for _, value in update.choices] and "in the registry: pick" in said


def test_the_last_answer_says_every_case_is_done_and_no_case_is_not_a_sign_in(space):
    """After the last case the line said 'press n for the next case', and an answer with no
    case open (the page reloaded on the summary) said 'sign in to review' to a signed-in
    reviewer (a walk saw both)."""
    for index, case in enumerate(CASES):
        said = handler(space, "review_a")(RUN_ID, case, "", profile("carol"))
        next_button = said[-3]  # progress, the choices, next, what was revealed, the summary
        if index < len(CASES) - 1:
            assert "press n for the next case" in said[0]
    assert said[0] == f"**{len(CASES)} of {len(CASES)}** cases answered · every case " \
                      "answered: the summary is below", said[0]
    assert next_button.visible is False
    with pytest.raises(gr.Error, match="no case is open to answer"):
        handler(space, "review_a")(RUN_ID, None, "", profile("carol"))


def test_a_case_id_from_the_rows_reaches_the_summary_as_code_never_as_markup():
    """A results file names its rows' cases; a case people disagreed with its checks on is
    named in every visitor's summary, where an id holding a link or an image was markup."""
    from registry.results.runs import ResultRow
    from registry.review.pairs import review_cases
    from registry.review.session import Review
    from space.review_tab import summary_markdown

    hostile = "c](https://evil.example/x) ![p](https://evil.example/p.png"
    rows = [ResultRow(run_id="r", skill_name="s", model="m", arm=arm, case_id=hostile,
                      passed=True, output=f"{arm} answer") for arm in ("baseline", "skill")]
    review = Review("r", review_cases("r", rows, "5" * 64, {hostile: "Ask"}), [],
                    save=lambda *_: None)
    case = review.case(hostile)
    review.answer("alice", hostile, "B" if case.skill_side == "A" else "A")  # the baseline's
    text = summary_markdown(review)
    assert "people preferred the baseline's" in text
    assert f"`{hostile}`" in text and "](https://evil" not in text.replace(f"`{hostile}`", "")


def second_run(state) -> str:
    """Another run of the same answers in the store (a second review to open); its id."""
    manifest, rows = rows_and_manifest(state.store.resolve(REPO).sha)
    other = f"{RUN_ID}-again"
    state.store.append_results(manifest.model_copy(update={"run_id": other}),
                               [row.model_copy(update={"run_id": other}) for row in rows])
    return other


def test_the_reviews_kept_open_are_bounded_and_one_let_go_reopens_with_its_answers(space):
    from space.review_tab import Reviews

    state = space.hubskills_state
    other = second_run(state)
    reviews = Reviews(state, kept=1)
    first = reviews.get(RUN_ID)
    assert reviews.get(RUN_ID) is first  # kept while among the most recent
    first.answer("alice", CASES[0], "tie")
    reviews.get(other)  # a second run: the first is let go
    kept = weakref.ref(first)
    del first  # and nobody holds it any more
    assert kept() is None
    again = reviews.get(RUN_ID)
    assert CASES[0] in again.answered("alice")


def test_a_review_let_go_while_a_request_answers_on_it_is_the_one_reopened(space):
    """A reviewer's request holds the run's review; meanwhile other runs push it out of the
    kept ones and the run is opened again. The reopened review is the one still held, so the
    answer given on it is not lost by the next save of the reviewer's file."""
    from space.review_tab import Reviews

    state = space.hubskills_state
    other = second_run(state)
    reviews = Reviews(state, kept=1)
    opened, go = threading.Event(), threading.Event()

    def request() -> None:  # opens the review, then answers once the main thread says so
        review = reviews.get(RUN_ID)
        opened.set()
        go.wait()
        review.answer("alice", CASES[0], "tie")

    worker = threading.Thread(target=request)
    worker.start()
    opened.wait()
    reviews.get(other)  # the run's review is let go while the request holds it
    again = reviews.get(RUN_ID)
    go.set()
    worker.join()
    again.answer("alice", CASES[1], "A")
    saved = read_feedback(state.store, RUN_ID)[f"feedback/{RUN_ID}/alice.jsonl"]
    assert [json.loads(line)["case"] for line in saved.splitlines()] == CASES[:2]
    with pytest.raises(HubskillsError, match="already answered case"):
        again.answer("alice", CASES[0], "B")
