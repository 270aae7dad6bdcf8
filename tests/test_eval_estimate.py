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


def test_the_embedded_models_estimate_counts_its_load_and_reading_each_prompt(tmp_path):
    """A walk: `--runs 1 --cases allowed-keys` said "about 6 s at a typical pace" and took
    22 s. The estimate had counted only the answers' tokens: not the model's load, nor reading
    the skill (7 s for an 800-token skill on a busy machine), and two answers ran to 448 and
    512 tokens, which it did not bound."""
    from registry.evaluation import estimate
    from registry.providers.refs import EMBEDDED_REF

    folder = make_skill(tmp_path, 3)
    skill, cases = load_skill(folder), load_suite(suite_path(folder), skill_dir=folder).cases
    config = EvalConfig(models=[EMBEDDED_REF], runs=2, max_tokens=512)
    cold = plan(skill, cases, config, loaded=False)
    warm = plan(skill, cases, config, loaded=True)
    answers = 3 * 2 * 2  # cases x runs x arms
    answering = answers * estimate.seconds_per_answer(EMBEDDED_REF, 512)[0]
    # the skill, read once: the engine keeps what it read for the next skill-arm answer
    reading = (skill.token_estimate()["body"] + 32) / estimate.EMBEDDED_PREFILL_TOKENS_PER_S
    assert (warm.load_s, cold.load_s) == (0.0, estimate.EMBEDDED_LOAD_S)
    assert warm.seconds == pytest.approx(answering + reading)
    assert cold.seconds == pytest.approx(warm.seconds + estimate.EMBEDDED_LOAD_S)
    # should every answer run to its cap: 512 tokens where 160 are typical
    to_cap = answers * (512 - estimate.EMBEDDED_TYPICAL_TOKENS) / estimate.EMBEDDED_TOKENS_PER_S
    assert cold.longest == pytest.approx(cold.seconds + to_cap)
    assert estimate.time_text(cold, 512) == (f"{duration(cold.seconds)} at a typical pace, up "
                                             f"to {duration(cold.longest)} if answers run to "
                                             "512 tokens")
    # a longer skill takes longer to read, once (not once for each of the 6 skill-arm answers)
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + "word " * 400)
    longer = plan(load_skill(folder), cases, config, loaded=True)
    extra = load_skill(folder).token_estimate()["body"] - skill.token_estimate()["body"]
    assert extra > 0
    assert longer.seconds - warm.seconds == pytest.approx(
        extra / estimate.EMBEDDED_PREFILL_TOKENS_PER_S)
    # what a resumed run has left still loads the model once
    half = cold.share(answers // 2)
    assert half.seconds == pytest.approx(cold.load_s + (cold.seconds - cold.load_s) / 2)
    # a pace this Space measured is the whole of it: nothing added, no bound
    timed = plan(skill, cases, config, {EMBEDDED_REF: 2.0}, loaded=False)
    assert (timed.seconds, timed.load_s, timed.longest) == (answers * 2.0, 0.0, None)
    assert estimate.time_text(timed, 512) == "about 24 s at a typical pace"
