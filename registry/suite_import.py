"""Converters from foreign suite formats (upskill, skill-creator) to the native dict shape."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from .errors import InvalidSuite


def _case_list(data: Any, key: str) -> list[Any]:
    cases = data if isinstance(data, list) else data.get(key)
    if not isinstance(cases, list):
        raise InvalidSuite(f"field {key}: expected a list of cases")
    return cases


def _upskill_case(index: int, case: Any) -> dict[str, Any]:
    where = f"case {index + 1}"
    if not isinstance(case, dict):
        raise InvalidSuite(f"{where}: expected an object with 'input' and 'expected'")
    prompt = case.get("input")
    if not isinstance(prompt, str) or not prompt.strip():
        raise InvalidSuite(f"{where}: field input: a non-empty string is required")
    expected = case.get("expected") or {}
    if not isinstance(expected, dict):
        raise InvalidSuite(f"{where}: field expected: expected an object like "
                           '{"contains": ["..."]}')
    contains = expected.get("contains")
    if isinstance(contains, str):
        contains = [contains]
    if not contains or not all(isinstance(v, str) and v for v in contains):
        raise InvalidSuite(f"{where}: field expected.contains: one or more strings required "
                           "(upskill cases are graded by substring)")
    native: dict[str, Any] = {
        "id": str(case.get("id") or f"case-{index + 1}"),
        "prompt": prompt,
        "checks": [{"type": "contains", "value": list(contains)}],
    }
    context = case.get("context") or {}
    files = context.get("files") if isinstance(context, dict) else None
    if files:
        if not isinstance(files, dict):
            raise InvalidSuite(f"{where}: field context.files: expected name -> content")
        native["files"] = files
    return native


def from_upskill(data: Any) -> dict[str, Any]:
    """upskill's test file: `{"cases": [...]}` or a bare list of `{input, expected}` cases."""
    cases = _case_list(data, "cases")
    native: dict[str, Any] = {"cases": [_upskill_case(i, c) for i, c in enumerate(cases)]}
    if isinstance(data, dict) and isinstance(data.get("skill_name"), str):
        native["skill_name"] = data["skill_name"]
    return native


def from_upskill_meta(data: dict[str, Any]) -> dict[str, Any]:
    """upskill's `skill_meta.json`: metadata plus its `tests` (upskill cases)."""
    native = from_upskill({"cases": data["tests"]})
    metadata = data.get("metadata")
    if isinstance(metadata, dict):
        native["imported_metadata"] = metadata
    return native


def _read_listed_file(name: Any, base_dir: Path | None, where: str) -> tuple[str, str]:
    if not isinstance(name, str) or not name:
        raise InvalidSuite(f"{where}: field files: entries must be relative file paths")
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts or "\\" in name:
        raise InvalidSuite(f"{where}: field files: {name!r} must stay inside the skill folder")
    if base_dir is None:
        raise InvalidSuite(f"{where}: field files: cannot read {name!r} without a skill folder")
    for root in (base_dir, base_dir.parent):
        candidate = root / rel
        if candidate.is_file():
            return rel.name, candidate.read_text(encoding="utf-8", errors="replace")
    raise InvalidSuite(f"{where}: field files: {name!r} not found next to the suite",
                       hint="put the file in the skill folder, or remove it from 'files'")


def from_skill_creator(data: dict[str, Any], base_dir: Path | None) -> dict[str, Any]:
    """skill-creator's `evals/evals.json`: plain-language assertions, graded by a judge."""
    cases = []
    for index, item in enumerate(_case_list(data, "evals")):
        where = f"case {index + 1}"
        if not isinstance(item, dict):
            raise InvalidSuite(f"{where}: expected an object with 'prompt'")
        assertions = item.get("assertions", item.get("expectations", []))
        if not isinstance(assertions, list) or not all(isinstance(a, str) for a in assertions):
            raise InvalidSuite(f"{where}: field assertions: expected a list of strings")
        native: dict[str, Any] = {
            "id": str(item.get("id", index + 1)),
            "prompt": item.get("prompt"),
            "assertions": assertions,
        }
        if isinstance(item.get("expected_output"), str):
            native["expected_output"] = item["expected_output"]
        files = dict(_read_listed_file(f, base_dir, where) for f in item.get("files") or [])
        if files:
            native["files"] = files
        cases.append(native)
    native_suite: dict[str, Any] = {"cases": cases}
    if isinstance(data.get("skill_name"), str):
        native_suite["skill_name"] = data["skill_name"]
    return native_suite
