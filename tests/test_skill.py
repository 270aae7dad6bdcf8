"""`registry.format.skill`: loading, rendering and hashing a skill folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from traced import traced_peak

from registry.errors import HubskillsError, InvalidSkill
from registry.format.skill import (
    SKILL_FILE,
    Skill,
    SkillFormatError,
    content_hash,
    dump_frontmatter,
    estimate_tokens,
    load_skill,
    parse_frontmatter,
    split_frontmatter,
)
from registry.format.validate import validate_skill

GOOD = '---\nname: demo\ndescription: "Does X. Use when: Y."\n---\n# Demo\n\nSteps.\n'


def make_skill(parent: Path, text: str | bytes, name: str = "demo") -> Path:
    folder = parent / name
    folder.mkdir(parents=True, exist_ok=True)
    data = text.encode() if isinstance(text, str) else text
    (folder / SKILL_FILE).write_bytes(data)
    return folder


def load_error(folder: Path) -> SkillFormatError:
    with pytest.raises(SkillFormatError) as info:
        load_skill(folder)
    return info.value


# --- loading -----------------------------------------------------------------------------


def test_load_reads_frontmatter_body_and_key_lines(tmp_path: Path) -> None:
    text = (
        "---\nname: demo\ndescription: \"Does X. Use when: Y.\"\nlicense: MIT\n"
        "metadata:\n  version: \"2.1\"\n  author: me\n---\n# Demo\n\nSteps.\n"
    )
    skill = load_skill(make_skill(tmp_path, text))
    assert (skill.name, skill.description, skill.version) == ("demo", "Does X. Use when: Y.", "2.1")
    assert list(skill.frontmatter) == ["name", "description", "license", "metadata"]
    assert skill.body == "# Demo\n\nSteps.\n"
    assert skill.body_line == 9
    assert skill.key_lines == {
        "name": 2, "description": 3, "license": 4, "metadata": 5,
        "metadata.version": 6, "metadata.author": 7,
    }


def test_load_accepts_the_skill_md_path_a_bom_and_crlf(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "\ufeff" + GOOD.replace("\n", "\r\n"))
    skill = load_skill(folder / SKILL_FILE)
    assert skill.path == folder
    assert skill.name == "demo"
    assert skill.body == "# Demo\r\n\r\nSteps.\r\n"


def test_version_is_none_without_metadata_version(tmp_path: Path) -> None:
    assert load_skill(make_skill(tmp_path, GOOD)).version is None


@pytest.mark.parametrize(
    ("text", "code", "line"),
    [
        ("# no frontmatter\n", "no-frontmatter", 1),
        ("", "no-frontmatter", 1),
        ("---\nname: demo\n", "frontmatter-unclosed", 1),
        ("---\n- a\n- b\n---\nbody\n", "frontmatter-not-mapping", 2),
        ("---\n---\nbody\n", "frontmatter-not-mapping", 2),
        ("---\nname: demo\ndescription: Use when: x\n---\n", "invalid-yaml", 3),
        ("---\nname: demo\nname: evil\n---\n", "duplicate-key", 3),
        ("---\nname: demo\nx: &a [1]\ny: *a\n---\n", "yaml-alias", 4),
        ("---\nname: demo\ndescription: " + "[" * 200 + "]" * 200 + "\n---\n",
         "yaml-too-complex", 3),
        ("---\nname: demo\nlist: [" + ", ".join(["1"] * 6000) + "]\n---\n",
         "yaml-too-complex", 3),
        ("---\nname: !!python/object:os.system x\n---\n", "invalid-yaml", 2),
    ],
)
def test_load_errors_have_a_code_a_line_and_a_hint(
    tmp_path: Path, text: str, code: str, line: int
) -> None:
    folder = make_skill(tmp_path, text)
    error = load_error(folder)
    assert isinstance(error, InvalidSkill)
    assert (error.code, error.line, error.file) == (code, line, SKILL_FILE)
    assert error.message.startswith(f"{folder / SKILL_FILE}:{line}: ")
    assert error.hint


def test_hints_fit_the_problem(tmp_path: Path) -> None:
    alias = load_error(make_skill(tmp_path, "---\na: &x 1\nb: *x\n---\n", "alias"))
    assert "aliases" in (alias.hint or "")
    colon = load_error(make_skill(tmp_path, "---\ndescription: Use when: x\n---\n", "colon"))
    assert colon.hint == 'quote values that contain ": " (e.g. description: "Use when: ...")'


def test_missing_folder_and_missing_skill_md(tmp_path: Path) -> None:
    missing = load_error(tmp_path / "nope")
    assert missing.code == "missing-skill-md"
    assert str(tmp_path / "nope") in missing.message
    assert missing.hint == "hubskills new nope"
    (tmp_path / "empty").mkdir()
    assert "has no SKILL.md" in load_error(tmp_path / "empty").message
    # A folder name that happens to mention another problem keeps the right code.
    assert load_error(tmp_path / "utf-8-invalid-yaml").code == "missing-skill-md"


def test_non_utf8_bytes_name_the_line(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, b"---\nname: demo\ndescription: caf\xe9\n---\n")
    error = load_error(folder)
    assert (error.code, error.line) == ("not-utf8", 3)


def test_yaml_bomb_is_refused_without_expanding(tmp_path: Path) -> None:
    lines = ["---", 'lol0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
    folder = make_skill(tmp_path, "\n".join([*lines, "---", ""]))
    peak, problems = traced_peak(
        "from registry.format.validate import validate_skill",
        "result = [(p.code, p.line) for p in validate_skill(folder)]", folder=str(folder))
    assert [tuple(p) for p in problems] == [("yaml-alias", 3)]
    assert peak < 20 * 2**20  # expanded, the bomb would be 9**10 strings


def test_ten_megabyte_description_is_refused_before_parsing(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "---\nname: demo\ndescription: " + "x" * 10_000_000 + "\n---\n")
    problems = validate_skill(folder)
    assert [(p.code, p.severity, p.line) for p in problems] == [
        ("frontmatter-too-large", "error", 2)
    ]


def test_huge_skill_md_is_refused_without_reading_it(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, GOOD)
    with open(folder / SKILL_FILE, "ab") as handle:
        handle.truncate(17 * 2**20)  # sparse: cheap to create
    assert load_error(folder).code == "skill-md-too-large"


@pytest.mark.skipif(not Path("/proc/self/pagemap").exists(), reason="Linux's /proc only")
def test_a_skill_md_linked_to_an_endless_file_is_read_only_to_the_bound(tmp_path: Path) -> None:
    """A pull request's SKILL.md linked to a file that reports 0 bytes and never ends (the
    process's page map: 8 bytes for each page of its address space, hundreds of GiB) was read
    whole by `hubskills ci`, filling the runner's memory (red-team round 24)."""
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / SKILL_FILE).symlink_to("/proc/self/pagemap")
    assert load_error(folder).code == "skill-md-too-large"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable files")
