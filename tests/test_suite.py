"""`registry.format.suite`, `registry.format.suite_import` and `registry.format.checks_schema`."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from registry.errors import HubskillsError, InvalidSuite
from registry.format import suite as suite_module
from registry.format.checks_schema import CHECK_TYPES, Regex
from registry.format.suite import (
    SUITE_PATH,
    InputFile,
    Suite,
    detect_format,
    load_suite,
    parse_suite,
    suite_path,
)
from registry.format.suite_writer import save_suite

DATA = Path(__file__).parent / "data"
NATIVE = DATA / "native" / "evals.json"


def one_check(check: dict[str, Any]) -> dict[str, Any]:
    return {"cases": [{"id": "c1", "prompt": "p", "checks": [check]}]}


def suite_error(data: Any, **kwargs: Any) -> str:
    with pytest.raises(InvalidSuite) as info:
        parse_suite(data, **kwargs)
    return info.value.message


def reorder(value: Any) -> Any:
    """The same JSON with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {k: reorder(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reorder(v) for v in value]
    return value


# --- native format -----------------------------------------------------------------------


def test_native_file_loads_and_to_json_equals_the_original() -> None:
    original = json.loads(NATIVE.read_text())
    suite = load_suite(NATIVE)
    assert [c.id for c in suite.cases] == ["totals", "as-json"]
    assert [ch.type for ch in suite.cases[0].checks] == [
        "contains", "icontains", "contains_any", "not_contains", "regex", "not_regex", "equals"]
    assert [ch.type for ch in suite.cases[1].checks] == ["json", "python", "judge", "exec"]
    assert json.loads(suite.to_json()) == original
    assert suite.model_extra == {"description": original["description"]}


def test_save_then_load_is_lossless_and_checks_start_with_type(tmp_path: Path) -> None:
    suite = load_suite(NATIVE)
    target = save_suite(suite, tmp_path / "skill" / SUITE_PATH)
    assert target == tmp_path / "skill" / "evals" / "evals.json"
    assert json.loads(target.read_text()) == json.loads(NATIVE.read_text())
    assert load_suite(target) == suite
    for case in json.loads(target.read_text())["cases"]:
        assert all(next(iter(check)) == "type" for check in case.get("checks", []))
    assert suite_path(tmp_path / "skill") == target
    assert [p.name for p in target.parent.iterdir()] == ["evals.json"]  # no temp file left


def test_suite_hash_is_stable_across_key_order_and_defaults() -> None:
    data = json.loads(NATIVE.read_text())
    first = parse_suite(data).suite_hash()
    assert first.startswith("sha256:") and len(first) == 71
    assert parse_suite(reorder(data)).suite_hash() == first
    data["cases"][0]["checks"][0]["weight"] = 1.0  # the default, written out
    assert parse_suite(data).suite_hash() == first


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["cases"][0].update(prompt="Summarise the monthly totals."),
        lambda d: d["cases"][0]["checks"][0].update(value=["1251"]),
        lambda d: d["cases"][1]["checks"][0].update(weight=2),
        lambda d: d["cases"].reverse(),
        lambda d: d["cases"].pop(),
        lambda d: d["cases"][0]["files"].update({"data.csv": "month,amount\n"}),
        lambda d: d.update(skill_name="other"),
    ],
)
def test_suite_hash_changes_with_content(change: Any) -> None:
    data = json.loads(NATIVE.read_text())
    before = parse_suite(data).suite_hash()
    change(data)
    assert parse_suite(data).suite_hash() != before


def test_select_keeps_suite_order_and_refuses_unknown_ids() -> None:
    suite = load_suite(NATIVE)
    assert [c.id for c in suite.select(["as-json", "totals"]).cases] == ["totals", "as-json"]
    with pytest.raises(InvalidSuite, match="no case with id nope"):
        suite.select(["nope"])


# --- check schemas -----------------------------------------------------------------------

