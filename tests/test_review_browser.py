"""Blind review in a real browser (issue 42): five cases of a seeded run reviewed in the Space's
*Review* tab and on the local page of `hubskills review-outputs`, by mouse and by keyboard.

Each case: the two answers show as "Answer A" and "Answer B" with nothing saying which arm is
which, the skill's on the side the review's secret drew (both sides occur: the secret is
chosen so); once answered, the page names the sides and they are the ones shown. At the end
the answers are stored (the Space's in the results dataset under the reviewer's name, the local
page's in the run's feedback.jsonl) and the summary shows the preference with its interval.
chromium as in `test_space_browser`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from test_space import free_port
from test_space_browser import chromium_page, require_browser

from registry.config import Settings
from registry.format.suite import load_suite, suite_path
from registry.results.runs import ResultRow, RunManifest, RunWriter
from registry.review.feedback import skill_side
from registry.review.session import SECRET, open_local_review
from registry.stores.feedback import read_feedback
from space import build_demo, launch
from space.review_local import launch_local
from space.review_tab import SECRET_ENV

pytestmark = pytest.mark.slow

REPO = "hubskills/agent-skill-md"
SKILL = Path(__file__).resolve().parent.parent / "skills" / "agent-skill-md"
RUN_ID = "20261206-090000-review"
MODEL = "local/x"
# a code line wider than an answer's column (it pushed Answer B past the page's edge)
LONG_CODE = "\n\n```python\nids = [" + ", ".join(str(12345678 + i) for i in range(40)) + "]\n```"
SHORT_CODE = "\n\n```python\nids = [1, 2]\n```"
# Each answer's code block: whether it ends inside its column (and that inside the pair's
# box), scrolls sideways and takes
# the keyboard's focus (to scroll it without a mouse); and the page's overflow.
CODE_BLOCKS = """() => [...document.querySelectorAll('#review-a pre, #review-b pre')].map(pre => {
  const column = pre.closest('.column').getBoundingClientRect();
  const pair = document.getElementById('review-pair').getBoundingClientRect();
  return {inside: pre.getBoundingClientRect().right <= column.right + 1
                  && column.right <= pair.right + 1,
          scrolls: (pre.scrollLeft = 40, pre.scrollLeft > 0),  // not merely overflowing
          focusable: pre.tabIndex === 0,
          page: document.documentElement.scrollWidth <= document.documentElement.clientWidth};
})"""
CASES = [c.id for c in load_suite(suite_path(SKILL)).cases[:5]]


def mixed_secret(run_id: str = RUN_ID, reviewer: str = "local") -> str:
    """The first of a fixed list of secrets that puts the skill on both sides of the five
    cases for `reviewer` (so the test sees the sides differ, yet never depends on chance)."""
    for digit in "0123456789abcdef":
        secret = digit * 64
        sides = [skill_side(secret, run_id, c, f"{MODEL}#0", reviewer) for c in CASES]
        if 2 <= sides.count("A") <= 3:
            return secret
    raise AssertionError("no mixed secret")


def rows_and_manifest(revision: str | None, skill_path: str | None = None
                      ) -> tuple[RunManifest, list[ResultRow]]:
    manifest = RunManifest(
        run_id=RUN_ID, skill_name="agent-skill-md", skill_repo=REPO, skill_version="1.0.0",
        skill_revision=revision, content_hash="sha256:0", suite_hash="sha256:0",
        models=[MODEL], case_ids=CASES, status="complete", partial=False,
        samples_planned=10, samples_done=10, skill_path=skill_path)
    rows = [ResultRow(run_id=RUN_ID, skill_name="agent-skill-md", skill_repo=REPO,
                      skill_version="1.0.0", skill_revision=revision, model=MODEL, arm=arm,
                      case_id=case, passed=arm == "skill", score=1.0,
                      output=f"Token {'S' if arm == 'skill' else 'B'}-{case}: an answer. "
                             "<script>window.pwned = 1</script>"
                             + (LONG_CODE if arm == "skill" else SHORT_CODE))
            for case in CASES for arm in ("baseline", "skill")]
    return manifest, rows


@pytest.fixture
def browser_page():
    require_browser()
    with chromium_page(1360, 1000) as page:
        yield page


def _text(page, selector: str) -> str:
    return page.locator(selector).first.inner_text()


def review_five(page) -> tuple[list[str], int]:
    """Answer the five cases (the first by mouse with a comment, the rest by keys); returns
    the skill's side seen per case and how many answers preferred the skill."""
    sides, for_skill = [], 0
    for i in range(5):
        page.wait_for_function(
            "n => (document.querySelector('#review-progress') || {}).innerText"
            "?.includes(`Case ${n} of 5`)", arg=i + 1)
        a, b = _text(page, "#review-a"), _text(page, "#review-b")
        assert ("S-" in a) != ("S-" in b) and ("B-" in a) != ("B-" in b)
        seen = "A" if "S-" in a else "B"
        sides.append(seen)
        # hidden until answered: no arm named, only "Answer A" / "Answer B"
        assert _text(page, "#review-revealed").strip() == ""
        pair = _text(page, "#review-pair")
        assert "Answer A" in pair and "Answer B" in pair and "baseline" not in pair.lower()
        assert page.locator("#review-a script, #review-b script").count() == 0
        assert page.evaluate("() => window.pwned") is None
        choice = ["A", "B", "tie", "both_bad", seen][i]
        if i == 0:
            blocks = page.evaluate(CODE_BLOCKS)
            assert len(blocks) == 2 and all(b["inside"] and b["focusable"] and b["page"]
                                            for b in blocks), blocks
            assert sum(b["scrolls"] for b in blocks) == 1, blocks  # the skill's, on its side
            page.locator("#review-comment textarea").fill("A reads better")
            page.locator("#review-choose-A").click()
        else:
            page.locator("#review-progress").click()  # the focus out of the comment box
            page.keyboard.press({"A": "a", "B": "b", "tie": "t", "both_bad": "x"}[choice])
        for_skill += choice == seen
        page.wait_for_function(
            "() => (document.querySelector('#review-revealed') || {}).innerText"
            "?.includes(\"was the skill's\")")
        named = re.search(r"Answer (A|B) was the skill's", _text(page, "#review-revealed"))
        assert named and named.group(1) == seen
        if i < 4:
            page.locator("#review-next").wait_for(state="visible")
            if i == 0:  # a button as plain as the choices above it, not a small grey link
                size = page.evaluate("""() => ['#review-next', '#review-choose-A'].map(id => {
                    const b = document.querySelector(id);
                    return [b.getBoundingClientRect().height, b.className]; })""")
                assert size[0][0] >= size[1][0] - 1 and "primary" in size[0][1], size
            page.keyboard.press("n")
        else:  # the last: nothing is next, and its line says so (it said "press n")
            assert "every case answered" in _text(page, "#review-progress")
            assert not page.locator("#review-next").is_visible()
    page.wait_for_function(
        "() => (document.querySelector('#review-progress') || {}).innerText"
        "?.includes('5 of 5')")
    return sides, for_skill


