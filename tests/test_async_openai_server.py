"""The asyncio fake (`fakes.async_openai_server`, the trigger bench's) speaks the same OpenAI wire
as `FakeOpenAIServer`: the real `openai` SDK and a whole trigger eval get the same answers from
both."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import openai
import pytest
from fakes.async_openai_server import AsyncOpenAIServer
from fakes.openai_server import FakeOpenAIServer
from fakes.trigger_model import TriggerModel

from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.trigger_run import run_trigger_eval

LISTING = ("Skills available:\n- zorblax-ports: Configure zorblax ports. "
           "(file: .agents/skills/zorblax-ports/SKILL.md)")
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                           "parameters": {"type": "object", "properties": {}}}}]


def ask(client: openai.AsyncOpenAI, query: str):
    messages = [{"role": "system", "content": LISTING}, {"role": "user", "content": query}]
    return client.chat.completions.create(model="m", messages=messages, tools=TOOLS)


def test_the_sdk_gets_answers_errors_and_keeps_its_connection() -> None:
    async def talk(url: str) -> None:
        client = openai.AsyncOpenAI(base_url=url, api_key="sk-test", max_retries=0)
        opened = await ask(client, "configure zorblax ports")
        answered = await ask(client, "what time is it")
        with pytest.raises(openai.BadRequestError, match="exploded"):
            await ask(client, "explode zorblax ports")
        both = await asyncio.gather(*(ask(client, "configure zorblax ports") for _ in range(4)))
        await client.close()
        call = opened.choices[0].message.tool_calls[0]
        assert (call.function.name, json.loads(call.function.arguments)) == (
            "read_file", {"path": ".agents/skills/zorblax-ports/SKILL.md"})
        assert opened.choices[0].finish_reason == "tool_calls"
        assert answered.choices[0].message.content == "I can answer that directly."
        assert answered.usage.prompt_tokens > 0
        assert all(r.choices[0].message.tool_calls for r in both)

    with AsyncOpenAIServer(responder=TriggerModel(threshold=2)) as server:
        asyncio.run(talk(server.url))


def test_a_trigger_eval_scores_the_same_against_either_fake(tmp_path: Path) -> None:
    skill = tmp_path / "zorblax-ports"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: zorblax-ports\ndescription: \"Configure ports "
                                    "of the zorblax daemon.\"\n---\nPort 4417.\n")
    queries = ["configure zorblax ports", "zorblax daemon crashed", "bake bread in an oven",
               "explode zorblax", "look around then configure zorblax ports", "what time"]
    (skill / "evals" / "triggers.json").write_text(json.dumps(
        [{"query": q, "should_trigger": "zorblax" in q} for q in queries]))

    def outcomes(server: FakeOpenAIServer | AsyncOpenAIServer, home: str) -> set[tuple]:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / home),
                                      "HUBSKILLS_BASE_URL": server.url})
        config = EvalConfig(models=["local/m"], mode="trigger", runs=2, concurrency=4,
                            use_cache=False)
        run = run_trigger_eval(skill, config, settings)
        return {(r.case_id, r.repeat, r.opened_skill, r.activated, r.turns, r.is_error)
                for r in run.rows}

    with FakeOpenAIServer(responder=TriggerModel(threshold=2)) as threaded:
        expected = outcomes(threaded, "a")
    with AsyncOpenAIServer(responder=TriggerModel(threshold=2)) as served:
        got = outcomes(served, "b")
    assert got == expected
    assert len(got) == 12
    assert sum(1 for row in got if row[-1]) == 2  # "explode": an HTTP 400 each run
    assert {row[4] for row in got if not row[-1]} == {1, 2}  # two calls after a look around
