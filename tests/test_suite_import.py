"""Foreign suites that survive import: skill-creator's file read and written in its own shape,
listed files kept by path and as bytes, upskill validators warned about per case."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from sandbox_required import bwrap_sandbox

from registry.cli import cli
from registry.errors import InvalidSuite
from registry.evaluation.arms import user_content
from registry.evaluation.checks import run_checks
from registry.format.suite import (
    InputFile,
    Suite,
    load_suite,
    parse_suite,
    suite_path,
)
from registry.format.suite_writer import import_suite, save_suite

DATA = Path(__file__).parent / "data"
REPORT = DATA / "skill_creator_report"
LOGO = (REPORT / "evals" / "files" / "logo.png").read_bytes()


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args], env={"NO_COLOR": "1", "COLUMNS": "200"})


@pytest.fixture
def report(tmp_path: Path) -> Path:
    """A copy of the skill-creator-style skill: two data.csv files, a PNG, unknown keys."""
    return Path(shutil.copytree(REPORT, tmp_path / "report-writer"))


def write_skill(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {folder.name}\ndescription: \"x\"\n---\nBody\n")
    return folder


# --- skill-creator's file, read natively and written in its own shape -------------------------


def test_skill_creator_file_is_read_natively(report: Path) -> None:
    suite = load_suite(suite_path(report))
    assert suite.shape == "skill-creator" and suite.skill_name == "report-writer"
    first, second = suite.cases
    assert (first.id, second.id) == ("1", "2")
    assert first.assertions == ["Gives 1250 as the q1 total", "Gives 255 as the q2 total"]
    assert first.expected_output.startswith("A table with one total per file")
    assert second.assertions == ["Names logo.png"] and suite.judge_only_cases() == ["1", "2"]


def test_import_in_place_leaves_the_file_byte_for_byte(report: Path) -> None:
    target = suite_path(report)
    before = target.read_bytes()
    result = run("suite", "import", target, "--into", report)
    assert result.exit_code == 0, result.output
    assert "already in skill-creator's shape; hubskills reads it as it is" in result.output
    assert "left unchanged" in result.output
    assert target.read_bytes() == before
    assert sorted(p.name for p in target.parent.iterdir()) == ["evals.json", "files"]


def test_adding_a_case_writes_skill_creator_shape_and_keeps_untouched_bytes(report: Path) -> None:
    target = suite_path(report)
    before = target.read_text()
    suite = load_suite(target)
    new = parse_suite({"cases": [{"id": "3", "prompt": "Total q2 by region.",
                                  "checks": [{"type": "contains", "value": ["255"]}]}]}).cases
    save_suite(suite.model_copy(update={"cases": suite.cases + new}), target)
    after = target.read_text()
    last_entry_end = before.rindex("}\n  ]")  # the end of the second entry, kept as written
    assert after.startswith(before[:last_entry_end + 1])
    assert after.endswith(before[last_entry_end + 1:])
    saved = json.loads(after)
    assert saved["comment"].startswith("Hand-written for skill-creator")
    assert [e["id"] for e in saved["evals"]] == [1, 2, 3]  # skill-creator's integer ids
    assert saved["evals"][0]["category"] == "tables" and saved["evals"][1]["notes"]
    assert saved["evals"][2] == {"id": 3, "prompt": "Total q2 by region.", "expectations": [],
                                 "checks": [{"type": "contains", "value": ["255"]}]}
    assert load_suite(target).cases[2].checks[0].values() == ["255"]


def test_changing_one_case_rewrites_only_that_entry(report: Path) -> None:
    target = suite_path(report)
    before = target.read_text()
    suite = load_suite(target)
    changed = suite.cases[1].model_copy(update={"prompt": "Put the logo at the top."})
    save_suite(suite.model_copy(update={"cases": [suite.cases[0], changed]}), target)
    after = target.read_text()
    first_entry = before[before.index("    {\n"):before.index("    },\n") + 6]
    assert first_entry in after and "\"category\": \"tables\"" in first_entry
    saved = json.loads(after)["evals"][1]
    assert saved["prompt"] == "Put the logo at the top."
    assert saved["notes"] == "binary input" and saved["files"] == ["evals/files/logo.png"]
    assert list(saved) == ["id", "prompt", "files", "expectations", "notes"]  # key order kept


def test_import_into_a_new_skill_copies_the_file_and_its_listed_files(report: Path,
                                                                      tmp_path: Path) -> None:
    other = write_skill(tmp_path / "other")
    done = import_suite(suite_path(report), other)
    assert done.shape == "skill-creator" and done.written
    assert sorted(done.files) == ["evals/files/logo.png", "evals/files/q1/data.csv",
                                  "evals/files/q2/data.csv"]
    assert suite_path(other).read_bytes() == suite_path(report).read_bytes()
    assert (other / "evals" / "files" / "logo.png").read_bytes() == LOGO
    assert load_suite(suite_path(other)) == load_suite(suite_path(report))


def test_a_different_file_in_the_way_is_never_overwritten(report: Path, tmp_path: Path) -> None:
    other = write_skill(tmp_path / "other")
    (other / "evals" / "files").mkdir(parents=True)
    (other / "evals" / "files" / "logo.png").write_bytes(b"mine")
    with pytest.raises(InvalidSuite, match="differs from the file the suite lists"):
        import_suite(suite_path(report), other)
    assert (other / "evals" / "files" / "logo.png").read_bytes() == b"mine"
    assert not suite_path(other).exists()


def test_force_import_of_upskill_cases_keeps_the_target_in_skill_creator_shape(
        report: Path) -> None:
    result = run("suite", "import", DATA / "upskill" / "tests.json", "--into", report, "--force")
    assert result.exit_code == 0, result.output
    assert "in skill-creator's shape" in result.output
    saved = json.loads(suite_path(report).read_text())
    assert "cases" not in saved and saved["comment"].startswith("Hand-written")
    assert [e["id"] for e in saved["evals"]] == ["case-1", "case-2", "case-3"]
    assert saved["evals"][0]["checks"][0]["value"] == ["[general]", "cuda-capabilities", "9.0"]
    [listed] = saved["evals"][1]["files"]  # an inline upskill file, now kept in the skill folder
    assert listed == "evals/files/case-2/torch-ext/torch_binding.cpp"
    assert "TORCH_LIBRARY_EXPAND" in (report / listed).read_text()
    suite = load_suite(suite_path(report))
    assert suite.shape == "skill-creator" and suite.cases[1].checks[0].values() == ["ops.impl"]


def test_upskill_shaped_target_is_never_rewritten(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "skill")
    target = suite_path(skill)
    target.parent.mkdir()
    shutil.copy(DATA / "upskill" / "tests_list.json", target)
    before = target.read_bytes()
    result = run("suite", "import", DATA / "native" / "evals.json", "--into", skill, "--force")
    assert result.exit_code == 1 and "never rewrites it" in result.output + str(result.exception)
    assert target.read_bytes() == before


def test_listed_files_are_never_written_through_a_linked_folder(report: Path,
                                                              tmp_path: Path) -> None:
    other, outside = write_skill(tmp_path / "other"), tmp_path / "outside"
    outside.mkdir()
    (other / "evals").mkdir()
    (other / "evals" / "files").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InvalidSuite, match="a linked folder"):
        import_suite(suite_path(report), other)
    assert list(outside.iterdir()) == [] and not suite_path(other).exists()


# --- listed files: relative paths and bytes ------------------------------------------------------


def test_two_data_csv_files_in_different_folders_stay_two_files(report: Path) -> None:
    files = load_suite(suite_path(report)).cases[0].files
    assert list(files) == ["evals/files/q1/data.csv", "evals/files/q2/data.csv"]
    assert [f.text() for f in files.values()] == [
        "region,amount\nnorth,800\nsouth,450\n", "region,amount\nnorth,120\nsouth,95\nwest,40\n"]
    prompt = user_content(load_suite(suite_path(report)).cases[0])
    assert "evals/files/q1/data.csv\n```\nregion,amount\nnorth,800" in prompt
    assert "evals/files/q2/data.csv\n```\nregion,amount\nnorth,120" in prompt


def test_a_binary_file_is_described_to_the_model_and_kept_as_bytes(report: Path) -> None:
    case = load_suite(suite_path(report)).cases[1]
    [logo] = case.files.values()
    assert isinstance(logo, InputFile) and logo.data == LOGO and logo.text() is None
    prompt = user_content(case)
    assert (f"evals/files/logo.png (attached binary file: {len(LOGO):,} bytes, image/png; "
            "its content is not shown)") in prompt
    assert "PNG" not in prompt and "\ufffd" not in prompt  # never decoded as text
    assert case.input_bytes() == {"evals/files/logo.png": LOGO}


def test_checks_see_the_input_files_as_bytes_in_their_workspace(report: Path) -> None:
    size_check = {"type": "exec", "command": [
        "python3", "-c", "import sys; d = open('evals/files/logo.png', 'rb').read(); "
        f"sys.exit(0 if d[:8] == bytes.fromhex('89504e470d0a1a0a') and len(d) == {len(LOGO)} "
        "else 1)"]}
    data = {"cases": [{"id": "logo", "prompt": "p", "checks": [size_check],
                       "files": {"evals/files/logo.png": {"path": "evals/files/logo.png"}}}]}
    [case] = parse_suite(data, roots=(report,)).cases
    [verdict] = asyncio.run(run_checks(case, "no files written", sandbox=bwrap_sandbox()))
    assert verdict.passed is True, verdict.reason


def test_native_file_references_round_trip(report: Path) -> None:
    target = report / "evals" / "native.json"
    target.write_text(json.dumps({"cases": [{"id": "a", "prompt": "p", "assertions": ["x"],
                                             "files": {"logo.png": {"path": "evals/files/logo.png"},
                                                       "note.txt": "inline"}}]}))
    suite = load_suite(target)
    assert suite.cases[0].files["logo.png"].data == LOGO
    assert json.loads(suite.to_json())["cases"][0]["files"]["logo.png"] == {
        "path": "evals/files/logo.png"}
    (report / "evals" / "files" / "logo.png").write_bytes(LOGO + b"\0")
    assert load_suite(target).suite_hash() != suite.suite_hash()  # the content counts
    missing = {"cases": [{"id": "a", "prompt": "p", "assertions": ["x"],
                          "files": {"x.bin": {"path": "evals/files/nope.bin"}}}]}
    with pytest.raises(InvalidSuite, match=r"case 1 \('a'\): field files: 'evals/files/nope.bin'"):
        parse_suite(missing, roots=(report,))


@pytest.mark.parametrize("files", [
    {"x": {"path": "/etc/passwd"}}, {"x": {"path": "../../secret"}}, {"x": {"path": "a\\b"}}])
def test_file_references_stay_inside_the_skill_folder(report: Path, files: dict) -> None:
    data = {"cases": [{"id": "a", "prompt": "p", "assertions": ["x"], "files": files}]}
    with pytest.raises(InvalidSuite, match="must stay inside the skill folder"):
        parse_suite(data, roots=(report,))


def test_a_file_reference_is_read_only_by_the_loaders() -> None:
    data = {"cases": [{"id": "a", "prompt": "p", "assertions": ["x"],
                       "files": {"x": {"path": "evals/files/logo.png"}}}]}
    with pytest.raises(InvalidSuite, match="cannot read 'evals/files/logo.png' without a skill"):
        parse_suite(data)
    with pytest.raises(ValueError, match="read only when the suite is loaded"):
        Suite.model_validate(data)  # built directly, nothing was read: refused, never empty
    upskill = [{"input": "q", "expected": {"contains": "a"},
                "context": {"files": {"a": {"path": "/etc/passwd"}}}}]
    with pytest.raises(InvalidSuite, match="field context.files: expected name -> text"):
        parse_suite(upskill)


# --- upskill validators -------------------------------------------------------------------------


def test_upskill_validator_cases_import_what_maps_and_warn_per_case(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "classifier-card")
    source = DATA / "upskill" / "tests_validator.json"
    result = CliRunner().invoke(cli, ["suite", "import", str(source), "--into", str(skill)],
                                env={"NO_COLOR": "1", "COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 2
    assert warnings[0].startswith("Warning: case 1: upskill validator 'hf_eval_yaml' has no "
                                  "hubskills equivalent")
    assert "a check that the answer writes 'eval_results.yaml'" in warnings[0]
    assert warnings[1].startswith("Warning: case 2: upskill validator 'benchmark_table'")
    assert warnings[1].endswith("imported its `contains` fallback; add a python or exec check "
                                "that validates the answer")
    first, second, third = load_suite(suite_path(skill)).cases
    assert [c.type for c in first.checks] == ["contains", "python"]
    assert first.metadata == {"upskill": {"validator": "hf_eval_yaml",
                                          "validator_config": {"min_metrics": 2},
                                          "output_file": "eval_results.yaml"}}
    assert [c.type for c in second.checks] == ["contains"] and third.metadata == {}


def test_the_output_file_check_grades_what_the_model_wrote(tmp_path: Path) -> None:
    suite = parse_suite(json.loads((DATA / "upskill" / "tests_validator.json").read_text()))
    case = suite.cases[0]
    wrote = "Here it is.\n\neval_results.yaml\n```yaml\nmodel-index:\n- name: clf\n```\n"
    verdicts = asyncio.run(run_checks(case, wrote, sandbox=bwrap_sandbox()))
    assert [v.passed for v in verdicts] == [True, True]
    verdicts = asyncio.run(run_checks(case, "model-index: inline, no file",
                                      sandbox=bwrap_sandbox()))
    assert [v.passed for v in verdicts] == [True, False]
    assert "no eval_results.yaml in the answer" in verdicts[1].reason
    assert len(suite.warnings) == 2 and all(w.startswith("case ") for w in suite.warnings)
