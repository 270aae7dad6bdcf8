"""A visitor's evaluation is sized, estimated and stoppable (issue 38, items 4 and 8).

The form's defaults are a few cases × 1 run; the line under it gives the answers, time and
cost before anything runs; an anonymous visitor on a Space may start only a few answers;
*Stop* and a closed tab end a run and keep its finished answers; `hubskills runs` counts the
rows on disk and labels a run that never got an answer `failed to start`, with the reason.

Runs go through the fake OpenAI server; a gate in its responder holds every answer after the
first few, so a run is caught mid-way, and the tests wait on conditions (rows on disk, a
manifest's status), never on durations.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import gradio as gr
import pytest
from click.testing import CliRunner
from fakes.gate import Gate
from fakes.openai_server import FakeOpenAIServer
from gradio_client import Client, handle_file
from space_pages import blocks, handler
from test_evaluate import knows_fact_if_told, make_skill
from test_space import free_port

from registry.cli import cli
from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.estimate import duration
from registry.evaluation.estimate import plan as estimate_plan
from registry.format.skill import load_skill
from registry.format.suite import load_suite, suite_path
from registry.providers import embedded
from registry.results.runs import (
    ResultRow,
    RunManifest,
    RunWriter,
    list_runs,
    read_manifest,
    read_rows,
)
from registry.secrets import holding
from space import build_demo, launch, workbench
from space.evaluate_jobs import ANONYMOUS_MAX_ANSWERS
from space.evaluate_tab import STOPPING
from space.state import Evaluations

MODEL = "openai/gpt-4o-mini"
TYPED_KEY = "sk-typed-by-the-visitor-0123456789"
VISITOR = gr.OAuthToken(token="hf_visitor_oauth_token_0123", scope="read", expires_at=0)
WAIT_S = 120.0


def wait_until(condition: Callable[[], object], what: str) -> None:
    """Poll `condition` until it holds (bounded by `WAIT_S`, a deadlock guard only)."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def the_run(runs_dir: Path) -> RunManifest | None:
    found = list_runs(runs_dir)
    return found[0] if found else None


def upload_of(folder: Path) -> list[str]:
    return [str(folder / "SKILL.md"), str(folder / "evals" / "evals.json")]


def runs_listing() -> str:
    result = CliRunner().invoke(cli, ["runs"], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def gate():
    gate = Gate(free=2, answer=knows_fact_if_told, wait_s=WAIT_S)
    with FakeOpenAIServer(responder=gate) as server:
        gate.url = server.url
        yield gate
        gate.opened.set()


@pytest.fixture
def app(tmp_path, gate, monkeypatch):
    """The Space off a Space (the owner's), launched; a short heartbeat, so a closed session
    is noticed at once."""
    monkeypatch.setenv("GRADIO_HEARTBEAT_INTERVAL", "0.2")
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "HF_HUB_OFFLINE": "1"})
    demo = build_demo(settings, on_space=False)
    _, url, _ = launch(demo, server_name="127.0.0.1", server_port=free_port(),
                       prevent_thread_lock=True, quiet=True)
    yield demo, url, settings.runs_dir
    demo.close()


def start(client: Client, skill: Path, url: str, *, cases: int = 4):
    """Start an evaluation of `cases` cases × 1 run of `local/x` on the fake server."""
    files = [handle_file(path) for path in upload_of(skill)]
    return client.submit(None, files, ["local/x"], url, 1, "inline", "user", cases, 64, 0, "",
                         "", "", False, api_name="/evaluate")


def answered(job, runs_dir: Path, count: int) -> Callable[[], bool]:
    """Whether the run has `count` rows on disk (a job that ended first fails the test)."""
    def check() -> bool:
        assert not job.done(), f"the run ended first: {job.result()}"
        run = the_run(runs_dir)
        return run is not None and len(read_rows(runs_dir, run.run_id)) == count
    return check


