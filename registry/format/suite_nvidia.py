"""NVIDIA's eval format (the `evals/evals.json` of github.com/NVIDIA/skills), read and written.

A file is a list of cases (or `{"cases": [...], ...}`, or one case alone), each::

    {"id": "x-001", "question": "the prompt", "expected_skill": "x" | null,
     "expected_script": null, "files": ["evals/files/x-001/code/a.py"],
     "ground_truth": "a rubric in words", "expected_behavior": ["...", ...]}

Mapping, case by case:

- `question` is the prompt; `files` are read from the skill folder and keep their paths as
  names, so a case with files is an agent-mode case (`metadata.mode = "agent"`): `eval --mode
  agent` seeds them as the starter workspace (the question names the task folder).
- `ground_truth` and `expected_behavior` (and `must_not`) become judge checks with that rubric,
  named after the key they came from.
- `expected_skill` set to the skill's own name (or `should_trigger: true`) is a should-trigger
  query of the trigger suite; null, or another skill's name, a should-not one, and the case's
  `expect_skill` is false (agent mode counts reading the skill as a false activation). A case
  with no rubric at all is only a trigger query: it is left out of the cases, kept in the file.
- Every other key (`expected_script`, `expected_test`, ...) is kept in `metadata.nvidia` and,
  on write-back, in the entry itself: the file keeps every key, and an unchanged entry its value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from registry.errors import InvalidSuite
from registry.format.inputs import listed_paths
from registry.format.suite_import import case_where, read_listed_files

RUBRIC_KEYS = ("ground_truth", "expected_behavior", "must_not")
_MAPPED = {"id", "question", "files", "expected_skill", *RUBRIC_KEYS}
_RUBRIC_LEAD = {"ground_truth": "", "expected_behavior": "The answer shows this behaviour:\n",
                "must_not": "The answer must not:\n"}


def is_nvidia(data: Any) -> bool:
    """Whether a parsed suite document is in NVIDIA's shape (cases carry a `question`)."""
    entries = entries_of(data)
    return entries is not None and bool(entries) and isinstance(entries[0], dict) \
        and "question" in entries[0]


def entries_of(data: Any) -> list[Any] | None:
    """The case entries of a document: a list, `{"cases": [...]}` or one case alone."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if isinstance(data.get("cases"), list):
            return data["cases"]
        if "question" in data:
            return [data]
    return None


def _rubric(key: str, value: Any, where: str) -> str | None:
    if value in (None, "", []):
        return None
    if key == "ground_truth":
        if not isinstance(value, str):
            raise InvalidSuite(f"{where}: field ground_truth: expected text")
        return value
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidSuite(f"{where}: field {key}: expected a list of strings")
    return _RUBRIC_LEAD[key] + "\n".join(f"- {v}" for v in value)


def judge_checks(entry: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The judge checks an entry's rubric keys become, each named after its key."""
    checks = []
    for key in RUBRIC_KEYS:
        if (rubric := _rubric(key, entry.get(key), where)) is not None:
            checks.append({"type": "judge", "name": key, "rubric": rubric})
    return checks


def expects_skill(entry: dict[str, Any], skill_name: str | None) -> bool:
    """Whether the entry says this skill should be used (should-trigger)."""
    if isinstance(entry.get("should_trigger"), bool):
        return entry["should_trigger"]
    wanted = entry.get("expected_skill")
    return wanted is not None and (skill_name is None or wanted == skill_name)


def _case(index: int, entry: Any, roots: tuple[Path, ...], skill_name: str | None,
          warnings: list[str]) -> dict[str, Any] | None:
    where = case_where(index, entry)
    if not isinstance(entry, dict):
        raise InvalidSuite(f"{where}: expected an object with 'question'")
    question = entry.get("question")
    if not isinstance(question, str) or not question.strip():
        raise InvalidSuite(f"{where}: field question: a non-empty string is required")
    checks = judge_checks(entry, where)
    if not checks:
        warnings.append(f"{where}: no ground_truth or expected_behavior to grade: kept as a "
                        "trigger query only")
        return None
    native: dict[str, Any] = {"id": str(entry["id"]) if entry.get("id") is not None
                              else f"case-{index + 1}", "prompt": question, "checks": checks,
                              "expect_skill": expects_skill(entry, skill_name)}
    files = read_listed_files(entry.get("files"), roots, where)
    metadata: dict[str, Any] = {}
    if files:
        native["files"], metadata["mode"] = files, "agent"
    if extra := {k: v for k, v in entry.items() if k not in _MAPPED}:
        metadata["nvidia"] = extra
    if metadata:
        native["metadata"] = metadata
    return native