VALID_CHECKS = [
    {"type": "contains", "value": "x"},
    {"type": "contains", "value": ["x", "y"], "case_sensitive": True},
    {"type": "icontains", "value": ["x"]},
    {"type": "contains_any", "value": ["x", "y"]},
    {"type": "not_contains", "value": "x", "weight": 0.25, "name": "no x"},
    {"type": "regex", "pattern": r"\d+", "flags": "imsx"},
    {"type": "regex", "pattern": "a # comment with ( inside", "flags": "x"},
    {"type": "not_regex", "pattern": "error"},
    {"type": "equals", "value": "42", "case_sensitive": False, "strip": False},
    {"type": "json"},
    {"type": "json", "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}},
    {"type": "python", "code": "import re\n\ndef check(output, files):\n    return True, 'ok'\n"},
    {"type": "judge", "rubric": "Polite and correct."},
    {"type": "pairwise", "rubric": "The clearer explanation."},
    {"type": "exec", "command": "nvcc -c kernel.cu", "requires": ["nvcc"], "expect_exit": 0},
    {"type": "file_exists", "path": ["build.toml", "**/*.cu"]},
    {"type": "file_contains", "path": "a.cu", "value": ["__global__"], "case_sensitive": True},
    {"type": "file_not_contains", "path": "a.cu", "value": "cudaMalloc"},
    {"type": "file_regex", "path": "a.cu", "pattern": r"sm_?90", "flags": "i"},
    {"type": "file_parses", "path": "b.toml", "format": "toml", "key": "a.b", "contains": "9.0"},
    {"type": "command", "command": "python3 -m pytest -q", "requires": ["python3"]},
]


@pytest.mark.parametrize("check", VALID_CHECKS, ids=lambda c: c["type"])
def test_every_check_type_accepts_a_valid_check(check: dict[str, Any]) -> None:
    parsed = parse_suite(one_check(check)).cases[0].checks[0]
    assert parsed.type == check["type"]
    assert parsed.label() == check.get("name", check["type"])
    assert {c["type"] for c in VALID_CHECKS} == set(CHECK_TYPES)


INVALID_CHECKS = [
    ({"type": "regex", "pattern": "(unclosed"}, "checks[0].pattern", "invalid regular expr"),
    ({"type": "not_regex", "pattern": "[a-"}, "checks[0].pattern", "invalid regular expr"),
    ({"type": "regex", "pattern": "a", "flags": "iq"}, "checks[0].flags", "unknown regex flags q"),
    ({"type": "python", "code": "def helper(output):\n    return 1\n"}, "checks[0].code",
     "def check(output, files)"),
    ({"type": "python", "code": "def check(output, files)\n    return 1\n"}, "checks[0].code",
     "does not compile"),
    ({"type": "json", "schema": {"type": "integr"}}, "checks[0].schema", "invalid JSON Schema"),
    ({"type": "contains", "value": []}, "checks[0].value", "non-empty"),
    ({"type": "contains", "value": ""}, "checks[0].value", "non-empty"),
    ({"type": "contains_any", "value": ["a", ""]}, "checks[0].value", "non-empty"),
    ({"type": "contains", "value": "x", "weight": -1}, "checks[0].weight", "greater than 0"),
    ({"type": "contains", "value": "x", "weight": 0}, "checks[0].weight", "greater than 0"),
    ({"type": "contains", "vaule": "x"}, "checks[0].vaule", "not a field"),
    ({"type": "equals", "value": "x", "strp": True}, "checks[0].strp", "not a field"),
    ({"type": "judge", "rubric": ""}, "checks[0].rubric", "at least 1"),
    ({"type": "pairwise", "rubric": ""}, "checks[0].rubric", "at least 1"),
    ({"type": "pairwise", "rubric": " \n"}, "checks[0].rubric",
     "a pairwise check needs a rubric: what makes one answer better"),
    ({"type": "exec", "command": "x", "timeout": 0}, "checks[0].timeout", "greater than 0"),
    ({"type": "python", "code": "def check(o, f): pass", "timeout": 301}, "checks[0].timeout",
     "less than or equal"),
    ({"type": "icontains", "value": "x", "case_sensitive": True}, "checks[0]",
     "icontains is case-insensitive"),
    ({"type": "contain", "value": "x"}, "checks[0].type",
     "'contain' is not a check type (did you mean 'contains'?); allowed: contains,"),
    ({"value": "x"}, "checks[0].type", "every check needs a 'type', one of: contains"),
]


@pytest.mark.parametrize(("check", "field", "reason"), INVALID_CHECKS,
                         ids=[f"{c['type'] if 'type' in c else 'no-type'}-{f}-{i}"
                              for i, (c, f, _) in enumerate(INVALID_CHECKS)])
def test_invalid_checks_name_the_case_and_the_field(
    check: dict[str, Any], field: str, reason: str
) -> None:
    message = suite_error(one_check(check), source="skills/x/evals/evals.json")
    assert message.startswith("skills/x/evals/evals.json: case 1 ('c1'): ")
    assert f"field {field}: " in message
    assert reason in message
    assert "Value error" not in message


def test_regex_check_compiles_with_its_flags() -> None:
    check = Regex(type="regex", pattern="hello", flags="i")
    assert check.compiled().search("HELLO world")


def test_file_error_names_file_case_index_id_and_field() -> None:
    with pytest.raises(InvalidSuite) as info:
        load_suite(DATA / "malformed" / "native_bad_regex.json")
    message = info.value.message
    assert message.startswith(str(DATA / "malformed" / "native_bad_regex.json") + ": ")
    assert "case 2 ('broken'): field checks[1].pattern: invalid regular expression" in message
    assert "suite show" in (info.value.hint or "")
    typo = pytest.raises(InvalidSuite, load_suite, DATA / "malformed" / "native_typo.json")
    assert "case 1 ('typo'): field checks[0].vaule: not a field" in typo.value.message


def test_duplicate_ids_and_ungraded_cases_are_refused() -> None:
    case = {"id": "same", "prompt": "p", "assertions": ["ok"]}
    message = suite_error({"cases": [case, {"id": "b", "prompt": "p", "assertions": ["ok"]},
                                     dict(case)]}, source="s.json")
    assert message == "s.json: case 3 ('same'): field id: duplicate id, already used by case 1"
    message = suite_error({"cases": [case, {"id": "empty", "prompt": "p", "checks": []}]})
    assert "case 2 ('empty'): field checks: no checks and no assertions" in message


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ({"id": "bad id", "prompt": "p", "assertions": ["a"]}, "case 1 ('bad id'): field id"),
        ({"id": "x" * 129, "prompt": "p", "assertions": ["a"]}, "field id: ids are 1-128"),
        ({"id": "ok", "prompt": "", "assertions": ["a"]}, "case 1 ('ok'): field prompt"),
        ({"id": "ok", "assertions": ["a"]},
         "case 1 ('ok'): field prompt: missing (it is required)"),
        ({"id": "ok", "prompt": "p", "assertions": ["a"], "checkz": []},
         "case 1 ('ok'): field checkz: not a field of this object"),
        ({"id": "ok", "prompt": "p", "assertions": "a"}, "case 1 ('ok'): field assertions"),
        ({"id": "ok", "prompt": "p", "assertions": ["a"], "files": {"a": 1}},
         "case 1 ('ok'): field files.a"),
        ("just a string", "case 1: field (case)"),
    ],
)
def test_malformed_cases_name_the_case_and_field(case: Any, expected: str) -> None:
    assert expected in suite_error({"cases": [case]})


