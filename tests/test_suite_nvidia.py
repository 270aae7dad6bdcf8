"""NVIDIA's eval format (github.com/NVIDIA/skills' `evals/evals.json`): read in place, imported,
written back with every key kept, and its `expected_skill` read as the trigger suite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer

from registry.cli import cli
from registry.errors import HubskillsError
from registry.format.inputs import InputFile
from registry.format.suite import load_suite, suite_path
from registry.format.suite_writer import save_suite
from registry.format.triggers import load_skill_triggers

NVIDIA = Path(__file__).parent / "fixtures" / "nvidia"
FIXTURE_SUITES = sorted(NVIDIA.glob("*/evals/evals.json"))


def invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args],
                              env={"NO_COLOR": "1", "COLUMNS": "200"})


def test_every_fixture_suite_converts_case_for_case() -> None:
    assert len(FIXTURE_SUITES) == 5
    converted = 0
    for file in FIXTURE_SUITES:
        entries = json.loads(file.read_text())
        suite = load_suite(file)
        assert len(suite.cases) == len(entries)
        assert suite.shape == ("nvidia" if entries else "upskill")  # `[]` is any list shape
        for entry, case in zip(entries, suite.cases, strict=True):
            assert (case.id, case.prompt) == (entry["id"], entry["question"])
            rubrics = {c.name: c.rubric for c in case.checks}
            assert rubrics["ground_truth"] == entry["ground_truth"]
            behaviour = rubrics.get("expected_behavior", "")
            assert all(f"- {item}" in behaviour for item in entry["expected_behavior"])
            assert case.expect_skill is (entry["expected_skill"] == file.parent.parent.name)
        converted += len(suite.cases)
    assert converted == 6  # 1 + 2 + 2 + 0 + 1 cases in the five fixture suites


def test_expected_skill_is_the_trigger_suite_read_in_place() -> None:
    for file in FIXTURE_SUITES:
        entries = json.loads(file.read_text())
        triggers = load_skill_triggers(file.parent.parent)
        if not entries:
            assert triggers is None
            continue
        assert [(q.id, q.query, q.should_trigger) for q in triggers.queries] == [
            (e["id"], e["question"], True) for e in entries]


def _nvidia_skill(tmp_path: Path) -> Path:
    """A skill with a case that has starter files, a should-not case, a case naming another
    skill, and a trigger-only entry (no rubric), in NVIDIA's bare-list shape."""
    skill = tmp_path / "cudf-port"
    (skill / "evals" / "files" / "etl" / "code").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: cudf-port\ndescription: Port pandas code to "
                                    "cuDF.\n---\n\nUse cudf.\n")
    (skill / "evals" / "files" / "etl" / "code" / "etl.py").write_text("import pandas\n")
    (skill / "evals" / "files" / "etl" / "code" / "data.bin").write_bytes(b"\0\1\2")
    entries = [
        {"id": "etl", "question": "Task folder: evals/files/etl/\nPort code/etl.py to cuDF.",
         "expected_skill": "cudf-port", "expected_script": None,
         "files": ["evals/files/etl/code/etl.py", "evals/files/etl/code/data.bin"],
         "ground_truth": "Uses cudf.read_csv.", "expected_behavior": [], "owner_note": "x"},
        {"id": "not-me", "question": "Write a haiku about rain.", "expected_skill": None,
         "ground_truth": "A haiku, no GPU talk.", "expected_behavior": ["three lines"]},
        {"id": "other", "question": "Profile my DeepStream pipeline.",
         "expected_skill": "deepstream-profile", "expected_behavior": ["opens the profiler"],
         "must_not": ["edits code"]},
        {"id": "route-only", "question": "Make pandas faster on my GPU.",
         "expected_skill": "cudf-port", "expected_behavior": []},
    ]
    suite_path(skill).write_text(json.dumps(entries, indent=2) + "\n")
    return skill


