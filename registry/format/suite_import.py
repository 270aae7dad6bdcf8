"""Readers of foreign suite formats (upskill, skill-creator) into the native dict shape.

Files listed by path keep that path as their name (two `data.csv` in different folders stay two
files) and are read as bytes (`InputFile`), so binary files survive. What does not map is said
per case in `warnings`, e.g. an upskill case graded by a named `validator`.

upskill's workspace verifiers (a case's `verifiers`: `file_exists`, `file_contains`, `command`)
become workspace checks. upskill's published code holds no verifier schema yet, so the reader
takes the plain shape `{"type": "file_exists", "path": ...}`, `{"type": "file_contains", "path":
..., "contains": ...}` (also `value`, `text`; `pattern` for a regex) and `{"type": "command",
"command": ...}` (also `run`; `expect_exit`, `output_contains`, `timeout`) and warns about the rest.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

from registry.errors import InvalidSuite
from registry.format.inputs import InputFile

MAX_INPUT_FILE_BYTES = 20 * 1024 * 1024
_UPSKILL_KEYS = {"id", "input", "expected", "context", "output_file", "validator",
                 "validator_config", "verifiers"}


def _case_list(data: Any, key: str) -> list[Any]:
    cases = data if isinstance(data, list) else data.get(key)
    if not isinstance(cases, list):
        raise InvalidSuite(f"field {key}: expected a list of cases")
    return cases


def _output_file_check(name: str) -> dict[str, Any]:
    """A python check: the answer writes `name` (a fenced block under that file name)."""
    code = ("def check(output, files):\n"
            f"    name = {json.dumps(name)}\n"
            "    written = [f for f in files if f == name or f.endswith('/' + name)]\n"
            "    return bool(written), ', '.join(written) or f'no {name} in the answer'\n")
    return {"type": "python", "code": code, "name": f"writes {name}"}


def _upskill_validator(case: dict[str, Any], native: dict[str, Any], where: str,
                       warnings: list[str]) -> None:
    """Map what an upskill validator case can keep (its `output_file`) and warn about the rest.

    upskill grades such a case with the named validator over `output_file` in its workspace,
    falling back to `contains` when the validator is missing: hubskills has no such validators.
    """
    output_file, validator = case.get("output_file"), case.get("validator")
    if validator is None:
        return
    native["metadata"] = {"upskill": {k: case[k] for k in ("validator", "validator_config",
                                                          "output_file") if k in case}}
    wrote = ""
    if isinstance(output_file, str) and output_file:
        native["checks"].append(_output_file_check(output_file))
        wrote = f" and a check that the answer writes {output_file!r}"
    target = f"{output_file!r}" if wrote else "the answer"
    warnings.append(f"{where}: upskill validator {validator!r} has no hubskills equivalent: "
                    f"imported its `contains` fallback{wrote}; add a python or exec check "
                    f"that validates {target}")


def _first(verifier: dict[str, Any], *keys: str) -> Any:
    return next((verifier[k] for k in keys if verifier.get(k) not in (None, "", [])), None)


def _verifier_check(verifier: dict[str, Any]) -> dict[str, Any] | None:
    """The workspace check for one upskill verifier, or None when it has no equivalent."""
    kind, path = verifier.get("type"), _first(verifier, "path", "paths", "file")
    if kind == "file_exists" and path is not None:
        return {"type": "file_exists", "path": path}
    if kind == "file_contains" and path is not None:
        if (text := _first(verifier, "contains", "value", "text", "substring")) is not None:
            return {"type": "file_contains", "path": path, "value": text, "case_sensitive": True}
        if (pattern := _first(verifier, "pattern", "regex")) is not None:
            return {"type": "file_regex", "path": path, "pattern": pattern}
        return None
    command = _first(verifier, "command", "run", "cmd")
    if kind != "command" or not isinstance(command, str):
        return None
    exit_code = _first(verifier, "expect_exit", "exit_code", "expected_exit_code") or 0
    if not isinstance(exit_code, int) or isinstance(exit_code, bool):
        return None
    if exit_code != 0:  # the check passes on exit 0: test the expected code in the shell
        command = f"( {command} ); test $? -eq {exit_code}"
    check: dict[str, Any] = {"type": "command", "command": command}
    if (output := _first(verifier, "output_contains", "expected_output", "stdout_contains")):
        check["output_contains"] = output
    if (timeout := _first(verifier, "timeout_s", "timeout", "timeout_seconds")) is not None:
        check["timeout_s"] = timeout
    return check


def _upskill_verifiers(case: dict[str, Any], where: str, warnings: list[str]) -> list[Any]:
    """Workspace checks for the case's `verifiers`; each one that does not map is warned about."""
    verifiers = case.get("verifiers") or []
    if not isinstance(verifiers, list):
        raise InvalidSuite(f"{where}: field verifiers: expected a list of verifiers")
    checks = []
    for number, verifier in enumerate(verifiers, start=1):
        check = _verifier_check(verifier) if isinstance(verifier, dict) else None
        if check is None:
            kind = verifier.get("type") if isinstance(verifier, dict) else verifier
            warnings.append(f"{where}: verifier {number} ({kind!r}) has no hubskills "
                            "equivalent: left out; add a workspace check by hand")
        else:
            checks.append(check)
    return checks


