"""A run that got no answers did not complete.

Each model endpoint (students, judge) is probed once before the first sample, at no cost: an
address where nothing listens, a refused TLS handshake or a missing route is refused with the
address and the cause before any row is written. A model whose every sample failed in transport
is reported as failed with its first cause (exit 1 when no model answered), no message claims
cache hits that did not happen, and what `eval --cases ... --push` says matches what it does.
"""

from __future__ import annotations

import json
import socket

import pytest
from click.testing import CliRunner, Result
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import knows_fact_if_told, make_skill

from registry.cli import cli
from registry.config import Settings
from registry.results.runs import list_runs, read_rows


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def hubskills(*args: str, **env: str) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args],
                              env={"NO_COLOR": "1", "COLUMNS": "200", **env})


def refused(result: Result) -> str:
    """The error of a command that must exit 1 with a `HubskillsError`: message and hint."""
    assert result.exit_code == 1, result.output
    return f"{result.exception} | hint: {getattr(result.exception, 'hint', '')}"


def completions(server: FakeOpenAIServer) -> int:
    return len(server.bodies)


def no_run_saved() -> bool:
    return list_runs(Settings.from_env().runs_dir) == []


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=knows_fact_if_told) as srv:
        yield srv


# --- refused before the run --------------------------------------------------------------------


def test_an_address_where_nothing_listens_is_refused_before_the_run(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    error = refused(hubskills("eval", make_skill(tmp_path), "-m", "local/x", "--base-url", url))
    assert f"cannot reach {url}: connection refused (nothing listens there)" in error
    assert "--base-url" in error and no_run_saved()


def test_a_refused_tls_handshake_is_refused_before_the_run(server, tmp_path):
    url = server.url.replace("http://", "https://")  # the fake speaks plain HTTP
    error = refused(hubskills("eval", make_skill(tmp_path), "-m", "local/x", "--base-url", url))
    assert f"cannot reach {url}: the TLS handshake failed" in error
    assert completions(server) == 0 and no_run_saved()


def test_a_missing_route_is_refused_and_a_missing_model_listing_is_not(server, tmp_path):
    root = server.url.removesuffix("/v1")  # the common mistake: no /v1
    error = refused(hubskills("eval", make_skill(tmp_path), "-m", "local/x", "--base-url", root))
    assert f"{root} has no chat completions route (HTTP 404" in error and "/v1" in error
    assert completions(server) == 0 and no_run_saved()

    class NoListing(FakeOpenAIServer):
        models_path = "/v1/no-listing-here"  # GET /v1/models is a 404; chat is served

    with NoListing(responder=knows_fact_if_told) as bare:
        done = hubskills("eval", make_skill(tmp_path / "bare"), "-m", "local/x", "--base-url",
                         bare.url, "--runs", "1")
    assert done.exit_code == 0, done.output
    assert "helps" in done.stdout or "too few cases" in done.stdout


def test_a_dead_judge_is_refused_before_any_student_call(server, tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    error = refused(hubskills("eval", make_skill(tmp_path), "-m", "local/x", "--base-url",
                              server.url, "--judge", "openai/gpt-judge",
                              OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=url))
    assert f"cannot reach {url}" in error
    assert completions(server) == 0 and no_run_saved()


def test_a_dead_anthropic_endpoint_is_refused(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}"
    error = refused(hubskills("eval", make_skill(tmp_path), "-m", "anthropic/claude-x",
                              ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=url))
    assert f"cannot reach {url}: connection refused" in error and no_run_saved()


def test_a_dead_endpoint_is_refused_before_a_trigger_run(tmp_path):
    from test_trigger import make_skill as make_trigger_skill

    url = f"http://127.0.0.1:{closed_port()}/v1"
    error = refused(hubskills("eval", make_trigger_skill(tmp_path), "--mode", "trigger",
                              "-m", "local/x", "--base-url", url))
    assert f"cannot reach {url}: connection refused (nothing listens there)" in error
    assert "--base-url" in error and no_run_saved()


# --- a run that got no answers -----------------------------------------------------------------


def rejects(model: str):
    """A server that answers the listing, and every chat request for `model` with HTTP 400."""
    def responder(body: dict):
        if body["model"] == model:
            return {"status": 400, "error": {"message": "this model is switched off"}}
        return knows_fact_if_told(body)
    return responder


def test_a_run_where_no_model_answered_fails_with_the_first_cause(tmp_path):
    skill = make_skill(tmp_path, 12)
    with FakeOpenAIServer(responder=rejects("x")) as server:
        done = hubskills("eval", skill, "-m", "local/x", "--base-url", server.url, "--runs", "1")
    error = refused(done)
    assert "no model answered" in error and "switched off" in error
    assert "hubskills runs show" in error
    text = " ".join(done.stdout.split())
    assert "failed: no sample graded" in text and "no detectable effect" not in text
    assert "24 samples failed in transport (first: " in text and "switched off" in text
    assert "cache" not in text  # none of those answers came from it: there were none
    [run] = list_runs(Settings.from_env().runs_dir)
    rows = read_rows(Settings.from_env().runs_dir, run.run_id)
    assert len(rows) == 24 and {(r.error_kind, r.cached) for r in rows} == {("transport", False)}


def test_one_failed_model_is_reported_failed_and_the_run_goes_on(tmp_path):
    skill = make_skill(tmp_path, 12)
    with FakeOpenAIServer(responder=rejects("down")) as server:
        done = hubskills("eval", skill, "-m", "local/down", "-m", "local/up", "--base-url",
                         server.url, "--runs", "1", "--json")
    assert done.exit_code == 0, done.output
    summaries = {s["model"]: s for s in json.loads(done.stdout)["summaries"]}
    down, up = summaries["local/down"], summaries["local/up"]
    assert down["failed"] and down["errors"]["transport"] == 24
    assert "switched off" in down["errors"]["first_transport"]
    assert down["stats"]["verdict"] == "inconclusive: every sample errored"
    assert not up["failed"] and up["stats"]["verdict"] == "helps"


# --- a subset's pushability ------------------------------------------------------------------


def test_a_subset_run_says_what_push_does_with_it(server, tmp_path):
    skill = make_skill(tmp_path, 12)
    assert hubskills("publish", skill).exit_code == 0
    done = hubskills("eval", skill, "-m", "local/x", "--base-url", server.url, "--runs", "1",
                     "--cases", "q0,q1", "--push")
    assert done.exit_code == 0, done.output
    text = " ".join(done.stdout.split())
    assert "cannot be pushed" not in text
    assert "a subset of the suite is never ranked; pushed, its rows say so" in text
    assert "Pushed 4 rows of local/zorblax-ports v1.0.0" in text
    assert "(a subset run: 2 of 12 cases, listed unranked)" in text
    board = json.loads(hubskills("leaderboard", "--json").stdout)
    mine = [(e["cases"], e["rank"]) for e in board if "zorblax" in json.dumps(e)]
    assert mine == [(2, None)]


def test_a_cached_rerun_says_so_and_a_failed_one_does_not(server, tmp_path):
    skill = make_skill(tmp_path, 2)
    args = ("eval", skill, "-m", "local/x", "--base-url", server.url, "--runs", "1")
    assert "came from the cache" not in hubskills(*args).stdout
    assert "all answers came from the cache" in hubskills(*args).stdout
    assert completions(server) == 4