def test_unreadable_skill_md_is_an_invalid_skill(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, GOOD)
    (folder / SKILL_FILE).chmod(0)
    try:
        assert load_error(folder).code == "unreadable"
    finally:
        (folder / SKILL_FILE).chmod(0o644)


def test_split_frontmatter_returns_the_body_line() -> None:
    assert split_frontmatter("---\na: 1\n---\nbody\n") == ("a: 1\n", "body\n", 4)
    assert split_frontmatter("---\n---\n") == ("", "", 3)


def test_parse_frontmatter_lines_count_from_the_file() -> None:
    data, lines = parse_frontmatter("name: x\nmetadata:\n  a: b\n")
    assert data == {"name": "x", "metadata": {"a": "b"}}
    assert lines == {"name": 2, "metadata": 3, "metadata.a": 4}


# --- rendering ---------------------------------------------------------------------------

TRICKY = {
    "name": "demo",
    "description": "Use when: the user asks; never # a comment",
    "zeta-unknown": "kept",
    "argument-hint": "[file]",
    "bools": ["true", "false", "yes", "no", "on", "off", "y", "n", "Y", "NO", "True"],
    "nulls": ["null", "~", "Null", ""],
    "numbers": ["1.0", "0.1.0", "1e3", "0x1F", "010", "1_000", ".5", "-1", "+1", ".inf", "NaN"],
    "dates": ["2024-01-01", "2024-1-1", "12:30"],
    "yaml-syntax": ["- item", "? key", "a: b", "[x]", "{y}", "*alias", "&anchor", "!tag",
                    "|", ">", "'single'", '"double"', "%percent", "@at", "`tick`", "<<", "="],
    "multi": "line one\nline two\n\n  indented\ttab\n",
    "spaces": "  leading and trailing  ",
    "unicode": "naïve café — 日本語 🤖 \u2028 \x85 \ufeff \x00 \x7f",
    "metadata": {"version": "1.0", "author": "Jane", "nested": {"deep": ["a", 1, True, None]}},
    "plain-int": 3,
    "plain-bool": False,
    "plain-null": None,
    "empty-map": {},
    "empty-list": [],
}


