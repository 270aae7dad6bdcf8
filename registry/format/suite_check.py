"""The suite half of `hubskills validate`: the errors `eval` would raise, as located findings.

`check_suite` loads a skill's `evals/evals.json` exactly as the evaluation does
(`load_suite`), so a trailing comma, an unknown check type or a missing field is reported by
`validate` with the same message `eval` would stop with, located at the line of the case (or of
the JSON error). Agent mode's suite, `evals/agent.json`, is checked the same way when present.
It also warns while the scaffold's placeholders (`hubskills new`) are left in the suite or in
SKILL.md: such a skill validates, but measures nothing.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from registry.errors import InvalidSkill, InvalidSuite
from registry.format.scaffold import PLACEHOLDER_STEP, PLACEHOLDER_VALUE, placeholder_description
from registry.format.skill import Problem, load_skill
from registry.format.suite import SUITE_PATH, Suite, load_suite, suite_path

_CASE_NUMBER = re.compile(r"^cases? (\d+)\b")  # `cases 1 ('a'), 2 ('b') (2): ` too
_JSON_LINE = re.compile(r"^:(\d+): ")
_CASES_ARRAY = re.compile(r'"(?:cases|evals|tests)"\s*:\s*\[')
AGENT_SUITE_PATH = "evals/agent.json"  # agent mode's cases (workspace checks), next to evals.json
MIN_CASES = 10  # fewer cases never rank (see the leaderboard) and rarely reach significance


def check_suite(path: str | os.PathLike[str]) -> list[Problem]:
    """Findings for a skill folder's suite and placeholders; [] when it has no suite file."""
    folder = Path(path)
    if folder.name == "SKILL.md":
        folder = folder.parent
    problems = _placeholder_skill(folder)
    files = [(file, shown) for file, shown in ((suite_path(folder), SUITE_PATH),
                                                (folder / AGENT_SUITE_PATH, AGENT_SUITE_PATH))
             if file.is_file()]
    if not files and (folder / "SKILL.md").is_file():
        problems.append(Problem(
            "no-suite", "warning", f"no test suite ({SUITE_PATH}): `hubskills eval` has nothing "
            f"to measure; write one with  hubskills suite generate {folder}", SUITE_PATH))
    for file, shown in files:
        try:
            suite = load_suite(file, skill_dir=folder)
        except InvalidSuite as exc:
            problems.append(_suite_error(exc, file, shown))
            continue
        problems += _placeholder_checks(suite, file, shown) + (
            _thin_suite(suite, shown) if shown == SUITE_PATH else [])  # agent tasks cost more
    return problems


def _thin_suite(suite: Suite, shown: str) -> list[Problem]:
    """A placeholder suite (`generate`'s, when its teacher wrote none) or one too small for
    any lift to be significant."""
    marked = [case.id for case in suite.cases if case.metadata.get("placeholder")]
    if marked:
        return [Problem("placeholder-suite", "warning", f"the suite is a placeholder (case "
                        f"{', '.join(marked)}): it measures nothing; write real cases", shown)]
    if len(suite.cases) < MIN_CASES:
        return [Problem("small-suite", "warning", f"{len(suite.cases)} case"
                        f"{'' if len(suite.cases) == 1 else 's'}, under {MIN_CASES}: too few "
                        "for any lift to be significant (the leaderboard does not rank it)",
                        shown)]
    return []


def _suite_error(exc: InvalidSuite, file: Path, shown: str = SUITE_PATH) -> Problem:
    """`eval`'s own message, without the file name it starts with (the location says it)."""
    message = exc.message.removeprefix(str(file))
    line = None
    if found := _JSON_LINE.match(message):
        line = int(found.group(1))
        message = message[found.end():]
    else:
        message = message.removeprefix(": ")
        if found := _CASE_NUMBER.match(message):
            line = _case_line(file, int(found.group(1)))
    return Problem("invalid-suite", "error", message, shown, line)


def _case_line(file: Path, number: int) -> int | None:
    """The line where case `number` (1-based) starts in the suite's case array, if found."""
    try:
        text = file.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    array = _CASES_ARRAY.search(text) or re.compile(r"^\s*\[").search(text)
    if array is None:
        return None
    decoder, position = json.JSONDecoder(), array.end()
    for _ in range(number - 1):
        try:
            _, position = decoder.raw_decode(text, _skip(text, position))
        except json.JSONDecodeError:
            return None
    start = _skip(text, position)
    return text.count("\n", 0, start) + 1 if start < len(text) else None


def _skip(text: str, position: int) -> int:
    """The next position in `text` that is not whitespace or an element separator."""
    while position < len(text) and text[position] in " \t\r\n,":
        position += 1
    return position


def _placeholder_checks(suite: Suite, file: Path, shown: str = SUITE_PATH) -> list[Problem]:
    problems = []
    for number, case in enumerate(suite.cases, start=1):
        for index, check in enumerate(case.checks):
            if PLACEHOLDER_VALUE in json.dumps(check.model_dump(mode="json")):
                problems.append(Problem(
                    "placeholder-check", "warning",
                    f"case {number} ('{case.id}'): field checks[{index}]: still the scaffold's "
                    f"placeholder ('{PLACEHOLDER_VALUE}'): write a check that only a right "
                    "answer passes", shown, _case_line(file, number)))
    return problems


def _placeholder_skill(folder: Path) -> list[Problem]:
    try:
        skill = load_skill(folder)
    except InvalidSkill:
        return []  # validate_skill reports it
    problems = []
    if skill.frontmatter.get("description") == placeholder_description(skill.name):
        problems.append(Problem(
            "placeholder-description", "warning",
            "the description is still the scaffold's placeholder: say what the skill does and "
            "when to use it (agents choose skills by it)", line=skill.key_lines.get("description")))
    if PLACEHOLDER_STEP in skill.body:
        offset = skill.body[:skill.body.index(PLACEHOLDER_STEP)].count("\n")
        problems.append(Problem(
            "placeholder-body", "warning",
            "the body still holds the scaffold's placeholder steps: write the instructions",
            line=skill.body_line + offset))
    return problems