def skill_name_of(data: Any, roots: tuple[Path, ...]) -> str | None:
    """The skill the document is for: its `skill` / `skill_name` key, else the skill folder's
    name (the last of `roots`, the folder above `evals/`)."""
    if isinstance(data, dict):
        for key in ("skill_name", "skill"):
            if isinstance(data.get(key), str):
                return data[key]
    return roots[-1].resolve().name if roots else None


def from_nvidia(data: Any, roots: tuple[Path, ...], warnings: list[str]) -> dict[str, Any]:
    """NVIDIA's `evals/evals.json` in the native dict shape (see the module docstring)."""
    entries = entries_of(data) or []
    name = skill_name_of(data, roots)
    cases = [c for i, e in enumerate(entries) if (c := _case(i, e, roots, name, warnings))]
    native: dict[str, Any] = {"cases": cases}
    if isinstance(data, dict) and isinstance(data.get("skill_name"), str):
        native["skill_name"] = data["skill_name"]
    return native


def trigger_items(data: Any, skill_name: str | None) -> list[dict[str, Any]]:
    """Trigger queries (`{"id", "query", "should_trigger"}`) from every entry that names an
    `expected_skill` (or `should_trigger`) and has a prompt: NVIDIA's `question`, or the
    `prompt` of the skill-creator-shaped files some of its skills ship."""
    entries = entries_of(data)
    if entries is None and isinstance(data, dict) and isinstance(data.get("evals"), list):
        entries = data["evals"]
    items = []
    for number, entry in enumerate(entries or [], start=1):
        if not isinstance(entry, dict) or not ({"expected_skill", "should_trigger"} & set(entry)):
            continue
        query = entry.get("question", entry.get("prompt"))
        if isinstance(query, str) and query.strip():
            items.append({"id": str(entry.get("id", f"q{number}")), "query": query,
                          "should_trigger": expects_skill(entry, skill_name)})
    return items


# --- writing back ------------------------------------------------------------------------------


def _entry(case: Any, old: dict[str, Any], files: dict[str, bytes],
           skill_name: str | None) -> dict[str, Any]:
    entry = dict(old) if old else {"id": case.id, "question": case.prompt,
                                   "expected_skill": skill_name if case.expect_skill else None}
    entry["id"] = old.get("id", case.id) if str(old.get("id")) == case.id else case.id
    entry["question"] = case.prompt
    paths = listed_paths(case.id, case.files, files)
    if paths or "files" in entry:
        entry["files"] = paths
    derived = {c.name: c for c in case.checks if c.type == "judge" and c.name in RUBRIC_KEYS}
    for key in RUBRIC_KEYS:
        if key in derived and _rubric(key, old.get(key), "") != derived[key].rubric:
            entry[key] = derived[key].rubric if key == "ground_truth" else \
                _items(derived[key].rubric, key)
        elif key not in derived and _rubric(key, old.get(key), "") is not None:
            entry[key] = [] if key != "ground_truth" else None
    own = [c for c in case.checks if c not in derived.values()]
    if own:  # hubskills' own checks ride along (NVIDIA's tools ignore the key)
        entry["checks"] = [{"type": c.type, **c.model_dump(mode="json", exclude_unset=True)}
                           for c in own]
    else:
        entry.pop("checks", None)
    if case.assertions:
        entry["assertions"] = list(case.assertions)
    return entry


def _items(rubric: str, key: str) -> list[str]:
    body = rubric.removeprefix(_RUBRIC_LEAD[key])
    return [line.removeprefix("- ") for line in body.splitlines() if line.strip()]


def nvidia_text(suite: Any, files: dict[str, bytes]) -> str:
    """The file text of `suite` in NVIDIA's shape: entries of the original file keep every key
    (and, unchanged, their value); entries that were trigger queries only stay where they were;
    new cases are added at the end. Listed files go into `files` (path -> bytes)."""
    original, text = suite.origin()
    old_entries = entries_of(original) or []
    name = suite.skill_name or (skill_name_of(original, ()) if original is not None else None)
    cases = {case.id: case for case in suite.cases}
    entries, placed = [], set()
    for old in old_entries:
        if not isinstance(old, dict) or str(old.get("id")) not in cases:
            if isinstance(old, dict) and not judge_checks(old, ""):
                entries.append(old)  # a trigger query only: never a case
            continue
        case = cases[str(old["id"])]
        entries.append(_entry(case, old, files, name))
        placed.add(case.id)
    entries += [_entry(c, {}, files, name) for c in suite.cases if c.id not in placed]
    if isinstance(original, dict) and isinstance(original.get("cases"), list):
        doc: Any = {**original, "cases": entries}
    elif isinstance(original, dict) and len(entries) == 1:
        doc = entries[0]
    else:
        doc = entries
    if doc == original and text is not None:
        return text
    ascii_only = text is not None and "\\u" in text
    return json.dumps(doc, indent=2, ensure_ascii=ascii_only) + "\n"
