"""`hubskills --version`, `validate`, `new`, `suite import` and `suite show`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from test_install import run_main

from registry import __version__
from registry.cli import cli
from registry.format.skill import SKILL_FILE
from registry.format.suite import load_suite
from registry.format.validate import validate_skill

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
DESCRIPTION = "Does X for Y files. Use when the user asks about X."


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def write_skill(parent: Path, name: str = "demo", frontmatter: str | None = None,
                body: str = "# Demo\n\nDo it.\n") -> Path:
    folder = parent / name
    folder.mkdir(parents=True, exist_ok=True)
    if frontmatter is None:
        frontmatter = f'name: {name}\ndescription: "{DESCRIPTION}"\n'
    (folder / SKILL_FILE).write_text(f"---\n{frontmatter}---\n{body}")
    return folder


def module_run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "registry.cli", *args], cwd=REPO_ROOT, capture_output=True,
        text=True, env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **env}, check=False,
    )


# --- version and entry points ------------------------------------------------------------


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert result.output == f"hubskills, version {__version__}\n"


def test_main_and_module_entry_points(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(capsys, "--version")[:2] == (0, f"hubskills, version {__version__}\n")
    process = module_run("--version")
    assert (process.returncode, process.stdout) == (0, f"hubskills, version {__version__}\n")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(capsys, "validate")
    assert code == 2
    assert "Missing argument" in err


# --- validate ----------------------------------------------------------------------------


def test_validate_reports_errors_with_path_and_line(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, frontmatter="name: demo\ndescription: Use when: x\n")
    result = run("validate", folder)
    assert result.exit_code == 1
    assert f"{folder}: invalid (1 error, 1 warning)" in result.output  # and no suite
    assert f"{folder}/SKILL.md:3: error invalid-yaml: invalid YAML" in result.output


def test_validate_says_an_error_repeated_in_many_cases_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A walk: a check type mistyped in 11 cases printed 39 lines at 80 columns, the allowed
    types once per case."""
    monkeypatch.setenv("COLUMNS", "80")
    folder = write_skill(tmp_path)
    cases = [{"id": f"case-{c}", "prompt": f"Clean CSV {c}.",
              "checks": [{"type": "contain", "value": ["x"]}]} for c in "abcdefghijk"]
    (folder / "evals").mkdir()
    (folder / "evals" / "evals.json").write_text(json.dumps({"skill_name": "demo",
                                                             "cases": cases}, indent=2))
    result = run("validate", folder)
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert said.count("is not a check type") == 1 and said.count("allowed:") == 1, said
    assert f"{folder}/evals/evals.json:4: error invalid-suite: cases 1 ('case-a'), " in said
    assert "6 ('case-f') … (11): field checks[0].type: 'contain' is not a check type (did " \
           "you mean 'contains'?)" in said
    assert len(result.output.splitlines()) <= 10, result.output


def test_validate_exits_0_on_warnings_only(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, frontmatter=(
        f'name: demo\ndescription: "{DESCRIPTION}"\nargument-hint: "[file]"\n'), body="")
    result = run("validate", folder)
    assert result.exit_code == 0
    assert f"{folder}: valid (0 errors, 3 warnings)" in result.output
    assert f"{folder}/SKILL.md:4: warning agent-specific-key" in result.output
    assert f"{folder}/SKILL.md:6: warning body-empty" in result.output


def test_validate_several_paths_and_a_skill_md_path(tmp_path: Path) -> None:
    good = write_skill(tmp_path, "good")
    bad = write_skill(tmp_path, "bad", frontmatter="name: other\ndescription: d\n")
    result = run("validate", good / SKILL_FILE, bad, tmp_path / "missing")
    assert result.exit_code == 1
    assert f"{good}/SKILL.md: valid (0 errors, 1 warning)" in result.output  # no suite
    assert f"{bad}/SKILL.md:2: error name-mismatch" in result.output
    assert f"{tmp_path / 'missing'}/SKILL.md: error missing-skill-md" in result.output
    assert "SKILL.md/SKILL.md" not in result.output


def test_validate_json(tmp_path: Path) -> None:
    good = write_skill(tmp_path, "good")
    bad = write_skill(tmp_path, "bad", frontmatter="name: bad\ndescription: d\nextra: 1\n")
    result = run("validate", "--json", good, bad)
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert [f["code"] for f in report[str(good)]] == ["no-suite"]  # a warning only
    [finding] = [f for f in report[str(bad)] if f["severity"] == "error"]
    assert finding == {"code": "unknown-key", "severity": "error", "file": "SKILL.md", "line": 4,
                       "message": finding["message"]}
    assert "unknown frontmatter key 'extra'" in finding["message"]
    assert run("validate", "--json", good).exit_code == 0


def test_validate_prints_user_text_literally(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, frontmatter='name: "[/bold] [red]x"\ndescription: d\n')
    result = run("validate", folder)
    assert result.exit_code == 1
    assert "name '[/bold] [red]x' must be lowercase" in result.output


