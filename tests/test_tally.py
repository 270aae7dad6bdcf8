"""`tally` and `add_cost`, how every sample adds up its completions (result rows, trigger
sessions, agent outcomes, the teacher): tokens and latency add, cached only while every answer
was, and a dollar total turns unknown once one price is, never a low guess."""

from __future__ import annotations

from dataclasses import dataclass

from registry.evaluation.trigger import Session
from registry.providers import Completion, Usage
from registry.providers.base import add_cost, tally
from registry.results.runs import ResultRow


def completion(cost: float | None, tokens: tuple[int, int] = (10, 2)) -> Completion:
    return Completion(text="ok", tool_calls=[], finish_reason="stop", model="m", latency_s=0.5,
                      usage=Usage(*tokens), cost_usd=cost)


def test_an_unknown_price_makes_the_total_unknown_for_good():
    assert add_cost(0.25, 0.5) == 0.75
    assert add_cost(0.25, None) is None and add_cost(None, 0.5) is None


@dataclass
class Sample:
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = True
    cost_usd: float | None = 0.0


def test_a_sample_adds_up_its_completions():
    row = ResultRow(run_id="r", skill_name="s", model="m", arm="skill", case_id="c",
                    cost_usd=0.0, cached=True)
    for total in (Sample(), Session(), row):
        tally(total, completion(0.25), cached=True)
        tally(total, completion(0.5, (5, 1)), cached=False)
        assert (total.input_tokens, total.output_tokens, total.latency_s) == (15, 3, 1.0)
        assert total.cached is False and total.cost_usd == 0.75
        tally(total, completion(None), cached=True)
        assert total.cost_usd is None
        tally(total, completion(0.25), cached=True)
        assert total.cost_usd is None and total.input_tokens == 35