def _upskill_case(index: int, case: Any, warnings: list[str]) -> dict[str, Any]:
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
    verified = _upskill_verifiers(case, where, warnings)
    if (contains is not None or not verified) and (
            not isinstance(contains, list) or not contains
            or not all(isinstance(v, str) and v for v in contains)):
        raise InvalidSuite(f"{where}: field expected.contains: one or more strings required "
                           "(upskill cases are graded by substring or by verifiers)")
    native: dict[str, Any] = {
        "id": str(case.get("id") or f"case-{index + 1}"),
        "prompt": prompt,
        "checks": ([{"type": "contains", "value": list(contains)}] if contains else []) + verified,
    }
    context = case.get("context") or {}
    files = context.get("files") if isinstance(context, dict) else None
    if files:
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            raise InvalidSuite(f"{where}: field context.files: expected name -> text content")
        native["files"] = files
    _upskill_validator(case, native, where, warnings)
    if unknown := sorted(set(case) - _UPSKILL_KEYS):
        warnings.append(f"{where}: ignored unknown field(s) {', '.join(unknown)}")
    return native


def from_upskill(data: Any, warnings: list[str]) -> dict[str, Any]:
    """upskill's test file: `{"cases": [...]}` or a bare list of `{input, expected}` cases."""
    cases = _case_list(data, "cases")
    native: dict[str, Any] = {"cases": [_upskill_case(i, c, warnings)
                                        for i, c in enumerate(cases)]}
    if isinstance(data, dict) and isinstance(data.get("skill_name"), str):
        native["skill_name"] = data["skill_name"]
    return native