@pytest.mark.parametrize("name", ["../escape.txt", "/etc/passwd", "a/../../b", "dir\\file", ""])
def test_unsafe_file_names_are_refused(name: str) -> None:
    case = {"id": "f", "prompt": "p", "assertions": ["a"], "files": {name: "x"}}
    message = suite_error({"cases": [case]})
    assert "case 1 ('f'): field files: " in message
    assert "must be a relative path inside the case" in message


def test_safe_nested_file_names_are_kept() -> None:
    case = {"id": "f", "prompt": "p", "assertions": ["a"], "files": {"src/a.py": "x", "b": ""}}
    assert parse_suite({"cases": [case]}).cases[0].files == {"src/a.py": "x", "b": ""}


def test_many_errors_are_summarised() -> None:
    cases = [{"id": f"c{i}", "prompt": "p", "assertions": ["a"], f"extra{i}": 1}
             for i in range(10)]
    message = suite_error({"cases": cases})
    assert message.count("not a field of this object") == 8
    assert message.endswith("; and 2 more errors (fix these first)")


def test_one_error_in_many_cases_is_said_once_naming_them() -> None:
    """A walk: one mistyped check type in 11 cases listed the 18 allowed types 11 times."""
    cases = [{"id": f"c{i}", "prompt": "p", "checks": [{"type": "contain", "value": "x"}]}
             for i in range(11)]
    cases[4]["prompt"] = 3  # another error, in one case: said apart, in its place
    message = suite_error({"cases": cases})
    assert message.count("is not a check type") == 1 and message.count("allowed:") == 1
    assert "cases 1 ('c0'), 2 ('c1'), 3 ('c2'), 4 ('c3'), 5 ('c4'), 6 ('c5') … (11): field " \
           "checks[0].type: 'contain' is not a check type (did you mean 'contains'?)" in message
    assert "case 5 ('c4'): field prompt: must be text" in message
    assert "more error" not in message
    two = suite_error({"cases": cases[:2]})
    assert "cases 1 ('c0'), 2 ('c1') (2): field checks[0].type" in two and "…" not in two