def test_render_round_trip_keeps_keys_order_values_and_body(tmp_path: Path) -> None:
    body = "# Title\n\n---\n\nA body with a horizontal rule above.\n"
    original = Skill(tmp_path / "demo", dict(TRICKY), body)
    folder = make_skill(tmp_path, original.render())
    loaded = load_skill(folder)
    assert loaded.frontmatter == TRICKY
    assert list(loaded.frontmatter) == list(TRICKY)
    assert loaded.body == body
    again = load_skill(make_skill(tmp_path, loaded.render(), name="again"))
    assert again.frontmatter == TRICKY
    assert loaded.render() == again.render()


def test_rendered_frontmatter_parses_with_plain_safe_load() -> None:
    assert yaml.safe_load(dump_frontmatter(TRICKY)) == TRICKY


@pytest.mark.parametrize("value", ["1.0", "0.1.0", "1e3", "y", "on", "NO", "null", "true", "10"])
def test_ambiguous_strings_are_quoted(value: str) -> None:
    assert dump_frontmatter({"v": value}) == f'v: "{value}"\n'


@pytest.mark.parametrize("value", ["pdf-tools", "Apache-2.0", "Read", "a/b@c+d"])
def test_unambiguous_strings_stay_plain(value: str) -> None:
    assert dump_frontmatter({"v": value}) == f"v: {value}\n"


def test_render_of_a_loaded_file_keeps_unknown_and_agent_keys(tmp_path: Path) -> None:
    text = ("---\nname: demo\nuser-invocable: true\ndescription: \"d\"\nx-custom:\n"
            "  - 1\n  - two\n---\nBody\n")
    skill = load_skill(make_skill(tmp_path, text))
    assert skill.render() == (
        '---\nname: demo\nuser-invocable: true\ndescription: d\nx-custom:\n- 1\n- two\n'
        "---\nBody\n"
    )


_KEYS = st.text(min_size=1, max_size=12)
_SCALARS = st.one_of(st.text(max_size=30), st.integers(), st.booleans(), st.none())
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(frontmatter=st.dictionaries(_KEYS, _VALUES, max_size=8), body=st.text(max_size=60))
def test_property_render_then_parse_is_identity(frontmatter: dict, body: str) -> None:
    text = f"---\n{dump_frontmatter(frontmatter)}---\n{body}"
    yaml_text, parsed_body, _ = split_frontmatter(text)
    parsed, _ = parse_frontmatter(yaml_text)
    assert parsed == frontmatter
    assert list(parsed) == list(frontmatter)
    assert parsed_body == body


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(str.encode),
    st.text(max_size=200).map(lambda t: f"---\n{t}\n---\n{t}".encode()),
))
def test_property_any_bytes_load_or_raise_a_hubskills_error(tmp_path: Path, data: bytes) -> None:
    folder = make_skill(tmp_path, data)
    try:
        load_skill(folder)
    except HubskillsError:
        pass
    problems = validate_skill(folder)
    assert all(p.severity in ("error", "warning") and p.code for p in problems)


# --- files and content hash --------------------------------------------------------------


def hashed_skill(tmp_path: Path) -> Path:
    folder = make_skill(tmp_path, GOOD)
    (folder / "references").mkdir()
    (folder / "references" / "api.md").write_text("# API\n")
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.py").write_text("print('hi')\n")
    return folder


