"""`registry.format.validate`: one skill per rule of the format, each finding located."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from registry.format.skill import SKILL_FILE, Problem
from registry.format.validate import has_errors, validate_skill

DESCRIPTION = "Does X for Y files. Use when the user asks about X."


def skill_text(frontmatter: str | None = None, body: str = "# Demo\n\nDo the thing.\n") -> str:
    if frontmatter is None:
        frontmatter = f'name: demo\ndescription: "{DESCRIPTION}"\n'
    return f"---\n{frontmatter}---\n{body}"


def write(parent: Path, text: str | bytes, name: str = "demo") -> Path:
    folder = parent / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / SKILL_FILE).write_bytes(text.encode() if isinstance(text, str) else text)
    return folder


def findings(folder: Path) -> list[tuple[str, str, str, int | None]]:
    return [(p.code, p.severity, p.file, p.line) for p in validate_skill(folder)]


def test_a_valid_skill_has_no_findings(tmp_path: Path) -> None:
    text = skill_text(
        'name: demo\ndescription: "Does X. Use when: Y."\nlicense: Apache-2.0\n'
        'compatibility: "Python 3.11+"\nmetadata:\n  version: "1.0"\n  author: me\n'
        'allowed-tools: "Read Grep Bash(git:*)"\n',
        "# Demo\n\nSee [the API](references/api.md#usage) and [site](https://example.com).\n",
    )
    folder = write(tmp_path, text)
    (folder / "references").mkdir()
    (folder / "references" / "api.md").write_text("# API\n")
    assert validate_skill(folder) == []
    assert has_errors(validate_skill(folder)) is False


# Each rule, a skill that breaks it: (frontmatter, code, severity, line).
RULES = [
    ("description: d\n", "name-missing", "error", 2),
    ("name: ''\ndescription: d\n", "name-missing", "error", 2),
    ("name: 42\ndescription: d\n", "name-not-string", "error", 2),
    ("description: d\nname: other\n", "name-mismatch", "error", 3),
    ("name: demo\n", "description-missing", "error", 2),
    ("name: demo\ndescription: '   '\n", "description-missing", "error", 3),
    ("name: demo\ndescription: [a, b]\n", "description-not-string", "error", 3),
    ("name: demo\ndescription: " + "x" * 1025 + "\n", "description-too-long", "error", 3),
    ("name: demo\ndescription: Returns <html> pages\n", "description-angle-brackets",
     "warning", 3),
    ("name: demo\ndescription: d\nlicense: 2.0\n", "license-not-string", "error", 4),
    ("name: demo\ndescription: d\ncompatibility: " + "c" * 501 + "\n",
     "compatibility-invalid", "error", 4),
    ("name: demo\ndescription: d\ncompatibility: ''\n", "compatibility-invalid", "error", 4),
    ("name: demo\ndescription: d\nmetadata: v1\n", "metadata-not-mapping", "error", 4),
    ("name: demo\ndescription: d\nmetadata:\n", "metadata-not-mapping", "error", 4),
    ("name: demo\ndescription: d\nmetadata:\n  author: me\n  version: 1.0\n",
     "metadata-not-string", "error", 6),
    ("name: demo\ndescription: d\nmetadata:\n  tags:\n    - a\n", "metadata-not-string",
     "error", 5),
    ("name: demo\ndescription: d\nallowed-tools:\n  - Read\n  - Grep\n",
     "allowed-tools-not-string", "warning", 4),
    ("name: demo\ndescription: d\ntags: [a]\n", "unknown-key", "error", 4),
    ("name: demo\ndescription: d\nversion: 1.0.0\n", "unknown-key", "error", 4),
    ("name: demo\ndescription: d\nargument-hint: '[file]'\n", "agent-specific-key",
     "warning", 4),
    ("name: demo\ndescription: d\nuser-invocable: false\n", "agent-specific-key", "warning", 4),
    ("name: demo\ndescription: d\ndisable-model-invocation: true\n", "agent-specific-key",
     "warning", 4),
]


@pytest.mark.parametrize(("frontmatter", "code", "severity", "line"), RULES)
def test_each_rule_has_its_finding(
    tmp_path: Path, frontmatter: str, code: str, severity: str, line: int
) -> None:
    folder = write(tmp_path, skill_text(frontmatter))
    assert findings(folder) == [(code, severity, SKILL_FILE, line)]
    assert has_errors(validate_skill(folder)) is (severity == "error")


@pytest.mark.parametrize("name", ["Demo", "de_mo", "de--mo", "-demo", "demo-", "dé-mo"])
def test_invalid_names_are_errors_even_when_the_folder_matches(tmp_path: Path, name: str) -> None:
    folder = write(tmp_path, skill_text(f"name: {name}\ndescription: d\n"), name)
    assert findings(folder) == [("name-invalid", "error", SKILL_FILE, 2)]


def test_name_too_long_and_reserved_words(tmp_path: Path) -> None:
    long_name = "a" * 65
    folder = write(tmp_path, skill_text(f"name: {long_name}\ndescription: d\n"), long_name)
    assert findings(folder) == [("name-too-long", "error", SKILL_FILE, 2)]
    ok = "a" * 64
    assert findings(write(tmp_path, skill_text(f"name: {ok}\ndescription: d\n"), ok)) == []
    for name in ("claude-helper", "my-anthropic-tools"):
        folder = write(tmp_path, skill_text(f"name: {name}\ndescription: d\n"), name)
        assert findings(folder) == [("name-reserved", "warning", SKILL_FILE, 2)]


def test_messages_say_how_to_fix(tmp_path: Path) -> None:
    folder = write(tmp_path, skill_text(
        "name: demo\ndescription: d\nversion: 1.0.0\nmetadata:\n  version: 1.0\n"))
    by_code = {p.code: p.message for p in validate_skill(folder)}
    assert "metadata.version" in by_code["unknown-key"]
    assert 'version: "1.0"' in by_code["metadata-not-string"]


def test_unquoted_colon_in_description_reports_its_line(tmp_path: Path) -> None:
    folder = write(tmp_path, skill_text("name: demo\ndescription: Use when: x\n"))
    problems = validate_skill(folder)
    assert [(p.code, p.severity, p.line) for p in problems] == [("invalid-yaml", "error", 3)]
    assert problems[0].location() == "SKILL.md:3"
    assert str(tmp_path) not in problems[0].message  # the finding is relative to the folder


@pytest.mark.parametrize(
    ("text", "code", "line"),
    [
        (b"# just markdown\n", "no-frontmatter", 1),
        (b"---\nname: demo\ndescription: d\n", "frontmatter-unclosed", 1),
        (b"---\njust a string\n---\n", "frontmatter-not-mapping", 2),
        (b"---\nname: demo\ndescription: \xff\xfe\n---\n", "not-utf8", 3),
        (b"---\nname: demo\nname: demo\ndescription: d\n---\n", "duplicate-key", 3),
        (b"---\nname: &n demo\ndescription: *n\n---\n", "yaml-alias", 3),
    ],
)
def test_unloadable_skills_give_one_located_error(
    tmp_path: Path, text: bytes, code: str, line: int
) -> None:
    assert findings(write(tmp_path, text)) == [(code, "error", SKILL_FILE, line)]


def test_missing_folder_or_skill_md_is_a_finding(tmp_path: Path) -> None:
    assert findings(tmp_path / "nope") == [("missing-skill-md", "error", SKILL_FILE, None)]
    (tmp_path / "empty").mkdir()
    [problem] = validate_skill(tmp_path / "empty")
    assert problem.code == "missing-skill-md"
    assert problem.location() == SKILL_FILE


def test_a_skill_md_path_validates_its_folder(tmp_path: Path) -> None:
    folder = write(tmp_path, skill_text())
    assert validate_skill(folder / SKILL_FILE) == []


# --- body --------------------------------------------------------------------------------


def test_empty_body_is_a_warning_at_the_body_line(tmp_path: Path) -> None:
    folder = write(tmp_path, skill_text(body="\n  \n"))
    assert findings(folder) == [("body-empty", "warning", SKILL_FILE, 5)]


def test_body_line_and_token_limits(tmp_path: Path) -> None:
    exactly = "line\n" * 500
    assert findings(write(tmp_path, skill_text(body=exactly))) == []
    long = write(tmp_path, skill_text(body="line\n" * 501), "demo")
    assert findings(long) == [("body-too-long", "warning", SKILL_FILE, 5)]
    heavy = write(tmp_path, skill_text(body="word " * 4100 + "\n"), "demo")
    problems = validate_skill(heavy)
    assert [(p.code, p.severity, p.line) for p in problems] == [
        ("body-too-many-tokens", "warning", 5)
    ]
    assert "estimate" in problems[0].message


def test_links_missing_outside_and_too_deep(tmp_path: Path) -> None:
    body = (
        "# Demo\n"                                          # line 5
        "[ok](references/api.md) [ok2](./references/api.md)\n"
        "[missing](references/nope.md)\n"                   # line 7
        "[up](../other/SKILL.md)\n"                         # line 8
        "[abs](/etc/passwd)\n"                              # line 9
        "[deep](references/sub/deep.md)\n"                  # line 10
        "![image](assets/logo%20big.png)\n"
        "[web](https://example.com/x) [mail](mailto:a@b.c) [anchor](#steps)\n"
    )
    folder = write(tmp_path, skill_text(body=body))
    (folder / "references" / "sub").mkdir(parents=True)
    (folder / "references" / "api.md").write_text("api")
    (folder / "references" / "sub" / "deep.md").write_text("deep")
    (folder / "assets").mkdir()
    (folder / "assets" / "logo big.png").write_bytes(b"\x89PNG")
    assert findings(folder) == [
        ("reference-missing", "warning", SKILL_FILE, 7),
        ("reference-outside", "error", SKILL_FILE, 8),
        ("reference-outside", "error", SKILL_FILE, 9),
        ("reference-deep", "warning", SKILL_FILE, 10),
    ]


def test_a_symlink_out_of_the_folder_is_outside(tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("secret")
    folder = write(tmp_path, skill_text(body="See [notes](notes.md).\n"))
    os.symlink(outside, folder / "notes.md")
    assert findings(folder) == [("reference-outside", "error", SKILL_FILE, 5)]


def test_links_inside_code_are_not_references(tmp_path: Path) -> None:
    body = (
        "Call `handlers[0](event)` inline.\n"
        "```python\nresult = funcs[0](x)\n[a](missing.md)\n```\n"
        "~~~\n[b](../outside.md)\n~~~\n"
        "[real](missing.md)\n"                               # line 13
    )
    folder = write(tmp_path, skill_text(body=body))
    assert findings(folder) == [("reference-missing", "warning", SKILL_FILE, 13)]


def test_findings_are_problems_with_a_location(tmp_path: Path) -> None:
    folder = write(tmp_path, skill_text("name: Bad\ndescription: d\n"))
    problems = validate_skill(folder)
    assert all(isinstance(p, Problem) for p in problems)
    assert {p.location() for p in problems} == {"SKILL.md:2"}


def test_several_rules_report_together(tmp_path: Path) -> None:
    folder = write(tmp_path, skill_text(
        "name: Other\ndescription: '<b>'\nextra: 1\nmetadata:\n  v: 2\n", body=""))
    assert findings(folder) == [
        ("unknown-key", "error", SKILL_FILE, 4),
        ("name-invalid", "error", SKILL_FILE, 2),
        ("name-mismatch", "error", SKILL_FILE, 2),
        ("description-angle-brackets", "warning", SKILL_FILE, 3),
        ("metadata-not-string", "error", SKILL_FILE, 6),
        ("body-empty", "warning", SKILL_FILE, 8),
    ]


def test_shipped_example_skills_have_no_errors(skills_dir: Path) -> None:
    skills = sorted(p for p in skills_dir.glob("*") if p.is_dir() and not p.name.startswith("."))
    assert skills, f"no example skills under {skills_dir}"
    errors = {
        skill.name: [f"{p.location()} {p.code}: {p.message}" for p in validate_skill(skill)
                     if p.severity == "error"]
        for skill in skills
    }
    assert errors == {skill.name: [] for skill in skills}