# --- loading files -----------------------------------------------------------------------


def test_load_suite_file_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = pytest.raises(InvalidSuite, load_suite, tmp_path / "nope.json")
    assert "no such suite file" in missing.value.message
    (tmp_path / "evals.json").write_text("{}")
    missing = pytest.raises(InvalidSuite, load_suite, tmp_path / "evals.jsn")
    assert missing.value.hint == f"did you mean {tmp_path / 'evals.json'}?"
    bad = DATA / "malformed" / "not_json.json"  # a trailing comma on line 2, closed on line 3
    message = pytest.raises(InvalidSuite, load_suite, bad).value.message
    assert re.match(rf"{re.escape(str(bad))}:[23]: invalid JSON: \w", message), message
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"cases": [{"id": "caf\xe9"}]}')
    assert "not UTF-8" in pytest.raises(InvalidSuite, load_suite, latin).value.message
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    assert "nested too deeply" in pytest.raises(InvalidSuite, load_suite, deep).value.message
    monkeypatch.setattr(suite_module, "MAX_SUITE_BYTES", 10)
    assert "larger than" in pytest.raises(InvalidSuite, load_suite, NATIVE).value.message


@pytest.mark.parametrize(("text", "line"), [
    ('{"cases": [\n  {"id": "a", "prompt": "p"},\n  @\n]}', 3),  # a stray character
    ('{"cases": [\n  {"id": "a"\n  "prompt": "p"}]}', 3),  # a missing comma
    ('\n\n\n\n{"cases": [}', 5),
])
def test_invalid_json_names_the_file_its_line_and_what_is_wrong(tmp_path: Path, text: str,
                                                                 line: int) -> None:
    bad = tmp_path / "evals.json"
    bad.write_text(text)
    message = pytest.raises(InvalidSuite, load_suite, bad).value.message
    prefix = f"{bad}:{line}: invalid JSON: "
    assert message.startswith(prefix) and message[len(prefix):].strip(), message


def test_load_suite_accepts_a_utf8_bom(tmp_path: Path) -> None:
    file = tmp_path / "evals.json"
    file.write_bytes(b"\xef\xbb\xbf" + NATIVE.read_bytes())
    assert load_suite(file) == load_suite(NATIVE)


def test_unknown_format_is_refused_with_a_hint() -> None:
    error = pytest.raises(InvalidSuite, load_suite, DATA / "malformed" / "unknown_format.json")
    assert "unrecognised suite format" in error.value.message
    assert str(DATA / "malformed" / "unknown_format.json") in error.value.message
    assert error.value.hint


# --- foreign formats ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("file", "fmt"),
    [
        ("native/evals.json", "hubskills"),
        ("upskill/tests.json", "upskill"),
        ("upskill/tests_list.json", "upskill"),
        ("upskill/skill_meta.json", "upskill-meta"),
        ("skill_creator/evals/evals.json", "skill-creator"),
        ("skill_creator/evals/evals_expectations.json", "skill-creator"),
    ],
)
def test_detect_format(file: str, fmt: str) -> None:
    assert detect_format(json.loads((DATA / file).read_text())) == fmt


@pytest.mark.parametrize("data", [None, 3, "cases", {}, {"cases": 3}, [1, 2], [{"prompt": "x"}]])
def test_detect_format_refuses_other_shapes(data: Any) -> None:
    with pytest.raises(InvalidSuite, match="unrecognised suite format"):
        detect_format(data)


