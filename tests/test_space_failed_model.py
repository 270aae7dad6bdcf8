"""The Space's evaluation summary for a model whose every sample failed: nothing was measured,
so it shows no rate (least of all 0%) and draws no bars, beside a model that answered. A real
run against the fake OpenAI server, which rejects every request for one model."""

from __future__ import annotations

from fakes.openai_server import FakeOpenAIServer
from test_endpoint_probe import rejects
from test_evaluate import make_skill

from registry import EvalConfig, Settings, run_evaluation
from registry.secrets import holding
from space.evaluate_run import results


def test_a_model_that_got_no_answer_shows_failed_not_zero_percent(tmp_path):
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home")})
    with FakeOpenAIServer(responder=rejects("down")) as server:
        config = EvalConfig(models=["local/down", "local/up"], runs=1, base_url=server.url)
        run = run_evaluation(make_skill(tmp_path, 4), config, settings.with_(
            base_url=server.url))
    _, summary, _, chart = results(run)
    rows = {row["model"]: row for row in summary.to_dict("records")}
    down, up = rows["local/down"], rows["local/up"]
    assert down["verdict"].startswith("failed") and "%" not in down["baseline"]
    assert "%" not in down["with skill"] and down["errors"] == "8"
    assert up["with skill"] == "100%"  # the model that answered keeps its figures
    assert set(chart["model"]) == {"local/up"}  # no 0% bars for what was not measured
    assert list(chart["bar"]) == ["baseline", "with skill"]  # one model: the arms alone


def zipped(folder) -> str:
    """The skill folder as the zip a visitor uploads."""
    import shutil

    return shutil.make_archive(str(folder.parent / "upload"), "zip", folder.parent, folder.name)


def test_the_evaluate_tab_says_which_model_failed_and_offers_no_push_when_all_did(tmp_path):
    from space.evaluate_actions import run_evaluation_ui
    from space.state import SpaceState

    state = SpaceState(Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home")}),
                       on_space=False)
    upload = [zipped(make_skill(tmp_path, 4))]

    def evaluate(*models: str):  # the Space runs each request in a scope of its own
        with holding():
            return run_evaluation_ui(state, None, upload, list(models), server.url, 1,
                                     "inline", "user", 0, 64, 0, "", "", "")

    with FakeOpenAIServer(responder=rejects("down")) as server:
        status, *_, run_id = evaluate("local/down", "local/up")
        assert status.startswith("✅") and run_id
        assert "local/down: **failed: no sample graded**" in status
        status, summary, *_, run_id = evaluate("local/down")
    assert status.startswith("**Error:**") and "no model answered" in status
    assert "Push results" not in status and run_id is None  # nothing measured, nothing to push
    assert summary["verdict"].tolist() == ["failed: no sample graded"]


def test_a_refused_evaluation_leaves_its_tables_with_their_headers(tmp_path):
    """After an error the Summary and Per-case tables showed Gradio's "1 2 3" headers (a
    walk): they keep their own, empty."""
    from space.evaluate_actions import run_evaluation_ui
    from space.evaluate_run import CASE_COLUMNS, SUMMARY_COLUMNS
    from space.state import SpaceState

    state = SpaceState(Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home")}),
                       on_space=False)
    with holding():
        status, summary, chart, cases, run_id = run_evaluation_ui(
            state, "local/no-such-skill", None, ["local/m"], "http://127.0.0.1:9", 1,
            "inline", "user", 0, 64, 0, "", "", "")
    assert status.startswith("**Error:**") and run_id is None and chart is None
    assert list(summary.columns) == list(SUMMARY_COLUMNS) and summary.empty
    assert list(cases.columns) == list(CASE_COLUMNS) and cases.empty


def test_a_run_of_some_cases_says_the_board_will_not_rank_it(tmp_path):
    """The Space's default is 3 cases: its line said "(complete) ... Press Push results to
    add it to the leaderboard", which never ranks a run of some of the suite's cases."""
    from space.evaluate_actions import run_evaluation_ui
    from space.state import SpaceState

    state = SpaceState(Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home")}),
                       on_space=False)
    upload = [zipped(make_skill(tmp_path, 4))]
    with FakeOpenAIServer() as server, holding():
        some = run_evaluation_ui(state, None, upload, ["local/m"], server.url, 1, "inline",
                                 "user", 2, 64, 0, "", "", "")[0]
        every = run_evaluation_ui(state, None, upload, ["local/m"], server.url, 1, "inline",
                                  "user", 0, 64, 0, "", "", "")[0]
    assert "(subset: 2 of 4 cases)" in some and "the leaderboard ranks runs of every case" in some
    assert "add it to the leaderboard" not in some
    assert "(complete)" in every and "Press *Push results* to add it to the leaderboard" in every