def from_upskill_meta(data: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """upskill's `skill_meta.json`: metadata plus its `tests` (upskill cases)."""
    native = from_upskill({"cases": data["tests"]}, warnings)
    metadata = data.get("metadata")
    if isinstance(metadata, dict):
        native["imported_metadata"] = metadata
    return native


def read_listed_file(name: Any, roots: tuple[Path, ...], where: str) -> InputFile:
    """The file listed as `name`, read as bytes from the first of `roots` that holds it; it
    must resolve inside that root.

    Raises:
        InvalidSuite: not a relative path, outside the root, missing, too large or unreadable.
    """
    if not isinstance(name, str) or not name:
        raise InvalidSuite(f"{where}: field files: entries must be relative file paths")
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts or "\\" in name:
        raise InvalidSuite(f"{where}: field files: {name!r} must stay inside the skill folder")
    if not roots:
        raise InvalidSuite(f"{where}: field files: cannot read {name!r} without a skill folder")
    for root in (r.resolve() for r in roots):
        candidate = (root / rel).resolve()
        if not candidate.is_file():
            continue
        if not candidate.is_relative_to(root):  # a symlink out of the folder
            raise InvalidSuite(f"{where}: field files: {name!r} links outside the folder")
        if candidate.stat().st_size > MAX_INPUT_FILE_BYTES:
            raise InvalidSuite(f"{where}: field files: {name!r} is larger than "
                               f"{MAX_INPUT_FILE_BYTES // 2**20} MiB")
        try:
            return InputFile.of(rel.as_posix(), candidate.read_bytes())
        except OSError as exc:
            raise InvalidSuite(f"{where}: field files: cannot read {name!r}: "
                               f"{exc.strerror or exc}") from None
    raise InvalidSuite(f"{where}: field files: {name!r} not found next to the suite",
                       hint="put the file in the skill folder, or remove it from 'files'")


def read_listed_files(names: Any, roots: tuple[Path, ...], where: str) -> dict[str, InputFile]:
    """The files a case's `files` key lists (None: none), by path, each read by
    `read_listed_file`.

    Raises:
        InvalidSuite: not a list, a path listed twice, or a file `read_listed_file` refuses.
    """
    if names is not None and not isinstance(names, list):
        raise InvalidSuite(f"{where}: field files: expected a list of relative file paths")
    files: dict[str, InputFile] = {}
    for name in names or []:
        file = read_listed_file(name, roots, where)
        if file.path in files:
            raise InvalidSuite(f"{where}: field files: {name!r} is listed twice")
        files[file.path] = file
    return files


def case_where(index: int, item: Any) -> str:
    """How messages name the case at `index`: `case 3 ('x-003')`."""
    case_id = item.get("id") if isinstance(item, dict) else None
    return f"case {index + 1}" + (f" ('{case_id}')" if case_id is not None else "")


def from_native(data: dict[str, Any], roots: tuple[Path, ...]) -> dict[str, Any]:
    """The native shape, with each `{"path": ...}` file read from the skill folder."""
    cases = data.get("cases") or []
    if not any(isinstance(c, dict) and isinstance(c.get("files"), dict)
               and any(_is_ref(v) for v in c["files"].values()) for c in cases):
        return data
    resolved = []
    for index, case in enumerate(cases):
        if isinstance(case, dict) and isinstance(case.get("files"), dict):
            where = case_where(index, case)
            files = {name: read_listed_file(v["path"], roots, where) if _is_ref(v) else v
                     for name, v in case["files"].items()}
            case = {**case, "files": files}
        resolved.append(case)
    return {**data, "cases": resolved}


def _is_ref(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"path"}


def _skill_creator_case(index: int, item: Any, roots: tuple[Path, ...]) -> dict[str, Any]:
    where = f"case {index + 1}"
    if not isinstance(item, dict):
        raise InvalidSuite(f"{where}: expected an object with 'prompt'")
    case_id = str(item["id"]) if item.get("id") is not None else str(index + 1)
    where += f" ('{case_id}')"
    key = "assertions" if "assertions" in item else "expectations"
    assertions = assertion_texts(item.get(key, []))
    if assertions is None:
        raise InvalidSuite(f"{where}: field {key}: expected a list of strings (or of objects "
                           'with a "text")')
    prompt = item.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise InvalidSuite(f"{where}: field prompt: a non-empty string is required")
    native: dict[str, Any] = {"id": case_id, "prompt": prompt, "assertions": assertions}
    if isinstance(item.get("expected_output"), str):
        native["expected_output"] = item["expected_output"]
    for extension in ("checks", "metadata"):  # hubskills' own keys; skill-creator ignores them
        if extension in item:
            native[extension] = item[extension]
    if files := read_listed_files(item.get("files"), roots, where):
        native["files"] = files
    return native


def assertion_texts(assertions: Any) -> list[str] | None:
    """The assertions as text: strings, or objects with a `text` (as some skill-creator files,
    NVIDIA's among them, write them: `{"name", "text", "type", ...}`; the judge grades the
    text, the object is kept on write-back); None when neither."""
    if not isinstance(assertions, list):
        return None
    texts = [a if isinstance(a, str) else a.get("text") if isinstance(a, dict) else None
             for a in assertions]
    strings = [t for t in texts if isinstance(t, str) and t]
    return strings if len(strings) == len(texts) else None


def from_skill_creator(data: dict[str, Any], roots: tuple[Path, ...]) -> dict[str, Any]:
    """skill-creator's `evals/evals.json`: plain-language assertions, graded by a judge."""
    cases = [_skill_creator_case(i, item, roots) for i, item in enumerate(
        _case_list(data, "evals"))]
    native_suite: dict[str, Any] = {"cases": cases}
    if isinstance(data.get("skill_name"), str):
        native_suite["skill_name"] = data["skill_name"]
    return native_suite