def test_validate_shipped_example_skills(skills_dir: Path) -> None:
    skills = sorted(p for p in skills_dir.glob("*") if (p / SKILL_FILE).is_file())
    assert skills, f"no example skills under {skills_dir}"
    result = run("validate", *skills)
    assert " error " not in result.output, result.output
    assert result.exit_code == 0
    assert result.output.count(": valid (0 errors") == len(skills)


# --- new ---------------------------------------------------------------------------------


def test_new_creates_a_skill_that_validates_with_a_suite(tmp_path: Path) -> None:
    result = run("new", "csv-cleaning", "--dir", tmp_path)
    assert result.exit_code == 0, result.output
    folder = tmp_path / "csv-cleaning"
    assert f"Created {folder}/SKILL.md and {folder}/evals/evals.json" in result.output
    assert f"hubskills validate {folder}" in result.output
    assert [p for p in validate_skill(folder) if p.severity == "error"] == []
    suite = load_suite(folder / "evals" / "evals.json")
    assert suite.skill_name == "csv-cleaning"
    assert suite.cases[0].id == "example"
    assert run("validate", folder).exit_code == 0


def test_new_with_a_description_that_needs_quoting(tmp_path: Path) -> None:
    description = "Clean CSV files: dedupe, fix dates. Use when: a CSV looks wrong"
    result = run("new", "csv", "--dir", tmp_path, "--description", description)
    assert result.exit_code == 0
    assert validate_skill(tmp_path / "csv") == []
    assert f'description: "{description}"' in (tmp_path / "csv" / SKILL_FILE).read_text()


def test_new_in_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert run("new", "here").exit_code == 0
    assert (tmp_path / "here" / SKILL_FILE).is_file()


def test_new_refuses_an_existing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    code, out, err = run_main(capsys, "new", "taken", "--dir", tmp_path)
    assert code == 1
    assert out == ""
    assert f"Error: {tmp_path / 'taken'} already exists" in err
    assert f"Hint: hubskills validate {tmp_path / 'taken'}" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in (tmp_path / "taken").iterdir()) == ["keep.txt"]


@pytest.mark.parametrize(("name", "fixed"), [
    ("Bad_Name", "bad-name"), ("double--hyphen", "double-hyphen"), ("-lead", "lead"),
    ("a" * 65, "a" * 64), ("dé", "d"), ("__", "my-skill")])
def test_new_refuses_a_bad_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, fixed: str
) -> None:
    """The hint is the name made valid (a walk got `new my-skill` for `Bad_Name`, a folder it
    already had), or `my-skill` when nothing of it is left."""
    code, _, err = run_main(capsys, "new", "--dir", tmp_path, "--", name)
    assert code == 1
    assert f"Error: '{name}' is not a valid skill name" in err
    assert f"Hint: hubskills new {fixed}\n" in err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_new_refuses_a_dangling_symlink_and_a_file_as_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    code, _, err = run_main(capsys, "new", "dangling", "--dir", tmp_path)
    assert (code, "already exists" in err) == (1, True)
    (tmp_path / "file.txt").write_text("x")
    code, _, err = run_main(capsys, "new", "x", "--dir", tmp_path / "file.txt")
    assert code == 1
    assert f"Error: cannot create {tmp_path / 'file.txt' / 'x'}" in err
    assert "Traceback" not in err


def test_debug_env_shows_the_traceback(tmp_path: Path) -> None:
    quiet = module_run("new", "Bad_Name", "--dir", str(tmp_path))
    assert quiet.returncode == 1
    assert "Error: 'Bad_Name' is not a valid skill name" in quiet.stderr
    assert "Traceback" not in quiet.stderr
    loud = module_run("new", "Bad_Name", "--dir", str(tmp_path), HUBSKILLS_DEBUG="1")
    assert loud.returncode == 1
    assert "Traceback" in loud.stderr
    assert "registry.errors.InvalidSkill" in loud.stderr


# --- suite import / show -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "count", "first_id", "skill_name"),
    [
        ("upskill/tests.json", 3, "case-1", "target"),
        ("upskill/tests_list.json", 2, "case-1", "target"),
        ("upskill/skill_meta.json", 2, "case-1", "target"),
        ("skill_creator/evals/evals.json", 2, "1", "csv-report"),
        ("skill_creator/evals/evals_expectations.json", 1, "totals", "csv-report"),
        ("native/evals.json", 2, "totals", "csv-report"),
    ],
)
def test_suite_import_each_format(
    tmp_path: Path, source: str, count: int, first_id: str, skill_name: str
) -> None:
    skill = write_skill(tmp_path, "target")
    result = run("suite", "import", DATA / source, "--into", skill)
    assert result.exit_code == 0, result.output
    target = skill / "evals" / "evals.json"
    suite = load_suite(target)
    cases = f"{count} case{'s' if count != 1 else ''}"
    assert f"Imported {cases} into {target} ({suite.suite_hash()[:19]})" in result.output
    assert (len(suite.cases), suite.cases[0].id, suite.skill_name) == (
        count, first_id, skill_name)