def test_hash_is_deterministic_and_creation_order_independent(tmp_path: Path) -> None:
    first = hashed_skill(tmp_path / "a")
    second = tmp_path / "b" / "demo"
    (second / "scripts").mkdir(parents=True)
    (second / "scripts" / "run.py").write_text("print('hi')\n")
    (second / "references").mkdir()
    (second / "references" / "api.md").write_text("# API\n")
    (second / SKILL_FILE).write_text(GOOD)
    assert content_hash(first) == content_hash(first) == content_hash(second)
    assert content_hash(first).startswith("sha256:") and len(content_hash(first)) == 71
    assert load_skill(first).content_hash() == content_hash(first)


def test_hash_ignores_markers_git_and_editor_noise(tmp_path: Path) -> None:
    folder = hashed_skill(tmp_path)
    before = content_hash(folder)
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "run.cpython-311.pyc").write_bytes(b"\0\1")
    (folder / "scripts" / "__pycache__").mkdir()
    for name in (".hubskills.json", ".hf-skill-manifest.json", ".DS_Store", ".SKILL.md.swp",
                 "scripts/.run.py.swp", "notes.md~"):
        (folder / name).write_text("noise")
    assert content_hash(folder) == before
    assert load_skill(folder).files() == ["SKILL.md", "references/api.md", "scripts/run.py"]


@pytest.mark.parametrize("change", ["byte", "rename", "add", "remove", "move"])
def test_hash_changes_with_any_byte_or_name(tmp_path: Path, change: str) -> None:
    folder = hashed_skill(tmp_path)
    before = content_hash(folder)
    api = folder / "references" / "api.md"
    if change == "byte":
        api.write_text("# APi\n")
    elif change == "rename":
        api.rename(folder / "references" / "apis.md")
    elif change == "add":
        (folder / "assets").mkdir()
        (folder / "assets" / "empty.txt").write_text("")
    elif change == "remove":
        api.unlink()
    else:
        api.rename(folder / "api.md")
    assert content_hash(folder) != before


def test_hash_does_not_follow_symlinks(tmp_path: Path) -> None:
    folder = hashed_skill(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("one")
    os.symlink(outside / "secret.txt", folder / "link.txt")
    os.symlink(outside, folder / "linked-dir")
    before = content_hash(folder)
    (outside / "secret.txt").write_text("two")
    (outside / "more.txt").write_text("more")
    assert content_hash(folder) == before
    assert "linked-dir" in load_skill(folder).files()
    assert "linked-dir/more.txt" not in load_skill(folder).files()
    (folder / "linked-dir").unlink()
    os.symlink(tmp_path, folder / "linked-dir")
    assert content_hash(folder) != before


def test_symlink_and_file_with_the_same_text_hash_differently(tmp_path: Path) -> None:
    as_link = make_skill(tmp_path / "a", GOOD)
    os.symlink("target.md", as_link / "x")
    as_file = make_skill(tmp_path / "b", GOOD)
    (as_file / "x").write_text("target.md")
    assert content_hash(as_link) != content_hash(as_file)


def test_hash_handles_odd_names_and_skips_fifos(tmp_path: Path) -> None:
    folder = hashed_skill(tmp_path)
    before = content_hash(folder)
    os.mkfifo(folder / "pipe")  # reading it would block forever
    assert content_hash(folder) == before
    (folder / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 name")
    assert content_hash(folder) != before


# --- token estimate ----------------------------------------------------------------------


def test_token_estimate_is_labelled_and_plausible(tmp_path: Path) -> None:
    assert "estimate" in (estimate_tokens.__doc__ or "").lower()
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    sentence = "The quick brown fox jumps over the lazy dog. " * 100  # ~1000 real tokens
    assert 800 <= estimate_tokens(sentence) <= 1400
    assert estimate_tokens("日本語のテキスト" * 10) >= 40  # CJK: not 4 characters a token
    skill = load_skill(make_skill(tmp_path, GOOD))
    estimate = skill.token_estimate()
    assert set(estimate) == {"metadata", "body"}
    assert estimate["metadata"] == estimate_tokens("demo\nDoes X. Use when: Y.")
    assert estimate["body"] == estimate_tokens("# Demo\n\nSteps.\n") == 4