def test_import_upskill_cases_with_context_files() -> None:
    suite = load_suite(DATA / "upskill" / "tests.json")
    assert [c.id for c in suite.cases] == ["case-1", "case-2", "case-3"]
    first, second, _ = suite.cases
    assert first.prompt.startswith("Write a minimal build.toml")
    assert [(ch.type, ch.values(), ch.case_sensitive) for ch in first.checks] == [
        ("contains", ["[general]", "cuda-capabilities", "9.0"], False)]
    assert second.checks[0].values() == ["ops.impl"]
    assert list(second.files) == ["torch-ext/torch_binding.cpp"]
    assert "TORCH_LIBRARY_EXPAND" in second.files["torch-ext/torch_binding.cpp"]


def test_import_upskill_bare_list() -> None:
    suite = load_suite(DATA / "upskill" / "tests_list.json")
    assert [c.id for c in suite.cases] == ["case-1", "case-2"]
    assert suite.cases[1].files == {"README.md": "---\nlicense: mit\n---\n# Tiny dataset\n\n"
                                                  "100 rows of CSV.\n"}
    assert suite.cases[1].checks[0].values() == ["100", "csv"]


def test_import_upskill_skill_meta_keeps_its_metadata() -> None:
    suite = load_suite(DATA / "upskill" / "skill_meta.json")
    assert [c.prompt for c in suite.cases] == [
        "What file configures a kernel-builder project?",
        "Name the Nix command that builds all kernel variants."]
    assert suite.model_extra["imported_metadata"]["generated_by"] == "claude-sonnet-4-5"
    assert json.loads(suite.to_json())["imported_metadata"]["test_pass_rate"] == 0.8


def test_import_skill_creator_reads_listed_files_from_the_skill_folder() -> None:
    suite = load_suite(DATA / "skill_creator" / "evals" / "evals.json")
    assert suite.skill_name == "csv-report"
    assert [c.id for c in suite.cases] == ["1", "2"]
    first = suite.cases[0]
    assert first.assertions == ["The output is a markdown table", "January's total is 1250"]
    assert first.expected_output.startswith("A markdown table")
    assert first.checks == []
    sales = (DATA / "skill_creator" / "evals" / "files" / "sales.csv").read_bytes()
    assert list(first.files) == ["evals/files/sales.csv"]  # the listed path, not the base name
    listed = first.files["evals/files/sales.csv"]
    assert isinstance(listed, InputFile) and listed.data == sales
    assert listed.text() == sales.decode() and listed.media_type() == "text/csv"


def test_import_skill_creator_expectations() -> None:
    suite = load_suite(DATA / "skill_creator" / "evals" / "evals_expectations.json")
    [case] = suite.cases
    assert (case.id, case.files) == ("totals", {})
    assert case.assertions == ["Adds exactly one Total row", "Keeps the header row unchanged"]


def test_skill_creator_files_need_a_folder_and_must_exist(tmp_path: Path) -> None:
    data = {"evals": [{"id": 1, "prompt": "p", "files": ["data.csv"], "assertions": ["a"]}]}
    assert "cannot read 'data.csv' without a skill folder" in suite_error(data)
    assert "'data.csv' not found" in suite_error(data, base_dir=tmp_path)
    (tmp_path / "data.csv").write_text("a,b\n")
    [file] = parse_suite(data, base_dir=tmp_path).cases[0].files.values()
    assert (file.path, file.data) == ("data.csv", b"a,b\n")
    data["evals"][0]["files"] = "data.csv"
    assert "field files: expected a list" in suite_error(data, base_dir=tmp_path)
    data["evals"][0]["files"] = ["data.csv", "./data.csv"]
    assert "'./data.csv' is listed twice" in suite_error(data, base_dir=tmp_path)


