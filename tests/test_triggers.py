"""Trigger suites (`evals/triggers.json`): both shapes read and written back as they are, the
stratified split, and what `validate` and `suite show` say about them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from registry.cli import cli
from registry.errors import InvalidSuite
from registry.format.triggers import (
    fixed_split,
    load_triggers,
    parse_triggers,
    triggers_path,
)
from registry.format.validate import validate_skill


def creator_list(should: int = 10, should_not: int = 10) -> list[dict]:
    return ([{"query": f"please build the zorblax widget number {i}", "should_trigger": True,
              "note": f"kept {i}"} for i in range(should)]
            + [{"query": f"bake a cake with {i} eggs", "should_trigger": False}
               for i in range(should_not)])


def make_skill(root: Path, triggers: object | None = None) -> Path:
    folder = root / "zorblax"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: zorblax\ndescription: \"Build zorblax "
                                     "widgets. Use when building zorblax.\"\n---\n\nSteps.\n")
    if triggers is not None:
        text = triggers if isinstance(triggers, str) else json.dumps(triggers)
        (folder / "evals" / "triggers.json").write_text(text)
    return folder


def test_skill_creator_list_round_trips_with_unknown_keys_and_a_stratified_split():
    data = creator_list()
    suite = parse_triggers(data)
    assert suite.shape == "skill-creator"
    assert json.loads(suite.to_json()) == data  # written back as it was, "note" kept
    assert [q.id for q in suite.queries[:3]] == ["q1", "q2", "q3"]
    assert suite.counts() == {"train": {"should": 6, "should_not": 6},
                              "holdout": {"should": 4, "should_not": 4}}
    # the split follows the text, not the order: reversed, every query keeps its split
    by_text = {q.query: q.split for q in suite.queries}
    again = parse_triggers(list(reversed(data)))
    assert {q.query: q.split for q in again.queries} == by_text


def test_object_shape_keeps_written_splits_and_assigns_the_rest_within_each_class():
    data = {"skill_name": "zorblax", "owner": "me", "queries": [
        {"id": f"s{i}", "query": f"zorblax task {i}", "should_trigger": True,
         **({"split": "holdout"} if i < 3 else {})} for i in range(10)] + [
        {"id": f"n{i}", "query": f"cake {i}", "should_trigger": False, "tag": "near"}
        for i in range(5)]}
    suite = parse_triggers(data)
    assert json.loads(suite.to_json()) == data
    holdout = {q.id for q in suite.split("holdout")}
    assert {"s0", "s1", "s2"} <= holdout
    assert suite.counts()["holdout"] == {"should": 4, "should_not": 2}
    fixed = fixed_split(suite)
    assert all("split" in q for q in fixed.to_data()["queries"])
    assert parse_triggers(fixed.to_data()).counts() == suite.counts()
    assert fixed.to_data()["owner"] == "me" and fixed.to_data()["queries"][-1]["tag"] == "near"


@pytest.mark.parametrize(("data", "message"), [
    ({"cases": []}, "a list of queries"),
    ([], "no queries"),
    ([{"query": "x"}], "\"should_trigger\" must be true or false"),
    ([{"query": " ", "should_trigger": True}], "\"query\" must be a non-empty string"),
    ({"queries": [{"id": "a", "query": "x", "should_trigger": True, "split": "test"}]},
     "\"split\" must be"),
    ({"queries": [{"id": "a", "query": "x", "should_trigger": True},
                  {"id": "a", "query": "y", "should_trigger": False}]}, "used twice"),
])
def test_bad_trigger_suites_say_what_is_wrong(data, message):
    with pytest.raises(InvalidSuite) as caught:
        parse_triggers(data)
    assert message in caught.value.message and caught.value.hint


def test_validate_reports_trigger_suite_errors_and_warnings(tmp_path):
    good = make_skill(tmp_path / "a", creator_list())
    assert validate_skill(good) == []
    small = make_skill(tmp_path / "b", creator_list(3, 0))
    assert {p.code for p in validate_skill(small)} == {"few-triggers", "one-sided-triggers"}
    broken = make_skill(tmp_path / "c", "[{\"query\": ")
    found = validate_skill(broken)
    assert [(p.code, p.severity, p.file) for p in found] == [
        ("invalid-triggers", "error", "evals/triggers.json")]
    result = CliRunner().invoke(cli, ["validate", str(broken)])
    assert result.exit_code == 1 and "not valid JSON" in result.output


def test_suite_show_lists_the_trigger_queries(tmp_path):
    folder = make_skill(tmp_path, creator_list())
    (folder / "evals" / "evals.json").write_text(json.dumps({"cases": [
        {"id": "c1", "prompt": "build one", "checks": [{"type": "contains", "value": "z"}]}]}))
    result = CliRunner().invoke(cli, ["suite", "show", str(folder)])
    assert result.exit_code == 0, result.output
    assert "20 queries (train 12, holdout 8)" in result.output
    assert "bake a cake with 3 eggs" in result.output
    shown = CliRunner().invoke(cli, ["suite", "show", str(folder), "--json"])
    assert json.loads(shown.output)["triggers"] == creator_list()
    assert load_triggers(triggers_path(folder)).suite_hash().startswith("sha256:")