def test_cases_map_files_rubrics_and_expected_skill(tmp_path: Path) -> None:
    skill = _nvidia_skill(tmp_path)
    suite = load_suite(suite_path(skill))
    assert [c.id for c in suite.cases] == ["etl", "not-me", "other"]
    etl, not_me, other = suite.cases
    assert {name: f.data for name, f in etl.files.items()} == {
        "evals/files/etl/code/etl.py": b"import pandas\n",
        "evals/files/etl/code/data.bin": b"\0\1\2"}
    assert all(isinstance(f, InputFile) for f in etl.files.values())
    assert etl.metadata == {"mode": "agent", "nvidia": {"expected_script": None,
                                                        "owner_note": "x"}}
    assert [(c.type, c.name) for c in etl.checks] == [("judge", "ground_truth")]
    assert (etl.expect_skill, not_me.expect_skill, other.expect_skill) == (True, False, False)
    assert "mode" not in not_me.metadata
    assert other.checks[1].rubric == "The answer must not:\n- edits code"
    assert suite.warnings == ["case 4 ('route-only'): no ground_truth or expected_behavior to "
                              "grade: kept as a trigger query only"]
    triggers = load_skill_triggers(skill, "cudf-port")
    assert {q.id: q.should_trigger for q in triggers.queries} == {
        "etl": True, "not-me": False, "other": False, "route-only": True}


def test_import_keeps_the_shape_files_and_unknown_keys(tmp_path: Path) -> None:
    source = _nvidia_skill(tmp_path)
    target = tmp_path / "copy"
    target.mkdir()
    (target / "SKILL.md").write_text((source / "SKILL.md").read_text())
    result = invoke("suite", "import", suite_path(source), "--into", target)
    assert result.exit_code == 0, result.output
    assert "Imported 3 cases" in result.output and "NVIDIA's shape" in result.output
    assert "kept as a trigger query only" in result.output
    assert json.loads(suite_path(target).read_text()) == json.loads(
        suite_path(source).read_text())  # every entry, key and value, the trigger-only one too
    assert (target / "evals/files/etl/code/data.bin").read_bytes() == b"\0\1\2"
    again = invoke("suite", "import", suite_path(target), "--into", target)
    assert "reads it as it is" in again.output  # in place: nothing written


def test_write_back_changes_only_what_changed(tmp_path: Path) -> None:
    skill = _nvidia_skill(tmp_path)
    before = json.loads(suite_path(skill).read_text())
    suite = load_suite(suite_path(skill))
    not_me = suite.cases[1]
    checks = [not_me.checks[0].model_copy(update={"rubric": "A haiku about rain."}),
              not_me.checks[1]]
    changed = suite.model_copy(update={"cases": [
        suite.cases[0], not_me.model_copy(update={"prompt": "A haiku, please.",
                                                  "checks": checks}), suite.cases[2]]})
    save_suite(changed, suite_path(skill))
    after = json.loads(suite_path(skill).read_text())
    assert after[1] == {**before[1], "question": "A haiku, please.",
                        "ground_truth": "A haiku about rain."}
    assert [after[0], after[2], after[3]] == [before[0], before[2], before[3]]
    assert load_suite(suite_path(skill)).cases[1].prompt == "A haiku, please."


def test_a_case_object_and_a_cases_object_are_read_too(tmp_path: Path) -> None:
    case = {"id": "one", "question": "Q?", "expected_skill": "s", "ground_truth": "G."}
    for data in (case, {"skill": "s", "version": "1", "cases": [case]}):
        file = tmp_path / "evals.json"
        file.write_text(json.dumps(data))
        suite = load_suite(file)
        assert (suite.shape, [c.id for c in suite.cases]) == ("nvidia", ["one"])
        save_suite(suite, file)
        assert json.loads(file.read_text()) == data


@pytest.mark.parametrize("entry, message", [
    ({"id": "a", "question": ""}, "field question"),
    ({"id": "a", "question": "Q", "ground_truth": ["x"]}, "field ground_truth"),
    ({"id": "a", "question": "Q", "ground_truth": "G", "files": "a.py"}, "field files"),
    ({"id": "a", "question": "Q", "ground_truth": "G", "files": ["../x"]}, "inside the skill"),
])
def test_bad_cases_name_the_case_and_field(tmp_path: Path, entry: dict, message: str) -> None:
    file = tmp_path / "evals.json"
    file.write_text(json.dumps([entry]))
    result = invoke("suite", "show", file)
    assert result.exit_code == 1 and isinstance(result.exception, HubskillsError)
    assert message in str(result.exception) and "case 1 ('a')" in str(result.exception)


def test_eval_reads_the_suite_in_place_and_judges_by_its_rubric(tmp_path: Path) -> None:
    skill = Path(shutil.copytree(NVIDIA / "tao-list-capabilities", tmp_path / "tao"))
    with FakeOpenAIServer(responder=lambda body: "VERDICT: PASS\nREASON: fine.") as server:
        result = invoke("eval", skill, "-m", "local/fake", "--judge", "local/judge",
                        "--base-url", server.url, "--runs", "1", "--sandbox", "none")
        sent = json.dumps([r["body"] for r in server.requests])
    assert result.exit_code == 0, result.output
    entry = json.loads(suite_path(skill).read_text())[0]
    assert json.dumps(entry["question"])[1:-1] in sent
    assert json.dumps(entry["ground_truth"])[1:-1] in sent  # the judge got the rubric


