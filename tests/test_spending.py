"""The cost cap (`providers.spending.CostCap`): every paid call reserves its worst case before it
is sent, so no number of calls in flight spends past `--max-cost`; a model without a known price
needs `--max-calls`. Checked over real HTTP with real concurrency against a metered fake that
bills each answer its whole `max_tokens`."""

from __future__ import annotations

import asyncio

import pytest
from fakes.metered_server import MeteredOpenAIServer, billing_max
from fakes.trigger_model import TriggerModel
from test_tune import BEST, FITS_TRAIN, scripted_teacher
from test_tune import config as tune_config
from test_tune import make_skill as make_trigger_skill
from test_verify import FAST, make_skill

from registry.cli import main
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.generate.tune import tune_description
from registry.providers import Message, Usage, cost, price_for, resolve
from registry.providers.spending import CapReached, CostCap, prompt_token_bound, worst_case

PRICED = "openai/gpt-4.1"  # $2 in / $8 out per Mtok
UNPRICED = "openai/fake-unpriced"  # in no catalogue


def rambling(body: dict) -> str:
    return "word " * 5000  # cut at max_tokens by the server


@pytest.fixture
def metered(monkeypatch):
    with MeteredOpenAIServer(responder=billing_max(rambling), api_key="k",
                             latency=0.05) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        yield server


def test_the_worst_case_bounds_the_bill():
    messages = [Message("system", "Be brief."), Message("user", "Héllo wörld, " * 50)]
    bound = prompt_token_bound(messages)
    assert bound >= sum(len(m.content.encode()) for m in messages)
    worst = worst_case(PRICED, messages, None, 300)
    assert worst == pytest.approx(cost(PRICED, Usage(input_tokens=bound, output_tokens=300)))
    assert worst_case("local/x", messages, None, 300) == 0.0  # runs here: free
    assert worst_case(UNPRICED, messages, None, 300) is None and price_for(UNPRICED) is None


def test_a_cap_refuses_a_call_that_would_not_fit_and_waits_for_one_that_may(metered):
    model = resolve(PRICED, Settings.from_env(), retry=FAST)
    ask = [Message("user", "hello")]
    one = worst_case(PRICED, ask, None, 1000)
    cap = CostCap(max_cost=one * 2.5)

    async def eight() -> list[object]:
        return await asyncio.gather(*(cap.complete(model, ask, max_tokens=1000)
                                      for _ in range(8)), return_exceptions=True)

    found = asyncio.run(eight())
    answered = [f for f in found if not isinstance(f, BaseException)]
    assert len(answered) == 2 and all(isinstance(f, CapReached) for f in found if f not in
                                      answered)
    assert metered.calls == 2 and metered.billed(PRICED) <= cap.max_cost
    assert cap.spent == pytest.approx(metered.billed(PRICED)) and cap.reached


def test_eval_never_spends_past_max_cost_with_eight_calls_in_flight(metered, tmp_path):
    skill = make_skill(tmp_path, with_python=False)
    one = metered_call_cost(skill)
    cap = 24 * one  # room for 24 of the 40 samples' calls
    run = run_evaluation(skill, EvalConfig(models=[PRICED], runs=2, retry=FAST, max_cost=cap,
                                           concurrency=8, max_tokens=2000, use_cache=False),
                         Settings.from_env())
    assert metered.peak >= 8  # calls really were in flight together
    assert metered.billed(PRICED) <= cap, (metered.calls, metered.billed(PRICED), cap)
    assert run.manifest.status == "stopped" and run.manifest.partial
    assert metered.calls == len(run.rows) < 40
    assert "--max-cost" in (run.manifest.note or "")


def metered_call_cost(skill) -> float:
    """What one sample of `make_skill`'s suite is billed at 2,000 output tokens (about)."""
    return cost(PRICED, Usage(input_tokens=200, output_tokens=2000)) or 0.0


def test_a_model_without_a_price_needs_max_calls_before_any_call(metered, tmp_path):
    skill = make_skill(tmp_path, with_python=False)
    config = EvalConfig(models=[UNPRICED], runs=2, retry=FAST, max_cost=1.0, use_cache=False)
    with pytest.raises(HubskillsError, match="no known price") as refused:
        run_evaluation(skill, config, Settings.from_env())
    assert "--max-calls" in (refused.value.hint or "")
    assert metered.calls == 0 and not any(Settings.from_env().runs_dir.glob("*"))
    config.max_calls, config.concurrency = 7, 8
    run = run_evaluation(skill, config, Settings.from_env())
    assert metered.calls == 7 and run.manifest.status == "stopped"
    assert "--max-calls 7" in (run.manifest.note or "")


def test_the_eval_cli_takes_max_calls(metered, tmp_path, capsys):
    skill = make_skill(tmp_path, with_python=False)
    args = ["eval", str(skill), "-m", UNPRICED, "--runs", "1", "--max-cost", "1"]
    assert run_cli(*args) == 1
    assert f"Hint: hubskills eval {skill} --max-calls N" in capsys.readouterr().err
    assert metered.calls == 0
    run_cli(*args, "--max-calls", "3", "--no-cache")
    assert metered.calls == 3, capsys.readouterr()


def run_cli(*args: str) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
        raise SystemExit(0)
    return int(exit_info.value.code or 0)


def test_tune_never_spends_past_max_cost_with_eight_calls_in_flight(monkeypatch, tmp_path):
    model = TriggerModel(teacher=scripted_teacher(FITS_TRAIN, BEST, BEST))
    with MeteredOpenAIServer(responder=billing_max(model), api_key="k", latency=0.05) as srv:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.url})
        skill = make_trigger_skill(tmp_path)
        one = cost(PRICED, Usage(input_tokens=300, output_tokens=2000)) or 0.0
        cap = 40 * one  # round 0 (32 sessions) and part of round 1
        config = tune_config(tmp_path, models=[PRICED], runs=4, use_cache=False,
                             concurrency=8, max_tokens=2000, max_cost=cap)
        result = tune_description(skill, config, settings, teacher=PRICED, rounds=3)
        assert srv.peak >= 8
        assert srv.billed(PRICED) <= cap, (srv.calls, srv.billed(PRICED), cap)
    assert result.status == "stopped" and result.candidates[0].holdout is not None


def test_tune_refuses_an_unpriced_model_without_max_calls(monkeypatch, tmp_path, capsys):
    model = TriggerModel(teacher=scripted_teacher(FITS_TRAIN, BEST, BEST))
    with MeteredOpenAIServer(responder=billing_max(model), api_key="k") as srv:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.url})
        skill = make_trigger_skill(tmp_path)
        config = tune_config(tmp_path, models=[UNPRICED], use_cache=False, max_cost=1.0)
        with pytest.raises(HubskillsError, match="no known price") as refused:
            tune_description(skill, config, settings, teacher=PRICED, rounds=2)
        assert "--max-calls" in (refused.value.hint or "") and srv.calls == 0
        config.max_calls = 5
        with pytest.raises(HubskillsError, match="reached before the original"):
            tune_description(skill, config, settings, teacher=PRICED, rounds=2)
        assert srv.calls == 5  # 8 queries: round 0 cannot finish within 5 calls
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        assert run_cli("tune", str(skill), "-m", UNPRICED, "--teacher", PRICED, "--max-cost",
                       "1", "--distractors", str(tmp_path / "installed")) == 1
        assert f"Hint: hubskills tune {skill} -m {UNPRICED} --max-calls N" in \
            capsys.readouterr().err
        assert srv.calls == 5
