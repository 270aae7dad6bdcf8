"""`hubskills eval` says what a run will take before its first model call: the time at a
typical pace and the cost, the same estimate the Space's Evaluate form shows
(`registry.evaluation.estimate`; issue 38)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import knows_fact_if_told, make_skill

from registry.cli import cli
from registry.evaluation.config import EvalConfig
from registry.evaluation.estimate import cost_text, duration, plan
from registry.format.skill import load_skill
from registry.format.suite import load_suite, suite_path


def test_a_priced_model_is_priced_and_timed_before_it_answers(tmp_path):
    folder = make_skill(tmp_path, 4)
    env = {"NO_COLOR": "1", "COLUMNS": "200", "HUBSKILLS_HOME": str(tmp_path / "home"),
           "OPENAI_API_KEY": "sk-test"}
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        env["OPENAI_BASE_URL"] = server.url
        result = CliRunner().invoke(cli, ["eval", str(folder), "-m", "openai/gpt-4o-mini",
                                          "--runs", "1", "--max-tokens", "300"], env=env)
        assert result.exit_code == 0, result.output
    skill = load_skill(folder)
    expected = plan(skill, load_suite(suite_path(folder), skill_dir=folder).cases,
                    EvalConfig(models=["openai/gpt-4o-mini"], runs=1, max_tokens=300))
    # 4 cases x 1 run x 2 arms, 300 tokens out at $0.60 a million each: $0.00144, and prompts
    assert expected.answers == 8 and 0.00144 < expected.cost < 0.0015
    line = (f"8 answers to get ({duration(expected.seconds)} at a typical pace; "
            f"{cost_text(expected)})")
    assert line == "8 answers to get (about 8 s at a typical pace; up to about $0.0015)"
    assert line in result.output
    assert result.output.index(line) < result.output.index("zorblax-ports · 4 cases")


def test_answers_the_cache_holds_are_left_out_of_the_estimate_and_are_not_asked(tmp_path):
    """Iterating on a skill reruns its baseline arm from the cache: the estimate says so and
    counts only the answers still to ask, and the model is asked exactly those."""
    folder = make_skill(tmp_path, 4)
    env = {"NO_COLOR": "1", "COLUMNS": "200", "HUBSKILLS_HOME": str(tmp_path / "home"),
           "OPENAI_API_KEY": "sk-test"}
    args = ["eval", str(folder), "-m", "openai/gpt-4o-mini", "--runs", "1",
            "--max-tokens", "300"]
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        env["OPENAI_BASE_URL"] = server.url
        assert CliRunner().invoke(cli, args, env=env).exit_code == 0
        skill_md = folder / "SKILL.md"
        skill_md.write_text(skill_md.read_text() + "\nAsk the operator when unsure.\n")
        asked_before = len(server.bodies)
        edited = CliRunner().invoke(cli, args, env=env)
        assert edited.exit_code == 0, edited.output
        assert len(server.bodies) - asked_before == 4  # the skill arm only
        again = CliRunner().invoke(cli, args, env=env)
        assert again.exit_code == 0 and len(server.bodies) - asked_before == 4
    whole = plan(load_skill(folder), load_suite(suite_path(folder), skill_dir=folder).cases,
                 EvalConfig(models=["openai/gpt-4o-mini"], runs=1, max_tokens=300))
    rest = whole.share(4)
    assert (f"8 answers to get (4 of them cached; the rest {duration(rest.seconds)} at a "
            f"typical pace; {cost_text(rest)})") in edited.output
    assert cost_text(rest) != cost_text(whole)
    assert "8 answers to get (all of them cached: nothing to ask, free)" in again.output


def test_a_part_of_a_run_is_that_share_of_its_time_and_cost(tmp_path):
    folder = make_skill(tmp_path, 10)
    cases = load_suite(suite_path(folder), skill_dir=folder).cases
    whole = plan(load_skill(folder), cases, EvalConfig(models=["openai/gpt-4o-mini",
                                                               "local/x"], runs=3))
    assert whole.answers == 120 and whole.unpriced == ()
    half = whole.share(60)
    assert (half.answers, half.seconds, half.cost) == (60, whole.seconds / 2, whole.cost / 2)
    unpriced = plan(load_skill(folder), cases, EvalConfig(models=["hf/org/no-such-model"]))
    assert cost_text(unpriced) == "cost unknown for hf/org/no-such-model"
    assert duration(59.4) == "about 59 s" and duration(3 * 3600 + 5 * 60) == "about 3 h 5 min"


def test_the_embedded_model_is_timed_at_a_typical_answers_length_not_its_cap():
    """A walk: "about 10 min" for a run that took 1 min 57 s; every answer had been assumed to
    run to its 512-token cap, where the answers averaged 155 tokens."""
    from registry.evaluation.estimate import seconds_per_answer
    from registry.providers.refs import EMBEDDED_REF

    typical, measured = seconds_per_answer(EMBEDDED_REF, 512)
    assert typical == pytest.approx(0.5 + 160 / 60) and not measured
    assert seconds_per_answer(EMBEDDED_REF, 4096)[0] == typical  # the cap is no length
    assert seconds_per_answer(EMBEDDED_REF, 64)[0] == pytest.approx(0.5 + 64 / 60)
