"""Converters from foreign suite formats (upskill, skill-creator) to the native dict shape."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

from registry.errors import InvalidSuite


def _case_list(data: Any, key: str) -> list[Any]:
    cases = data if isinstance(data, list) else data.get(key)
    if not isinstance(cases, list):
        raise InvalidSuite(f"field {key}: expected a list of cases")
    return cases


def _upskill_case(index: int, case: Any) -> dict[str, Any]:
    where = f"case {index + 1}"
    if not isinstance(case, dict):
        raise InvalidSuite(f"{where}: expected an object with 'input' and 'expected'")
    if case.get("id") is not None:
        where += f" ('{case['id']}')"
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
    if not isinstance(contains, list) or not contains \
            or not all(isinstance(v, str) and v for v in contains):
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


def _read_listed_files(names: Any, base_dir: Path | None, where: str) -> dict[str, str]:
    if names is None:
        return {}
    if not isinstance(names, list):
        raise InvalidSuite(f"{where}: field files: expected a list of relative file paths")
    files: dict[str, str] = {}
    for name in names:
        key, text = _read_listed_file(name, base_dir, where)
        if key in files:
            raise InvalidSuite(f"{where}: field files: two files named {key!r}")
        files[key] = text
    return files


def _read_listed_file(name: Any, base_dir: Path | None, where: str) -> tuple[str, str]:
    """(base name, text) of a file listed by path, looked up in the suite's folder, then
    its parent (the skill folder for `evals/evals.json`); it must resolve inside that root."""
    if not isinstance(name, str) or not name:
        raise InvalidSuite(f"{where}: field files: entries must be relative file paths")
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts or "\\" in name:
        raise InvalidSuite(f"{where}: field files: {name!r} must stay inside the skill folder")
    if base_dir is None:
        raise InvalidSuite(f"{where}: field files: cannot read {name!r} without a skill folder")
    for root in (base_dir.resolve(), base_dir.resolve().parent):
        candidate = (root / rel).resolve()
        if candidate.is_file():
            if not candidate.is_relative_to(root):  # a symlink out of the folder
                raise InvalidSuite(f"{where}: field files: {name!r} links outside the folder")
            return rel.name, candidate.read_text(encoding="utf-8", errors="replace")
    raise InvalidSuite(f"{where}: field files: {name!r} not found next to the suite",
                       hint="put the file in the skill folder, or remove it from 'files'")


def _skill_creator_case(index: int, item: Any, base_dir: Path | None) -> dict[str, Any]:
    where = f"case {index + 1}"
    if not isinstance(item, dict):
        raise InvalidSuite(f"{where}: expected an object with 'prompt'")
    case_id = str(item["id"]) if item.get("id") is not None else str(index + 1)
    where += f" ('{case_id}')"
    key = "assertions" if "assertions" in item else "expectations"
    assertions = item.get(key, [])
    if not isinstance(assertions, list) or not all(isinstance(a, str) for a in assertions):
        raise InvalidSuite(f"{where}: field {key}: expected a list of strings")
    prompt = item.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise InvalidSuite(f"{where}: field prompt: a non-empty string is required")
    native: dict[str, Any] = {"id": case_id, "prompt": prompt, "assertions": assertions}
    if isinstance(item.get("expected_output"), str):
        native["expected_output"] = item["expected_output"]
    files = _read_listed_files(item.get("files"), base_dir, where)
    if files:
        native["files"] = files
    return native


def from_skill_creator(data: dict[str, Any], base_dir: Path | None) -> dict[str, Any]:
    """skill-creator's `evals/evals.json`: plain-language assertions, graded by a judge."""
    cases = [_skill_creator_case(i, item, base_dir) for i, item in enumerate(
        _case_list(data, "evals"))]
    native_suite: dict[str, Any] = {"cases": cases}
    if isinstance(data.get("skill_name"), str):
        native_suite["skill_name"] = data["skill_name"]
    return native_suite