def test_skill_creator_assertion_objects_load_and_stay_objects(tmp_path: Path) -> None:
    """Some NVIDIA skills write skill-creator's assertions as objects with a `text`."""
    first = {"name": "imports", "text": "Uses import nvidia.dali as ndd",
             "type": "contains_phrase", "phrase": "ndd"}
    data = {"skill_name": "dali", "evals": [
        {"id": 1, "prompt": "Write a DALI pipeline.", "expected_output": "code",
         "assertions": [first, {"text": "No batch_size in the reader"}]}]}
    file = tmp_path / "evals.json"
    file.write_text(json.dumps(data))
    suite = load_suite(file)
    assert suite.cases[0].assertions == ["Uses import nvidia.dali as ndd",
                                         "No batch_size in the reader"]
    case = suite.cases[0].model_copy(update={"prompt": "Write a DALI pipeline, please."})
    save_suite(suite.model_copy(update={"cases": [case]}), file)
    assert json.loads(file.read_text())["evals"][0]["assertions"] == data["evals"][0][
        "assertions"]  # unchanged assertions keep their objects
    case = case.model_copy(update={"assertions": ["Uses ndd"]})
    save_suite(suite.model_copy(update={"cases": [case]}), file)
    assert json.loads(file.read_text())["evals"][0]["assertions"] == ["Uses ndd"]
    file.write_text(json.dumps({"evals": [{"id": 1, "prompt": "p", "assertions": [{"x": 1}]}]}))
    with pytest.raises(HubskillsError, match='objects with a "text"'):
        load_suite(file)


def test_a_trigger_eval_and_its_verification_read_expected_skill_in_place(tmp_path: Path):
    from registry.evaluation.trigger_run import load_trigger_suite
    from registry.format.skill import load_skill
    from registry.verify.trigger import _trigger_suite

    skill = _nvidia_skill(tmp_path)
    suite = load_trigger_suite(load_skill(skill))
    assert [(q.id, q.should_trigger) for q in suite.queries] == [
        ("etl", True), ("not-me", False), ("other", False), ("route-only", True)]
    (skill / "evals" / "triggers.json").write_text(json.dumps(
        [{"query": "only this one", "should_trigger": True}]))
    assert [q.query for q in load_trigger_suite(load_skill(skill)).queries] == ["only this one"]
    (skill / "evals" / "triggers.json").unlink()

    class Manifest:  # what the replay compares: the suite's hash, size and ids
        suite_hash, suite_cases, case_ids = suite.suite_hash(), 4, ["etl"]

    class Report:
        skill_source, problems = str(skill), []

        def cannot(self, why: str) -> None:
            raise AssertionError(why)

    report = Report()
    assert _trigger_suite(skill, Manifest(), report) == suite and report.problems == []


def test_a_chat_run_over_agent_tasks_says_how_to_run_them_as_tasks(tmp_path: Path) -> None:
    skill = _nvidia_skill(tmp_path)
    with FakeOpenAIServer(responder=lambda body: "VERDICT: PASS\nREASON: fine.") as server:
        result = invoke("eval", skill, "-m", "local/fake", "--judge", "local/judge",
                        "--base-url", server.url, "--runs", "1", "--sandbox", "none",
                        "--cases", "etl,not-me")
        sent = json.dumps([r["body"] for r in server.requests])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "1 case (etl) is an agent task with starter files" in said
    assert f"hubskills eval {skill} --mode agent" in said
    assert "import pandas" in sent  # the starter file, inline in chat mode


def test_agent_mode_seeds_the_starter_files_where_the_question_names_them(tmp_path: Path):
    from registry.agent import seed_workspace

    case = load_suite(suite_path(_nvidia_skill(tmp_path))).cases[0]
    assert "Task folder: evals/files/etl/" in case.prompt
    seed_workspace(tmp_path / "ws", case.files)
    assert (tmp_path / "ws/evals/files/etl/code/etl.py").read_bytes() == b"import pandas\n"
    assert (tmp_path / "ws/evals/files/etl/code/data.bin").read_bytes() == b"\0\1\2"