def test_the_form_asks_little_and_says_what_a_run_costs_before_it_starts(tmp_path):
    from registry.providers.embedded import is_loaded

    home = tmp_path / "home"
    demo = build_demo(Settings.from_env({"HUBSKILLS_HOME": str(home), "HF_HUB_OFFLINE": "1"}),
                      on_space=False)
    defaults = {block.elem_id: getattr(block, "value", None) for block in blocks(demo)}
    assert defaults["eval-runs"] == 1 and defaults["eval-cases"] == 3  # not every case × 3
    estimate = handler(demo, "estimate_evaluation")
    skill = make_skill(tmp_path, 12)
    with holding():
        line = estimate(None, upload_of(skill), ["embedded/smollm2-135m"], 1, "inline", 3, 512)
        assert "**6 answers** (3 cases × 1 run × 2 arms on embedded/smollm2-135m)" in line
        # 6 typical answers (19 s), reading the skill once, and loading the model unless this
        # process has (an earlier test may have loaded it): the CLI's estimate, to the second
        skill_md, suite = load_skill(skill), load_suite(suite_path(skill), skill_dir=skill)
        typical = estimate_plan(skill_md, suite.cases[:3], EvalConfig(
            models=["embedded/smollm2-135m"], runs=1, max_tokens=512), loaded=is_loaded())
        assert 19 < typical.seconds < 22
        assert f"**{duration(typical.seconds)}** (typical)" in line and "free" in line, line
        paid = estimate(None, upload_of(skill), [MODEL, "local/x"], 2, "inline", 0, 512)
        assert "**96 answers** (12 cases × 2 runs × 2 arms on 2 models)" in paid, paid
        assert "up to about $0.01" in paid  # 48 answers of 512 tokens at $0.60/M, and prompts
        registry_skill = estimate("hubskills/agent-skill-md", [], [MODEL], 1, "inline", 2, 64)
        assert "**4 answers**" in registry_skill, registry_skill
    assert list_runs(home / "runs") == []  # an estimate runs nothing


