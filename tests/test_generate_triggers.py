"""`generate` writes `evals/triggers.json` beside the test suite: the teacher (a fake OpenAI
server) is shown the name and description, its reply is held to `validate`'s rules (one repair),
and the suite is saved with its split fixed."""

from __future__ import annotations

import json

import pytest
from fakes.llm_server import content_text
from fakes.openai_server import FakeOpenAIServer
from test_generate import TRIGGERS, Scripted, run

from registry.format.triggers import load_triggers, triggers_path
from registry.format.validate import validate_skill
from registry.generate.teacher import TeacherFormatError
from registry.generate.trigger_suite import parse_trigger_reply, write_trigger_suite

FEW = "```json\n" + json.dumps(TRIGGERS[:5]) + "\n```"


class TriggerScripted(Scripted):
    """`Scripted`, with the trigger replies queued in `triggers` (then the default)."""

    def __init__(self, *replies: str) -> None:
        super().__init__()
        self.queued = list(replies)
        self.trigger_prompts: list[str] = []

    def __call__(self, body: dict) -> str:
        last = content_text(body["messages"][-1]["content"])
        if "trigger queries for the Agent Skill" in last or "list of {\"query\"" in last:
            self.trigger_prompts.append(last)
            return self.queued.pop(0) if self.queued else \
                "```json\n" + json.dumps(TRIGGERS) + "\n```"
        return super().__call__(body)


def test_generate_writes_a_valid_trigger_suite_with_a_fixed_split(tmp_path):
    script = TriggerScripted(FEW)  # 5 queries: sent back once for 20
    with FakeOpenAIServer(responder=script) as server:
        report = run(server, tmp_path, no_eval=True)
    folder = tmp_path / "out" / "zorblax-ops"
    suite = load_triggers(triggers_path(folder))
    assert report.trigger_queries == 20 and len(suite.queries) == 20
    assert suite.shape == "hubskills" and all(q.split_given for q in suite.queries)
    assert suite.counts() == {"train": {"should": 6, "should_not": 6},
                              "holdout": {"should": 4, "should_not": 4}}
    data = json.loads(triggers_path(folder).read_text())
    assert data["skill_name"] == "zorblax-ops" and data["queries"][0]["split"] in (
        "train", "holdout")
    assert not [p for p in validate_skill(folder) if "trigger" in p.code]
    first, repair = script.trigger_prompts
    assert "description: Operate the zorblax daemon. Use when:" in first
    assert "5 queries: write 20" in repair


def test_an_existing_trigger_suite_is_kept_and_a_bad_reply_is_refused(tmp_path):
    with pytest.raises(TeacherFormatError, match="one kind"):
        parse_trigger_reply("```json\n" + json.dumps(TRIGGERS[:10] * 2) + "\n```")
    with pytest.raises(TeacherFormatError, match="should_trigger"):
        parse_trigger_reply('```json\n[{"query": "x"}]\n```')
    script = TriggerScripted(FEW, FEW)  # unusable twice: a warning, the skill still saved
    with FakeOpenAIServer(responder=script) as server:
        report = run(server, tmp_path, no_eval=True)
    folder = tmp_path / "out" / "zorblax-ops"
    assert report.trigger_queries == 0 and not triggers_path(folder).exists()
    assert any("no trigger suite" in w for w in report.warnings)
    assert (folder / "SKILL.md").is_file()
    triggers_path(folder).write_text(json.dumps(TRIGGERS[:4]))
    assert write_trigger_suite(folder, None) == (0, [])  # type: ignore[arg-type]  # kept
    assert len(load_triggers(triggers_path(folder)).queries) == 4