def check_summary(page, for_skill: int) -> None:
    page.wait_for_function(
        "n => (document.querySelector('#review-summary') || {}).innerText"
        "?.includes(`in ${n} of 5 reviewed cases`)", arg=for_skill)
    summary = _text(page, "#review-summary")
    assert re.search(r"95% CI \d+%–\d+%", summary), summary
    assert "1 tie, 1 both bad" in summary


def test_five_cases_reviewed_in_the_space(tmp_path, browser_page, monkeypatch):
    secret = mixed_secret()
    monkeypatch.setenv(SECRET_ENV, secret)
    settings = Settings.from_env({**os.environ, "HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "HF_HUB_OFFLINE": "1", "HUBSKILLS_REGISTRY": "local"})
    demo = build_demo(settings, on_space=False)
    state = demo.hubskills_state
    manifest, rows = rows_and_manifest(state.store.resolve(REPO).sha)
    state.store.append_results(manifest, rows)
    state.invalidate()
    _, url, _ = launch(demo, server_name="127.0.0.1", server_port=free_port(),
                       prevent_thread_lock=True, quiet=True)
    page = browser_page
    try:
        page.goto(url)
        page.locator("#hs-header nav").get_by_role("link", name=re.compile("Review")).click()
        page.wait_for_function(  # the picker is filled as the tab opens
            "() => (document.querySelector('#review-runs') || {}).innerText"
            "?.includes('in the registry: pick')")
        box = page.locator("#review-run input")
        box.fill(RUN_ID)
        box.press("Enter")
        page.locator("#review-pair").first.wait_for(state="visible")
        assert "Prompt" in _text(page, "#review-prompt")
        assert load_suite(suite_path(SKILL)).cases[0].prompt.split()[0] in _text(
            page, "#review-prompt")  # the suite's prompt, read at the run's revision
        sides, for_skill = review_five(page)
        check_summary(page, for_skill)
        page.goto(f"{url}?skill={REPO}")  # the skill page: beside the lift, not in it
        page.wait_for_function(
            "n => (document.querySelector('#skill-people') || {}).innerText"
            "?.includes(`in ${n} of 5 reviewed cases`)", arg=for_skill)
        assert "not part of the lift" in _text(page, "#skill-people")
    finally:
        demo.close()
    assert sides == [skill_side(secret, RUN_ID, c, f"{MODEL}#0", "local") for c in CASES]
    assert set(sides) == {"A", "B"}
    files = read_feedback(state.store, RUN_ID)
    assert list(files) == [f"feedback/{RUN_ID}/local.jsonl"]
    answers = [json.loads(line) for line in files[f"feedback/{RUN_ID}/local.jsonl"].splitlines()]
    assert [a["case"] for a in answers] == CASES
    assert [a["skill_side"] for a in answers] == sides
    assert answers[0]["comment"] == "A reads better" and answers[0]["reviewer"] == "local"


def test_five_cases_reviewed_on_the_local_page(tmp_path, browser_page):
    runs_dir = tmp_path / "runs"
    manifest, rows = rows_and_manifest(None, skill_path=str(SKILL))
    writer = RunWriter(runs_dir, manifest)
    for row in rows:
        writer.add(row)
    writer.close("complete")
    secret = mixed_secret(reviewer="ann")
    (runs_dir / RUN_ID / SECRET).write_text(secret + "\n")
    review = open_local_review(runs_dir, RUN_ID)
    _, url, _ = launch_local(review, "ann", server_port=free_port(), prevent_thread_lock=True,
                             quiet=True)
    page = browser_page
    try:
        page.goto(url)
        page.locator("#review-pair").first.wait_for(state="visible")
        sides, for_skill = review_five(page)
        check_summary(page, for_skill)
    finally:
        import gradio as gr

        gr.close_all()
    assert set(sides) == {"A", "B"}
    stored = open_local_review(runs_dir, RUN_ID)  # resumable: sealed, same sides
    assert [a.case for a in stored.answers] == CASES and stored.next_case("ann") is None
    assert [a.skill_side for a in stored.answers] == sides
    assert [a.reviewer for a in stored.answers] == ["ann"] * 5