def test_an_anonymous_visitor_may_start_only_a_few_answers(tmp_path):
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        demo = build_demo(Settings.from_env({
            "HUBSKILLS_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1",
            "SPACE_ID": "owner/hubskills", "OPENAI_BASE_URL": server.url}))
        evaluate, estimate = handler(demo, "evaluate"), handler(demo, "estimate_evaluation")
        upload = upload_of(make_skill(tmp_path, ANONYMOUS_MAX_ANSWERS // 2 + 1))

        def run(oauth: gr.OAuthToken | None) -> tuple:
            return evaluate(None, upload, [MODEL], "", 1, "inline", "user", 0, 64, 0, "",
                            TYPED_KEY, "", progress=None, oauth=oauth)

        line = estimate(None, upload, [MODEL], 1, "inline", 0, 64)
        assert f"at most {ANONYMOUS_MAX_ANSWERS} on this Space" in line, line
        with pytest.warns(UserWarning, match="anonymous visitor may start at most"):
            status, *_, run_id = run(None)
        assert f"asks for {ANONYMOUS_MAX_ANSWERS + 2} answers" in status, status
        assert run_id is None and server.requests == []  # refused before any call
        status, *_, run_id = run(VISITOR)  # a signed-in visitor may start more
    assert status.startswith("✅") and run_id, status


def test_stop_ends_the_run_and_keeps_the_finished_answers(app, gate, tmp_path):
    demo, url, runs_dir = app
    client = Client(workbench.url(url), verbose=False)
    job = start(client, make_skill(tmp_path, 4), gate.url)
    wait_until(answered(job, runs_dir, 2), "two answers on disk")
    assert client.predict(api_name="/stop_evaluation") == STOPPING
    status, summary, _, cases = job.result(timeout=WAIT_S)
    manifest = the_run(runs_dir)
    assert "⏹️" in status and "stopped from the Space: kept 2 of 8 answers" in status, status
    assert manifest.status == "interrupted" and len(read_rows(runs_dir, manifest.run_id)) == 2
    assert manifest.label == "partial: 2 of 8 samples, interrupted"
    assert cases["data"]  # the finished answers are shown
    assert demo.hubskills_state.evaluations.count() == 0  # its slot is free
    client.close()


def test_closing_the_session_stops_its_run(app, gate, tmp_path):
    demo, url, runs_dir = app
    client = Client(workbench.url(url), verbose=False)
    job = start(client, make_skill(tmp_path, 4), gate.url)
    wait_until(answered(job, runs_dir, 2), "two answers on disk")
    client.close()  # the tab closes: its heartbeat ends, the Space's unload runs
    wait_until(lambda: the_run(runs_dir).status == "interrupted", "the run to stop")
    manifest = the_run(runs_dir)
    assert manifest.note.startswith("interrupted (its visitor left the Space)")
    assert len(read_rows(runs_dir, manifest.run_id)) == 2
    wait_until(lambda: demo.hubskills_state.evaluations.count() == 0, "its slot to be free")


def test_only_a_kept_run_outlives_its_visitor():
    evaluations = Evaluations()
    with evaluations.running("tab-a", kept=True) as kept, \
            evaluations.running("tab-b") as plain, evaluations.running("tab-c") as other:
        assert evaluations.left("tab-a") == 0 and not kept.is_set()
        assert evaluations.left("tab-b") == 1 and plain.is_set() and not other.is_set()
        assert evaluations.stop("tab-a") == 1 and kept.is_set()  # Stop still stops it
    assert evaluations.count() == 0


def test_the_listing_counts_the_answers_written():
    runs_dir = Settings.from_env().runs_dir
    manifest = RunManifest(run_id="20261122-103000-a1b2c3", skill_name="s", content_hash="c",
                           suite_hash="h", models=["embedded/smollm2-135m"], runs=3,
                           case_ids=[f"c{i}" for i in range(41)], samples_planned=246,
                           partial=True)
    writer = RunWriter(runs_dir, manifest)  # still running (or its process was killed)
    for i in range(15):
        writer.add(ResultRow(run_id=manifest.run_id, skill_name="s", model=manifest.models[0],
                             arm="baseline" if i % 2 else "skill", case_id=f"c{i // 2}",
                             passed=True))
    assert "partial: 15 of 246 samples" in runs_listing()
    listed = json.loads(CliRunner().invoke(cli, ["runs", "--json"]).output)
    assert listed[0]["samples_done"] == 15


def test_a_run_that_never_got_an_answer_is_labelled_failed_to_start(tmp_path, monkeypatch):
    settings = Settings.from_env()
    demo = build_demo(settings, on_space=False)
    evaluate = handler(demo, "evaluate")
    monkeypatch.setattr(embedded, "GGUF_PACKAGE", "no_such_gguf_package")  # the extra missing
    monkeypatch.setattr(embedded, "_llama", None, raising=False)  # not loaded by an earlier test
    with holding(), pytest.warns(UserWarning, match="needs the local extra"):
        status, *_, run_id = evaluate(
            None, upload_of(make_skill(tmp_path, 1)), ["embedded/smollm2-135m"], "", 1,
            "inline", "user", 0, 16, 0, "", "", "", progress=None)
    assert "needs the local extra" in status and run_id is None
    assert list_runs(settings.runs_dir) == []  # found out before the run was saved
    with FakeOpenAIServer(responder=lambda body: {
            "status": 400, "error": {"message": "this model is switched off"}}) as server:
        with holding():
            status, *_, run_id = evaluate(
                None, upload_of(make_skill(tmp_path / "b", 1)), ["local/x"], server.url, 1,
                "inline", "user", 0, 16, 0, "", "", "", progress=None)
    assert "no model answered" in status and run_id is None, status
    [refused] = list_runs(settings.runs_dir)
    assert read_manifest(settings.runs_dir, refused.run_id).status == "complete"
    assert refused.label.startswith("failed to start: no model answered (")
    assert "switched off" in refused.label
    listing = runs_listing()
    assert "failed to start: no model answered" in listing and "partial" not in listing


def test_the_time_left_is_the_recent_pace_not_the_cached_answers():
    """Five answers from the cache at once, then one every 10 s: the progress line's time left
    is the recent pace's (10 s an answer), not elapsed ÷ done (the cache made that 5.5 s)."""
    from space.evaluate_actions import _Pace

    said: list[str] = []
    now = [0.0]
    pace = _Pace(None, EvalConfig(models=["local/x"]),  # type: ignore[arg-type]
                 lambda *_, desc, **__: said.append(desc), clock=lambda: now[0])
    row = ResultRow(run_id="r", skill_name="s", case_id="q1", arm="skill", model="local/x",
                    passed=True)
    for done, at in enumerate([0.01] * 5 + [10.0, 20.0, 30.0, 40.0, 50.0, 60.0], start=1):
        now[0] = at
        pace.answered(done, 25, row)
    assert said[0] == "q1 [skill] pass"  # too little known yet: no figure rather than a wrong one
    # 14 left at 10 s each: 140 s; elapsed ÷ done would say 60 / 11 × 14 = 76 s, "about 1 min"
    assert said[-1] == "q1 [skill] pass · about 2 min left", said


def test_a_rerun_says_its_answers_are_cached_and_takes_no_time_for_them(tmp_path):
    """The run's first progress line counts the answers the response cache holds and times
    only the rest: a rerun of the same skill on the same model asks the model nothing."""
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        demo = build_demo(Settings.from_env({
            "HUBSKILLS_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1",
            "OPENAI_BASE_URL": server.url}), on_space=False)
        evaluate = handler(demo, "evaluate")
        upload = upload_of(make_skill(tmp_path, 3))

        def first_line() -> str:
            said: list[str] = []
            status, *_ = evaluate(None, upload, [MODEL], "", 1, "inline", "user", 0, 64, 0, "",
                                  TYPED_KEY, "", progress=lambda *_, desc="", **__:
                                  said.append(desc))
            assert status.startswith("✅"), status
            return next(line for line in said if "answers planned" in line)

        assert first_line().startswith("6 answers planned, about "), "nothing cached yet"
        asked = len(server.bodies)
        assert asked == 6
        assert first_line().startswith("6 answers planned: all of them cached, nothing to ask")
    assert len(server.bodies) == asked  # the rerun asked the model for no answer
