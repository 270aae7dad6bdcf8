"""`hubskills tune`: a scripted teacher's rewrites scored by trigger evals against the fake
tool-calling model; the best is picked by its holdout accuracy's lower bound."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from fakes.trigger_model import TriggerModel

from registry.cli import cli
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.format.skill import load_skill
from registry.generate.tune import tune_description, write_description
from registry.providers import RetryPolicy

FAST = RetryPolicy(attempts=2, base_delay=0.001, max_delay=0.005, max_retry_after=0.01)
ORIGINAL = "Configure zorblax."
FITS_TRAIN = "Configure zorblax daemon ports and logs."  # train 100%, holdout as the original
FLAKY = "Configure the zorblax daemon, each zorblax widget and theme, flaky."  # 3 holdout errors
BEST = "Configure the zorblax daemon and each zorblax widget."  # holdout 3 of 4
QUERIES = [  # (id, query, should_trigger, split)
    ("t1", "zorblax daemon ports", True, "train"), ("t2", "zorblax daemon logs", True, "train"),
    ("t3", "configure zorblax", True, "train"), ("t4", "bake bread", False, "train"),
    ("h1", "zorblax widget colour", True, "holdout"), ("h2", "zorblax widget size", True,
                                                        "holdout"),
    ("h3", "zorblax theme", True, "holdout"), ("h4", "bake cakes", False, "holdout"),
]
HOLDOUT = [q for _, q, _, split in QUERIES if split == "holdout"]
SKILL_MD = ("---\n# the skill's own comment stays\nname: zorblax-ports\ndescription: "
            f"{ORIGINAL}\nlicense: MIT   # trailing comment\nmetadata:\n  version: \"1.0.0\"\n"
            "---\n\nZorblax listens on port 4417.\n")


def make_skill(root: Path) -> Path:
    folder = root / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "evals" / "triggers.json").write_text(json.dumps({"queries": [
        {"id": i, "query": q, "should_trigger": s, "split": sp} for i, q, s, sp in QUERIES]}))
    (root / "installed" / "baking").mkdir(parents=True)
    (root / "installed" / "baking" / "SKILL.md").write_text(
        "---\nname: baking\ndescription: \"Bake bread and cakes.\"\n---\nBody.\n")
    return folder


def scripted_teacher(*answers: str):
    given = iter(answers)
    return lambda prompt: f"Here it is:\n<description>{next(given)}</description>"


def flaky(system: str, query: str) -> bool:
    return "flaky" in system and any(w in query for w in ("colour", "size", "theme"))


@pytest.fixture
def model():
    return TriggerModel(teacher=scripted_teacher(FITS_TRAIN, FLAKY, BEST), fails=flaky)


@pytest.fixture
def server(model):
    with FakeOpenAIServer(responder=model) as srv:
        yield srv


def config(tmp_path: Path, **overrides) -> EvalConfig:
    values = {"models": ["local/fake-trigger"], "runs": 1, "retry": FAST,
              "distractors": tmp_path / "installed"}
    return EvalConfig(mode="trigger", **{**values, **overrides})


def settings_for(server, tmp_path) -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                              "HUBSKILLS_BASE_URL": server.url})


def test_tune_improves_holdout_recall_and_picks_by_the_lower_bound(server, model, tmp_path):
    skill = make_skill(tmp_path)
    result = tune_description(skill, config(tmp_path), settings_for(server, tmp_path),
                              teacher="local/fake-teacher", rounds=3)
    original, fits_train, flaky_one, best = result.candidates
    assert [c.description for c in result.candidates] == [ORIGINAL, FITS_TRAIN, FLAKY, BEST]
    assert (original.train.recall.rate, original.holdout.recall.rate) == (pytest.approx(1 / 3), 0)
    # fits train only: perfect there, no better than the original on the holdout
    assert fits_train.train.accuracy.rate == 1.0
    assert fits_train.holdout.accuracy.rate == original.holdout.accuracy.rate == 0.25
    # the flaky one has the highest holdout point estimate (1 of 1 graded), the lowest bound
    assert flaky_one.holdout.accuracy.rate == 1.0 > best.holdout.accuracy.rate == 0.75
    assert flaky_one.holdout.accuracy.lo < best.holdout.accuracy.lo
    assert result.best is best and best.holdout.recall.rate == pytest.approx(2 / 3)
    assert not result.significant and result.comparison.verdict.startswith("too few cases")
    # the teacher saw the train misses, never a holdout query
    assert len(model.teacher_prompts) == 3 and "zorblax daemon ports" in model.teacher_prompts[0]
    assert not any(q in p for p in model.teacher_prompts for q in HOLDOUT)
    assert (skill / "SKILL.md").read_text() == SKILL_MD  # nothing written without --write


def test_the_cost_cap_stops_the_rounds(tmp_path):
    model = TriggerModel(teacher=scripted_teacher(FITS_TRAIN, BEST))
    with FakeOpenAIServer(responder=model, api_key="k") as srv:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.url})
        skill = make_skill(tmp_path)
        args = {"models": ["openai/gpt-4.1"], "use_cache": False, "concurrency": 1}
        first = tune_description(skill, config(tmp_path, **args), settings,
                                 teacher="openai/gpt-4.1", rounds=1)
        round0 = first.candidates[0].cost_usd
        assert first.estimate_usd is not None and first.estimate_usd > 0 and round0 > 0
        asked, round0_calls = len(model.teacher_prompts), model.requests // 2  # 2 rounds alike
        # A cap of round 0's cost would stop round 0 itself: each call reserves its worst case
        # (all of max_tokens) first. Round 0's calls, counted, leave none for the teacher.
        capped = tune_description(skill, config(tmp_path, max_calls=round0_calls, **args),
                                  settings, teacher="openai/gpt-4.1", rounds=3)
    assert capped.status == "stopped" and len(capped.candidates) == 1
    assert len(model.teacher_prompts) == asked  # the teacher was not asked past the cap
    assert capped.best.round == 0 and capped.stopped_by.startswith("--max-calls")


def test_write_changes_only_the_description(tmp_path):
    skill = make_skill(tmp_path)
    write_description(skill, "Configure: the zorblax \"daemon\"; ports.")
    text = (skill / "SKILL.md").read_text()
    assert text == SKILL_MD.replace(ORIGINAL, '"Configure: the zorblax \\"daemon\\"; ports."')
    assert load_skill(skill).description == "Configure: the zorblax \"daemon\"; ports."
    (skill / "SKILL.md").write_text(SKILL_MD.replace(f"description: {ORIGINAL}\n",
                                                     "description: >-\n  Folded\n  text.\n"))
    write_description(skill, BEST)
    assert (skill / "SKILL.md").read_text() == SKILL_MD.replace(ORIGINAL, json.dumps(BEST))
    with pytest.raises(HubskillsError, match="1024"):
        write_description(skill, "x" * 1025)


def test_the_cli_reports_every_round_and_writes_with_write(server, tmp_path):
    skill = make_skill(tmp_path)
    args = ["tune", str(skill), "-m", "local/fake-trigger", "--teacher", "local/fake-teacher",
            "--base-url", server.url, "--runs", "1", "--rounds", "3", "--distractors",
            str(tmp_path / "installed")]
    shown = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert "NOT significantly better" in shown.output and "Nothing was written" in shown.output
    assert (skill / "SKILL.md").read_text() == SKILL_MD
    written = CliRunner().invoke(cli, [*args, "--write", "--json"], catch_exceptions=False)
    data = json.loads(written.stdout)
    assert data["written"] and data["best"]["round"] == 3 and len(data["candidates"]) == 4
    assert load_skill(skill).description == BEST
    saved = Path(data["saved"])  # the tune run's report and sessions, kept
    assert saved.name == data["run_id"] and json.loads((saved / "report.json").read_text())[
        "best"]["description"] == BEST
    assert len((saved / "rows.jsonl").read_text().splitlines()) == 4 * 8  # 4 rounds x 8 queries


# --- issue 37, hole 12: a description SKILL.md cannot hold is never written ---------------


@pytest.mark.parametrize("bad", ["\x7f", "\x07", "\x85", "\u2028", "\ud800"])
def test_write_refuses_a_control_character_and_leaves_skill_md_byte_identical(tmp_path, bad):
    skill = make_skill(tmp_path)
    before = (skill / "SKILL.md").read_bytes()
    with pytest.raises(HubskillsError, match="the description was not written to .*SKILL.md: "
                       f"it holds the control character U\\+{ord(bad):04X} at 53"):
        write_description(skill, BEST + bad)
    assert (skill / "SKILL.md").read_bytes() == before
    assert sorted(p.name for p in skill.iterdir()) == ["SKILL.md", "evals"]  # no temp file


def test_the_cli_never_writes_a_tuned_description_with_a_control_character(tmp_path):
    # the rewrite that would win on the holdout holds a DEL, which YAML refuses in a file
    model = TriggerModel(teacher=scripted_teacher(FITS_TRAIN, FITS_TRAIN, BEST + "\x7f"))
    skill = make_skill(tmp_path)
    before = (skill / "SKILL.md").read_bytes()
    with FakeOpenAIServer(responder=model) as server:
        done = CliRunner().invoke(cli, [
            "tune", str(skill), "-m", "local/fake-trigger", "--teacher", "local/fake-teacher",
            "--base-url", server.url, "--runs", "1", "--rounds", "3", "--distractors",
            str(tmp_path / "installed"), "--write", "--json"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["candidates"][3]["refused"] == "it holds the control character U+007F at 53"
    assert data["candidates"][3]["holdout"] is None  # refused before it was scored
    assert not data["written"] and data["best"]["round"] == 0
    assert (skill / "SKILL.md").read_bytes() == before
    assert load_skill(skill).description == ORIGINAL
