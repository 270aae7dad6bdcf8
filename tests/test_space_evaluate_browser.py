"""The Evaluate tab in a real browser (Debian's chromium, the harness of `test_space_browser`):
the estimate shows before a run starts, *Stop* ends a run keeping its answers, and closing the
tab stops the next one. The model is the fake OpenAI server behind a gate
(`test_space_evaluate_limits.Gate`), so each run is caught after its first answers; the test
waits on conditions (rows on disk, texts on the page), never on durations."""

from __future__ import annotations

import re

import pytest
from test_evaluate import make_skill
from test_space_browser import chromium_page, require_browser
from test_space_evaluate_limits import app, gate, the_run, upload_of, wait_until  # noqa: F401

from registry.providers.openai_compat import LocalProvider
from registry.results.runs import list_runs, read_rows

pytestmark = pytest.mark.slow


def fill_form(page, skill, url: str) -> None:
    """Upload `skill`, ask `local/x` at `url` (not the embedded model) for 4 cases."""
    page.locator("#hs-header nav").get_by_role("link", name=re.compile("Evaluate")).click()
    # the page's load events fill the form's defaults and their estimate: wait for them, or a
    # slow machine's page load overwrites what is typed here
    page.locator("#eval-estimate").get_by_text(re.compile(r"\d+ answers")).wait_for()
    page.locator("#eval-upload input[type=file]").set_input_files(upload_of(skill))
    page.locator("#eval-models").get_by_role("button", name=re.compile("Remove|×")).first.click()
    models = page.locator("#eval-models input")
    models.fill("local/x")
    models.press("Enter")
    page.locator("#eval-base-url textarea, #eval-base-url input").first.fill(url)
    page.locator("#eval-cases input").fill("4")
    page.locator("#eval-cases input").press("Enter")


def run_besides(runs_dir, before: set[str]):
    """The run whose id is not in `before` (by id: two runs started in the same second tie
    in `list_runs`' newest-first order), or None."""
    return next((run for run in list_runs(runs_dir) if run.run_id not in before), None)


def rows_of_run(runs_dir, count: int, before: set[str]):
    """Whether a run not `before` has at least `count` rows on disk."""
    def check() -> bool:
        run = run_besides(runs_dir, before)
        return run is not None and len(read_rows(runs_dir, run.run_id)) >= count
    return check


def assert_progress_seen(page) -> None:
    """The run's progress (answers done of 8, the last answer) is drawn inside the status box
    it is shown over, not clipped by it (a walk saw that box empty, at height 0, while a run
    went: the lines were in the page but not on screen)."""
    box = page.locator("#eval-status")
    for text in (re.compile(r"\b\d/8 answers"), re.compile(r"q\d \[(skill|baseline)\]")):
        line = box.get_by_text(text).first
        line.wait_for()
        inside = page.evaluate("""([el, box]) => {
            const r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
            return r.height > 0 && r.top >= b.top && r.bottom <= b.bottom;
        }""", [line.element_handle(), box.element_handle()])
        assert inside, f"{text.pattern!r} is drawn outside its status box"


def test_estimate_then_stop_then_a_closed_tab_stops_the_run(app, gate, tmp_path):  # noqa: F811
    require_browser()
    demo, url, runs_dir = app
    skill = make_skill(tmp_path, 4)
    with chromium_page() as page:
        page.goto(url)
        fill_form(page, skill, gate.url)
        page.locator("#eval-estimate").get_by_text("8 answers").wait_for()  # before any run
        assert the_run(runs_dir) is None
        page.locator("#eval-status").get_by_text("No run yet").wait_for()  # where it will go
        page.locator("#eval-push").click()  # nothing to push yet: it says so
        page.locator("#eval-pushed").get_by_text("Run an evaluation first").wait_for()
        page.locator("#eval-run").click()
        # what the push said was about no run: the new run clears it
        page.locator("#eval-pushed").get_by_text("Run an evaluation first").wait_for(
            state="detached")
        wait_until(rows_of_run(runs_dir, 2, set()), "two answers on disk")
        # the progress is drawn over the status box: nothing under it (the placeholder went)
        page.locator("#eval-status").get_by_text("No run yet").wait_for(state="detached")
        # every connection slot holds a call at the gate: the run can send nothing more, so no
        # call of this run reaches the gate after the stop and takes the next run's free answers
        wait_until(lambda: gate.seen == 2 + LocalProvider.default_concurrency,
                   "every slot's call at the gate")
        assert_progress_seen(page)
        page.locator("#eval-stop").click()
        page.locator("#eval-status").get_by_text(re.compile("stopped from the Space: kept 2 "
                                                            "of 8 answers")).wait_for()
        first = the_run(runs_dir).run_id
        assert the_run(runs_dir).status == "interrupted"

        gate.free = gate.seen + 2  # two new answers (besides the cached two), then it waits
        page.locator("#eval-run").click()
        wait_until(rows_of_run(runs_dir, 4, {first}), "the second run's first answers")
        page.close()  # the visitor leaves
        # the run is marked `interrupted` as the stop begins, and its note written as it ends
        wait_until(lambda: (run_besides(runs_dir, {first}).note or "").startswith(
            "interrupted (its visitor left the Space)"), "the run to stop, saying why")
        assert run_besides(runs_dir, {first}).status == "interrupted"
    wait_until(lambda: demo.hubskills_state.evaluations.count() == 0, "its slot to be free")