def test_skill_creator_paths_outside_the_folder_are_refused(tmp_path: Path) -> None:
    file = DATA / "malformed" / "skill_creator_traversal.json"
    message = pytest.raises(InvalidSuite, load_suite, file).value.message
    assert message.startswith(f"{file}: case 1 ('7'): field files: '../../etc/passwd'")
    skill = tmp_path / "skill"
    (skill / "evals").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("token")
    os.symlink(tmp_path / "secret.txt", skill / "evals" / "notes.txt")
    data = {"evals": [{"prompt": "p", "files": ["evals/notes.txt"], "assertions": ["a"]}]}
    assert "links outside the folder" in suite_error(data, base_dir=skill / "evals")
    for bad in ("/etc/passwd", "a\\b", ""):
        data["evals"][0]["files"] = [bad]
        assert "field files" in suite_error(data, base_dir=skill / "evals")


@pytest.mark.parametrize(
    ("file", "expected"),
    [
        ("upskill_missing_contains.json", "case 2 ('no-contains'): field expected.contains"),
        ("skill_creator_bad_assertions.json", "case 2 ('second'): field expectations"),
    ],
)
def test_malformed_foreign_files_name_file_case_and_field(file: str, expected: str) -> None:
    path = DATA / "malformed" / file
    error = pytest.raises(InvalidSuite, load_suite, path).value
    assert error.message.startswith(f"{path}: {expected}")
    assert "suite import" in (error.hint or "")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ([{"input": "", "expected": {"contains": "x"}}], "case 1: field input"),
        ([{"input": "q", "expected": "x"}], "case 1: field expected"),
        ([{"input": "q", "expected": {"contains": 5}}], "case 1: field expected.contains"),
        ([{"input": "q", "expected": {"contains": {"a": 1}}}], "case 1: field expected.contains"),
        ([{"input": "q", "expected": {"contains": ["a", 1]}}], "case 1: field expected.contains"),
        ([{"input": "q", "expected": {"contains": "a"}, "context": {"files": ["a"]}}],
         "case 1: field context.files"),
        ({"cases": [{"input": "q", "expected": {"contains": "a"}}, "nope"]}, "case 2: expected"),
        ({"metadata": {}, "tests": [{"input": "q"}]}, "case 1: field expected.contains"),
        ({"evals": [{"id": 3, "assertions": ["a"]}]}, "case 1 ('3'): field prompt"),
        ({"evals": [{"id": 3, "prompt": "p"}]}, "case 1 ('3'): field checks: no checks"),
        ({"evals": [5]}, "case 1: expected an object"),
        ({"evals": [{"prompt": "p", "assertions": [1]}]}, "case 1 ('1'): field assertions"),
    ],
)
def test_malformed_foreign_cases(data: Any, expected: str) -> None:
    assert suite_error(data, source="in.json").startswith(f"in.json: {expected}")


def test_upskill_ids_and_skill_name_are_kept() -> None:
    data = {"skill_name": "demo",
            "cases": [{"id": "first", "input": "q", "expected": {"contains": "a"}}]}
    suite = parse_suite(data)
    assert (suite.skill_name, suite.cases[0].id) == ("demo", "first")


# --- no input crashes the loaders --------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["cases", "evals", "tests", "metadata", "id", "prompt",
                                       "input", "expected", "contains", "checks", "type",
                                       "value", "files", "context", "assertions", "pattern"])
                      | st.text(max_size=6), inner, max_size=5),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(data=_JSON)
def test_property_parse_suite_raises_only_hubskills_errors(data: Any) -> None:
    try:
        suite = parse_suite(data, base_dir=DATA / "skill_creator" / "evals")
    except HubskillsError:
        return
    assert json.loads(suite.to_json())["cases"] is not None
    assert suite.suite_hash().startswith("sha256:")


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=200) | _JSON.map(lambda d: json.dumps(d).encode()))
def test_property_load_suite_raises_only_hubskills_errors(tmp_path: Path, raw: bytes) -> None:
    file = tmp_path / "evals.json"
    file.write_bytes(raw)
    try:
        load_suite(file)
    except HubskillsError:
        pass


def test_a_copied_skill_folder_loads_its_own_suite(tmp_path: Path) -> None:
    skill = tmp_path / "csv-report"
    shutil.copytree(DATA / "skill_creator", skill)
    suite = load_suite(suite_path(skill), skill_dir=skill)
    assert suite.cases[0].files["evals/files/sales.csv"].text().startswith("month,region,amount")
    assert isinstance(suite, Suite)