def test_suite_import_keeps_listed_files(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "csv-report")
    source = DATA / "skill_creator" / "evals"
    result = run("suite", "import", source / "evals.json", "--into", skill)
    assert "in skill-creator's shape, copied 1 listed file" in result.output
    assert (skill / "evals" / "evals.json").read_bytes() == (source / "evals.json").read_bytes()
    copied = skill / "evals" / "files" / "sales.csv"
    assert copied.read_bytes() == (source / "files" / "sales.csv").read_bytes()


def test_suite_import_refuses_to_overwrite_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skill = write_skill(tmp_path, "target")
    target = skill / "evals" / "evals.json"
    target.parent.mkdir()
    target.write_text('{"cases": []}\n')
    source = DATA / "upskill" / "tests.json"
    code, _, err = run_main(capsys, "suite", "import", source, "--into", skill)
    assert code == 1
    assert f"Error: {target} already exists" in err
    assert f"Hint: hubskills suite import {source} --into {skill} --force" in err
    assert target.read_text() == '{"cases": []}\n'
    code, out, _ = run_main(capsys, "suite", "import", source, "--into", skill, "--force")
    assert code == 0
    assert "Imported 3 cases" in out
    assert len(load_suite(target).cases) == 3


def test_suite_import_refuses_a_folder_that_is_not_a_skill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(capsys, "suite", "import", DATA / "upskill" / "tests.json",
                            "--into", tmp_path / "typo")
    assert code == 1
    assert "is not a skill folder" in err and "Hint: hubskills new typo" in err
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("malformed/upskill_missing_contains.json",
         "case 2 ('no-contains'): field expected.contains"),
        ("malformed/skill_creator_traversal.json", "field files: '../../etc/passwd'"),
        ("malformed/native_bad_regex.json", "case 2 ('broken'): field checks[1].pattern"),
        ("malformed/not_json.json", "invalid JSON"),
        ("malformed/unknown_format.json", "unrecognised suite format"),
        ("upskill/nope.json", "no such suite file"),
    ],
)
def test_suite_import_of_a_malformed_file_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, message: str
) -> None:
    skill = write_skill(tmp_path, "target")
    code, _, err = run_main(capsys, "suite", "import", DATA / source, "--into", skill)
    assert code == 1
    assert err.startswith("Error: ")
    assert message in err
    assert "Traceback" not in err
    assert not (skill / "evals").exists()


def test_suite_show_table_and_json(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "csv-report")
    shutil.copytree(DATA / "native", skill / "evals")
    result = run("suite", "show", skill)
    assert result.exit_code == 0
    assert "2 cases, sha256:" in result.output
    for text in ("totals", "as-json", "icontains", "exact total", "Summarise the monthly"):
        assert text in result.output
    as_json = run("suite", "show", skill, "--json")
    assert as_json.exit_code == 0
    assert json.loads(as_json.output) == json.loads((DATA / "native" / "evals.json").read_text())
    by_file = run("suite", "show", DATA / "upskill" / "tests_list.json")
    assert by_file.exit_code == 0 and "case-2" in by_file.output


def test_suite_show_prints_markup_literally(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "demo")
    (skill / "evals").mkdir()
    (skill / "evals" / "evals.json").write_text(json.dumps({"cases": [
        {"id": "m", "prompt": "[/b] not markup [red]", "assertions": ["a"]}]}))
    result = run("suite", "show", skill)
    assert result.exit_code == 0
    assert "[/b] not markup [red]" in result.output


def test_suite_show_without_a_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    skill = write_skill(tmp_path, "demo")
    code, _, err = run_main(capsys, "suite", "show", skill)
    assert code == 1
    assert f"Error: {skill / 'evals' / 'evals.json'}: no such suite file" in err
    assert (f"Hint: hubskills suite generate {skill}  # or: hubskills suite import FILE "
            "--into") in err


def test_a_missing_folder_gets_a_hint_that_runs(tmp_path: Path, capsys, monkeypatch) -> None:
    """A typo names the closest folder (`hubskills validate demo`, which runs), anything else
    `hubskills new`: the finding alone left a newcomer with no next command."""
    write_skill(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(capsys, "validate", "dem")
    assert code == 1 and "dem/SKILL.md: error missing-skill-md" in out
    assert "Hint: hubskills validate demo  # the closest name there" in err
    assert run_main(capsys, "validate", "demo")[0] == 0
    code, _, err = run_main(capsys, "validate", "nothing-like-it")
    assert code == 1 and "Hint: hubskills new nothing-like-it" in err
    assert run_main(capsys, "new", "nothing-like-it")[0] == 0
