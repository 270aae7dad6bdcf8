"""Pairwise judge checks: both arms' answers compared in both orders, over real HTTP to a
scripted judge on the fake OpenAI server; replayed by `verify` from the stored replies."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from cli_process import hubskills, runs
from fakes.gate import Gate
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import FAST, knows_fact_if_told, make_skill

from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.arms import build_arm
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.evaluation.pairwise import pairwise_messages
from registry.evaluation.preflight import check_suite
from registry.evaluation.stopping import StopSignal
from registry.format.skill import load_skill
from registry.format.suite import load_suite, suite_path
from registry.providers import worst_case
from registry.registries import get_store
from registry.results.pairwise import outcome_of
from registry.results.report import summarize
from registry.results.runs import ResultRow, RunManifest
from registry.verify.replay import verify_run
from registry.verify.resample import ARMS, estimate, plan_check

N_CASES, RUNS = 3, 2
PAIRS = N_CASES * RUNS
RUBRIC = "The answer names the daemon's real port."


def pairwise_skill(root: Path, *, with_contains: bool = False, cases: int = N_CASES) -> Path:
    """The zorblax skill whose cases carry a pairwise check (and, if asked, a contains)."""
    folder = make_skill(root, cases)
    suite_file = folder / "evals" / "evals.json"
    suite = json.loads(suite_file.read_text())
    for case in suite["cases"]:
        case["checks"] = [{"type": "pairwise", "rubric": RUBRIC}] + (
            [{"type": "contains", "value": ["port"]}] if with_contains else [])
    suite_file.write_text(json.dumps(suite))
    return folder


def answers(body: dict) -> tuple[str, str] | None:
    """The two answers of a pairwise request, or None for any other request."""
    text = body["messages"][-1]["content"] if body["messages"] else ""
    found = re.search(r"<answer_a>\n(.*)\n</answer_a>.*<answer_b>\n(.*)\n</answer_b>", text,
                      re.S)
    return None if found is None else (found.group(1), found.group(2))


def first_preferring(body: dict) -> str:
    """A judge with total position bias: whatever is shown first wins."""
    if answers(body) is not None:
        return "VERDICT: A\nREASON: the first answer reads better."
    return knows_fact_if_told(body)


def skill_preferring(body: dict) -> str:
    """A fair judge: the answer naming port 4417 wins, in either order."""
    pair = answers(body)
    if pair is not None:
        return f"VERDICT: {'A' if '4417' in pair[0] else 'B'}\nREASON: names the port."
    return knows_fact_if_told(body)


def judge_requests(server: FakeOpenAIServer) -> list[dict]:
    return [b for b in server.bodies if answers(b) is not None]


def evaluate(skill: Path, server: FakeOpenAIServer, home: Path, **overrides):
    values = {"models": ["local/fake-student"], "runs": RUNS, "judge": "local/fake-judge",
              "retry": FAST, **overrides}
    config = EvalConfig(**values)
    settings = Settings.from_env({"HUBSKILLS_HOME": str(home),
                                  "HUBSKILLS_BASE_URL": server.url})
    return run_evaluation(skill, config, settings), settings


def pairwise_verdicts(rows, arm: str):
    return [c for r in rows if r.arm == arm for c in r.checks if c.type == "pairwise"]


def test_a_judge_that_prefers_the_first_answer_ties_every_sample(tmp_path):
    with FakeOpenAIServer(responder=first_preferring) as server:
        run, _ = evaluate(pairwise_skill(tmp_path), server, tmp_path / "home")
        asked = judge_requests(server)
    # each pair judged in both orders; a case's repeats answer alike here, so their pairs ask
    # the same two questions, and a second asking may be served by the response cache (or
    # not, when both are in flight at once): count the questions, not the requests
    distinct = {json.dumps(b["messages"], sort_keys=True): b for b in asked}.values()
    assert len(distinct) == 2 * N_CASES and 2 * N_CASES <= len(asked) <= 2 * PAIRS
    # each order puts the other arm's answer first
    firsts = sorted("4417" in answers(b)[0] for b in distinct)
    assert firsts == [False] * N_CASES + [True] * N_CASES
    [summary] = summarize(run.rows)
    pw = summary.pairwise
    assert (pw.pairs, pw.ties, pw.skill_wins, pw.baseline_wins) == (PAIRS, PAIRS, 0, 0)
    assert (pw.disagreed, pw.no_verdict, pw.bias_rate) == (PAIRS, 0, 1.0)
    for arm in ("baseline", "skill"):
        verdicts = pairwise_verdicts(run.rows, arm)
        assert len(verdicts) == PAIRS
        assert all(v.passed and v.reason.startswith("tie (the orders disagreed") for v in verdicts)
    # a tie moves neither arm: no lift from a judge that only reads positions
    assert summary.stats.lift == 0.0 and summary.stats.b == summary.stats.c == 0
    assert run.manifest.summaries[0]["pairwise"]["bias_rate"] == 1.0  # the stored summary


def test_a_judge_that_prefers_the_skill_in_both_orders_gives_it_the_wins(tmp_path):
    with FakeOpenAIServer(responder=skill_preferring) as server:
        run, _ = evaluate(pairwise_skill(tmp_path, with_contains=True), server,
                          tmp_path / "home")
    [summary] = summarize(run.rows)
    pw = summary.pairwise
    assert (pw.pairs, pw.skill_wins, pw.baseline_wins, pw.ties) == (PAIRS, PAIRS, 0, 0)
    assert (pw.disagreed, pw.bias_rate) == (0, 0.0)
    assert all(v.passed for v in pairwise_verdicts(run.rows, "skill"))
    assert not any(v.passed for v in pairwise_verdicts(run.rows, "baseline"))
    assert summary.stats.skill.pass_rate == 1.0 and summary.stats.baseline.pass_rate == 0.0
    stored = run.manifest.summaries[0]["pairwise"]
    assert (stored["skill_wins"], stored["bias_rate"]) == (PAIRS, 0.0)
    # both rows of a pair store the same two replies, the skill's answer first in one
    skill_row = next(r for r in run.rows if r.arm == "skill")
    twin = next(r for r in run.rows if r.arm == "baseline" and r.case_id == skill_row.case_id
                and r.repeat == skill_row.repeat)
    assert skill_row.checks[0].answer == twin.checks[0].answer
    assert outcome_of(skill_row.checks[0].answer).winner == "skill"


def test_a_rerun_asks_the_judge_nothing(tmp_path):
    skill = pairwise_skill(tmp_path)
    with FakeOpenAIServer(responder=skill_preferring) as server:
        first, _ = evaluate(skill, server, tmp_path / "home")
        calls = len(server.bodies)
        again, _ = evaluate(skill, server, tmp_path / "home")
        assert len(server.bodies) == calls  # answers and comparisons from the cache
    assert summarize(again.rows)[0].pairwise == summarize(first.rows)[0].pairwise
    assert again.manifest.run_id != first.manifest.run_id


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "rows.jsonl").read_text().splitlines()]


def _write(folder: Path, rows: list[dict]) -> None:
    (folder / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_verify_replays_the_stored_comparisons_and_catches_a_tampered_one(tmp_path):
    with FakeOpenAIServer(responder=skill_preferring) as server:
        run, settings = evaluate(pairwise_skill(tmp_path, with_contains=True), server,
                                 tmp_path / "home")
        calls = len(server.bodies)

        def verify():
            return verify_run(run.manifest.run_id, settings,
                              open_store=lambda: get_store(settings))

        report = verify()
        assert report.status == "verified", report.to_dict()
        assert report.checks_regraded == 2 * 2 * PAIRS  # the pairwise and contains checks
        assert len(server.bodies) == calls  # re-parsed, never asked again
        folder = settings.runs_dir / run.manifest.run_id
        genuine = _rows(folder)

        # one stored reply edited: the baseline now "wins" the order it was shown first in
        rows = json.loads(json.dumps(genuine))
        row = next(r for r in rows if r["arm"] == "skill")
        replies = json.loads(row["checks"][0]["answer"])
        replies["baseline_as_a"] = "VERDICT: A\nREASON: edited."
        row["checks"][0]["answer"] = json.dumps(replies)
        _write(folder, rows)
        report = verify()
        assert report.status == "mismatch"
        fields = {(d.sample.split(" #")[0], d.field) for d in report.differences}
        assert (row["case_id"], "check 1 (pairwise)") in fields

        # both rows of a pair edited alike, each verdict made to match its reply: the two
        # rows still have to agree with each other
        rows = json.loads(json.dumps(genuine))
        base = next(r for r in rows if r["arm"] == "baseline")
        replies = {"skill_as_a": "VERDICT: B", "baseline_as_a": "VERDICT: A"}
        base["checks"][0].update(answer=json.dumps(replies), passed=True)
        base["passed"], base["score"] = False, 0.5
        _write(folder, rows)
        report = verify()
        assert report.status == "mismatch"
        assert any(d.field == "check 1 (pairwise)" and d.regraded == "error"
                   for d in report.differences)
        assert len(server.bodies) == calls


def test_bad_pairwise_input_is_refused_before_any_call(tmp_path):
    skill = pairwise_skill(tmp_path)
    with pytest.raises(HubskillsError) as one_arm:
        check_suite(load_suite(skill / "evals" / "evals.json"), judge="local/j", runs=1,
                    command=f"hubskills eval {skill}", arms=("skill",))
    assert "one arm only" in one_arm.value.message and one_arm.value.hint
    with FakeOpenAIServer(responder=skill_preferring) as server:
        with pytest.raises(HubskillsError, match="no --judge model was given"):
            evaluate(skill, server, tmp_path / "home", judge=None)
        assert server.requests == []


def test_an_empty_rubric_is_refused_by_the_cli(tmp_path):
    skill = pairwise_skill(tmp_path)
    suite_file = skill / "evals" / "evals.json"
    suite_file.write_text(suite_file.read_text().replace(RUBRIC, "  "))
    with FakeOpenAIServer(responder=skill_preferring) as server:
        done = hubskills("eval", str(skill), "-m", "local/fake", "--judge", "local/judge",
                         "--base-url", server.url, "--runs", "1")
        assert server.requests == []
    assert done.returncode == 1 and "Traceback" not in done.stderr
    err = " ".join(done.stderr.split())
    assert "a pairwise check needs a rubric" in err and "Hint:" in err
    assert runs(Path(os.environ["HUBSKILLS_HOME"])) == []  # no run folder left behind


def test_the_run_summary_shows_the_position_bias(tmp_path):
    skill = pairwise_skill(tmp_path)
    with FakeOpenAIServer(responder=first_preferring) as server:
        done = hubskills("eval", str(skill), "-m", "local/fake", "--judge", "local/judge",
                         "--base-url", server.url, "--runs", "1")
    assert done.returncode == 0, done.stderr
    out = " ".join(done.stdout.split())
    assert f"pairwise judge: skill preferred in 0, baseline in 0, tie in {N_CASES} of " \
           f"{N_CASES} pairs; position bias 100% (the two orders disagreed in {N_CASES} of " \
           f"{N_CASES})" in out


def stopped_by_the_cap(skill: Path, server: FakeOpenAIServer, home: Path):
    """A run the cap stops mid-way (12 answers and 12 comparisons; room for 15 calls), checked:
    every answer the student gave is written, judged pairs whole, the others saying why."""
    run, settings = evaluate(skill, server, home, max_calls=2 * PAIRS + 3, concurrency=1)
    assert run.manifest.status == "stopped"
    assert len(run.rows) == len([b for b in server.bodies if answers(b) is None])
    verdicts = {(r.case_id, r.repeat, r.arm): c for r in run.rows for c in r.checks
                if c.type == "pairwise"}
    judged = {(case, repeat) for (case, repeat, _), c in verdicts.items() if c.answer}
    unjudged = {(case, repeat) for (case, repeat, _), c in verdicts.items() if not c.answer}
    assert judged and unjudged and not judged & unjudged
    for (case, repeat, arm), verdict in verdicts.items():
        if (case, repeat) in judged:  # both arms store the same replies
            other = "skill" if arm == "baseline" else "baseline"
            assert verdicts[(case, repeat, other)].answer == verdict.answer
        else:
            assert verdict.passed is None and "run stopped before" in verdict.reason
    return run, settings, judged


def resumed(skill: Path, server: FakeOpenAIServer, run, settings):
    calls = len(server.bodies)
    done = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=RUNS,
                                            judge="local/fake-judge", retry=FAST),
                          settings, resume=run.manifest.run_id)
    asked, new = server.bodies[:calls], server.bodies[calls:]
    assert done.manifest.status == "complete"
    assert not [body for body in new if body in asked]  # nothing is asked twice
    assert verify_run(done.manifest.run_id, settings,
                      open_store=lambda: get_store(settings)).status == "verified"
    return done


def test_a_pair_cut_short_by_the_cap_keeps_its_answers_and_resume_judges_it(tmp_path):
    skill = pairwise_skill(tmp_path)
    with FakeOpenAIServer(responder=skill_preferring) as server:
        run, settings, _ = stopped_by_the_cap(skill, server, tmp_path / "home")
        # a row with no verdict but the skipped pairwise one is an error row: resume retries
        # both arms (their answers from the cache) and judges the pair
        assert all(r.is_error for r in run.rows if not r.checks[0].answer)
        done = resumed(skill, server, run, settings)
    assert summarize(done.rows)[0].pairwise.skill_wins == PAIRS


def test_a_pair_cut_short_keeps_its_other_verdicts_and_stays_unjudged_on_resume(tmp_path):
    skill = pairwise_skill(tmp_path, with_contains=True)
    with FakeOpenAIServer(responder=skill_preferring) as server:
        run, settings, judged = stopped_by_the_cap(skill, server, tmp_path / "home")
        assert not any(r.is_error for r in run.rows)  # graded by `contains`: kept as answered
        done = resumed(skill, server, run, settings)
    assert len(done.rows) == 2 * PAIRS
    assert summarize(done.rows)[0].pairwise.skill_wins == len(judged)


def test_a_stop_while_the_judge_compares_keeps_both_answers(tmp_path):
    skill = pairwise_skill(tmp_path, cases=1)
    stop = StopSignal()
    gate = Gate(free=0, answer=skill_preferring)  # holds the judge until the test ends

    def stop_at_the_judge(body: dict) -> str:
        if answers(body) is None:
            return skill_preferring(body)
        stop.request("test")  # both arms are answered and graded: the pair is being compared
        return gate(body)

    with FakeOpenAIServer(responder=stop_at_the_judge) as server:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      "HUBSKILLS_BASE_URL": server.url})
        try:
            run = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1,
                                                   judge="local/fake-judge", retry=FAST),
                                 settings, stop=stop)
        finally:
            gate.opened.set()
    assert run.manifest.status == "interrupted"
    assert sorted(r.arm for r in run.rows) == ["baseline", "skill"]
    assert all(r.output and "run stopped before" in r.checks[0].reason for r in run.rows)


def test_a_spot_check_estimate_counts_both_orders_of_each_pair(tmp_path):
    skill = load_skill(pairwise_skill(tmp_path))
    suite = load_suite(suite_path(skill.path), skill_dir=skill.path)
    manifest = RunManifest(run_id="r", skill_name=skill.name, content_hash="", suite_hash="",
                           models=["openai/gpt-4.1"], mode="inline", max_tokens=700,
                           judge="openai/gpt-4.1-mini")
    rows = [ResultRow(run_id="r", skill_name="s", model="openai/gpt-4.1", arm=arm,
                      case_id=f"q{i}") for i in range(N_CASES) for arm in ARMS]
    times = 3  # each case drawn this many times: 3 x N_CASES samples per arm, at least MIN_K
    _, check = plan_check(manifest, rows, times * N_CASES, seed=0)
    estimate(check, manifest, skill, suite, runs=times)  # each case asked `times` times
    answers_only = sum(worst_case("openai/gpt-4.1", build_arm(arm, case, skill).messages, None,
                                  700) for case in suite.cases for arm in ARMS)
    one_order = [worst_case("openai/gpt-4.1-mini",
                            pairwise_messages(RUBRIC, case.prompt, "", ""), None, 200,
                            more_prompt=1400) for case in suite.cases]
    assert check.calls == times * (2 * N_CASES + 2 * N_CASES)
    assert check.estimated_cost == pytest.approx(times * (answers_only + 2 * sum(one_order)))


def test_a_judge_that_fails_makes_both_rows_check_errors_and_no_verdict_is_a_tie(tmp_path):
    def failing_on_one_case(body: dict):
        pair = answers(body)
        if pair is None:
            return knows_fact_if_told(body)
        if "Question 0" in body["messages"][-1]["content"]:
            return {"status": 500}  # retried, then a failure of the judge
        return "I cannot decide."  # no verdict line: neither answer loses for it

    with FakeOpenAIServer(responder=failing_on_one_case) as server:
        run, _ = evaluate(pairwise_skill(tmp_path), server, tmp_path / "home")
    failed = [r for r in run.rows if r.case_id == "q0"]
    assert len(failed) == 2 * RUNS
    assert all(r.error_kind == "check" and r.error.startswith("pairwise: judge error")
               and not r.checks for r in failed)
    [summary] = summarize(run.rows)
    assert summary.errors.check == 2 * RUNS  # out of both arms' denominators
    pw = summary.pairwise
    assert (pw.pairs, pw.ties, pw.no_verdict, pw.disagreed, pw.bias_rate) == \
        (PAIRS - RUNS, PAIRS - RUNS, PAIRS - RUNS, 0, None)


@pytest.mark.parametrize(("skill_as_a", "baseline_as_a", "winner", "disagreed"), [
    ("VERDICT: A", "VERDICT: B", "skill", False),  # the skill's answer, in both orders
    ("VERDICT: B", "VERDICT: A", "baseline", False),
    ("VERDICT: A", "VERDICT: A", None, True),  # whatever came first: position bias
    ("VERDICT: B", "VERDICT: B", None, True),  # whatever came second
    ("VERDICT: TIE", "VERDICT: TIE", None, False),
    ("VERDICT: A", "VERDICT: TIE", None, True),
    ("VERDICT: **a**", "verdict = b\nREASON: x", "skill", False),  # as the judge check reads
    ("VERDICT: A", "no idea", None, False),  # no verdict: a tie, not a disagreement
])
def test_the_two_orders_decide_the_winner(skill_as_a, baseline_as_a, winner, disagreed):
    outcome = outcome_of(json.dumps({"skill_as_a": skill_as_a, "baseline_as_a": baseline_as_a}))
    assert (outcome.winner, outcome.disagreed) == (winner, disagreed)
    passes = {arm: outcome.verdict(arm)[0] for arm in ARMS}
    assert passes == ({"baseline": True, "skill": True} if winner is None
                      else {winner: True, "skillbaseline".replace(winner, ""): False})


def test_a_judge_check_with_the_same_rubric_replays_apart_from_the_pairwise_one(tmp_path):
    def both_judges(body: dict) -> str:
        text = body["messages"][-1]["content"] if body["messages"] else ""
        if "<answer>" in text:  # the judge check's request: one answer
            return f"VERDICT: {'PASS' if '4417' in text.split('<answer>')[1] else 'FAIL'}"
        return skill_preferring(body)

    skill = pairwise_skill(tmp_path)
    suite_file = skill / "evals" / "evals.json"
    suite = json.loads(suite_file.read_text())
    for case in suite["cases"]:
        case["checks"].insert(0, {"type": "judge", "rubric": RUBRIC})  # before the pairwise one
    suite_file.write_text(json.dumps(suite))
    with FakeOpenAIServer(responder=both_judges) as server:
        run, settings = evaluate(skill, server, tmp_path / "home")
        report = verify_run(run.manifest.run_id, settings,
                            open_store=lambda: get_store(settings))
    assert report.status == "verified", report.to_dict()
    assert report.checks_regraded == 2 * 2 * PAIRS


def test_generate_rounds_give_a_pairwise_suite_its_judge(tmp_path):
    from registry.generate.rounds import needs_judge

    suite = load_suite(pairwise_skill(tmp_path) / "evals" / "evals.json")
    assert needs_judge(suite) and suite.judge_only_cases() == ["q0", "q1", "q2"]


def test_an_adaptive_run_judges_each_round_s_pairs_before_it_plans_the_next(tmp_path):
    with FakeOpenAIServer(responder=skill_preferring) as server:
        run, _ = evaluate(pairwise_skill(tmp_path, cases=20), server, tmp_path / "home",
                          runs=3, design="adaptive")
    # every case won in both orders: "helps" is decided once every case has its first run
    # (rounds 1 and 2: each run is asked in two halves of the cases)
    assert run.manifest.design_stops["local/fake-student"]["verdict"] == "helps"
    assert len(run.rows) == 40 and {r.round for r in run.rows} == {1, 2}
    pw = summarize(run.rows)[0].pairwise
    assert (pw.pairs, pw.skill_wins, pw.bias_rate) == (20, 20, 0.0)
