"""Test suites: the native `evals/evals.json`, its hash, and importers of foreign formats.

Native format::

    {"skill_name": "my-skill",
     "cases": [{"id": "h100", "prompt": "...", "files": {"a.py": "..."},
                "checks": [{"type": "contains", "value": ["9.0"]}],
                "assertions": ["plain-language expectation graded by --judge"]}]}

Imported: upskill test files (`{"cases": [{"input", "expected": {"contains"}}]}` or a bare
list) and `skill_meta.json`, and skill-creator's `evals/evals.json` (`evals` with
`assertions` or `expectations`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from registry._io import atomic_write_text
from registry.errors import InvalidSuite
from registry.format.checks_schema import Check

SUITE_PATH = "evals/evals.json"
MAX_SUITE_BYTES = 20 * 1024 * 1024
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
Format = Literal["hubskills", "upskill", "upskill-meta", "skill-creator"]


class Case(BaseModel):
    """One test case: a prompt, optional input files, checks and judged assertions."""

    model_config = ConfigDict(extra="forbid")

    id: str
    prompt: str = Field(min_length=1)
    files: dict[str, str] = Field(default_factory=dict)
    checks: list[Check] = Field(default_factory=list)
    assertions: list[str] = Field(default_factory=list)
    expected_output: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        if not _ID_RE.match(value):
            raise ValueError("ids are 1-128 letters, digits, '.', '_' or '-'")
        return value

    @field_validator("files")
    @classmethod
    def _safe_file_names(cls, files: dict[str, str]) -> dict[str, str]:
        for name in files:
            path = PurePosixPath(name)
            if not name or "\\" in name or path.is_absolute() or ".." in path.parts:
                raise ValueError(f"file name {name!r} must be a relative path inside the case")
        return files

    def graded_items(self) -> int:
        """How many checks and assertions grade this case."""
        return len(self.checks) + len(self.assertions)


class Suite(BaseModel):
    """A skill's test suite; unknown top-level keys are kept on save."""

    model_config = ConfigDict(extra="allow")

    skill_name: str | None = None
    cases: list[Case]

    @field_validator("cases")
    @classmethod
    def _unique_graded_cases(cls, cases: list[Case]) -> list[Case]:
        seen: dict[str, int] = {}
        for number, case in enumerate(cases, start=1):
            where = f"case {number} ('{case.id}')"
            if case.id in seen:
                raise ValueError(f"{where}: field id: duplicate id, already used by case "
                                 f"{seen[case.id]}")
            seen[case.id] = number
            if not case.graded_items():
                raise ValueError(f"{where}: field checks: no checks and no assertions "
                                 "(add one, or the case can never fail)")
        return cases

    def suite_hash(self) -> str:
        """sha256 of the canonical JSON (defaults dropped), stable across key order."""
        canonical = json.dumps(
            self.model_dump(mode="json", exclude_defaults=True, by_alias=True),
            sort_keys=True, separators=(",", ":"), ensure_ascii=False,
        )
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    def to_json(self) -> str:
        """The file text: fields as written (unset defaults omitted), 2-space indent."""
        data = self.model_dump(mode="json", exclude_unset=True, by_alias=True)
        for case in data.get("cases", []):
            if "checks" in case:  # `type` first: the check reads as what it is
                case["checks"] = [{"type": c["type"], **c} for c in case["checks"]]
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def select(self, ids: list[str]) -> Suite:
        """A suite with only the given case ids, in suite order.

        Raises:
            InvalidSuite: an id is not in the suite.
        """
        known = {case.id for case in self.cases}
        missing = [i for i in ids if i not in known]
        if missing:
            raise InvalidSuite(
                f"no case with id {', '.join(missing)} in the suite",
                hint="hubskills suite show SKILL  # lists the case ids",
            )
        wanted = set(ids)
        return self.model_copy(update={"cases": [c for c in self.cases if c.id in wanted]})


def detect_format(data: Any) -> Format:
    """Which suite format a parsed JSON document is in.

    Raises:
        InvalidSuite: none of the known formats.
    """
    if isinstance(data, list) and (not data or isinstance(data[0], dict) and "input" in data[0]):
        return "upskill"
    if isinstance(data, dict):
        if isinstance(data.get("evals"), list):
            return "skill-creator"
        if isinstance(data.get("tests"), list) and "metadata" in data:
            return "upskill-meta"
        cases = data.get("cases")
        if isinstance(cases, list):
            if cases and isinstance(cases[0], dict) and "input" in cases[0]:
                return "upskill"
            return "hubskills"
    raise InvalidSuite(
        "unrecognised suite format: expected {\"cases\": [...]} (hubskills or upskill), "
        "{\"evals\": [...]} (skill-creator) or skill_meta.json",
        hint="hubskills new NAME  # shows the native evals/evals.json format",
    )


def load_suite(path: str | os.PathLike[str], *, skill_dir: Path | None = None) -> Suite:
    """Load a suite file in any supported format, converted to the native schema.

    Raises:
        InvalidSuite: unreadable, too large, not JSON, or a case or field is malformed; the
            message names the file, the case and the field.
    """
    file = Path(path)
    if not file.is_file():
        raise InvalidSuite(f"{file}: no such suite file",
                           hint=f"hubskills suite import FILE --into {file.parent.parent}")
    if file.stat().st_size > MAX_SUITE_BYTES:
        raise InvalidSuite(f"{file}: larger than {MAX_SUITE_BYTES // 2**20} MiB")
    try:
        data = json.loads(file.read_bytes().decode("utf-8-sig"))
    except OSError as exc:
        raise InvalidSuite(f"{file}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InvalidSuite(f"{file}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InvalidSuite(f"{file}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise InvalidSuite(f"{file}: invalid JSON: nested too deeply") from None
    return parse_suite(data, source=str(file), base_dir=skill_dir or file.parent)


def parse_suite(data: Any, *, source: str = "<suite>", base_dir: Path | None = None) -> Suite:
    """Convert parsed JSON in any supported format to a validated native `Suite`.

    Raises:
        InvalidSuite: an unknown format, or a malformed case or field; the message starts
            with `source` and names the case and the field.
    """
    from registry.format import suite_import

    try:
        fmt = detect_format(data)
        native = {
            "hubskills": lambda d: d,
            "upskill": suite_import.from_upskill,
            "upskill-meta": suite_import.from_upskill_meta,
            "skill-creator": lambda d: suite_import.from_skill_creator(d, base_dir),
        }[fmt](data)
    except InvalidSuite as exc:
        raise InvalidSuite(f"{source}: {exc.message}", hint=exc.hint or _hint("upskill")) from None
    try:
        return Suite.model_validate(native)
    except ValidationError as exc:
        raise InvalidSuite(_describe(exc, native, source), hint=_hint(fmt)) from None
    except RecursionError:
        raise InvalidSuite(f"{source}: nested too deeply", hint=_hint(fmt)) from None


def save_suite(suite: Suite, path: str | os.PathLike[str]) -> Path:
    """Write a suite atomically (a crash never leaves half a file)."""
    file = Path(path)
    atomic_write_text(file, suite.to_json())
    return file


def suite_path(skill_dir: str | os.PathLike[str]) -> Path:
    """Where a skill keeps its suite."""
    return Path(skill_dir) / SUITE_PATH


def _describe(exc: ValidationError, data: Any, source: str) -> str:
    """`source: case N ('id'): field a.b: message` for the first few errors."""
    errors = exc.errors()
    parts = [_describe_one(error, data) for error in errors[:3]]
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return f"{source}: " + "; ".join(parts) + more


def _describe_one(error: Any, data: Any) -> str:
    loc = list(error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    if loc == ["cases"] and message.startswith("case "):
        return message  # the suite-level validator already names the case and the field
    where = ""
    if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
        index, loc = loc[1], loc[2:]
        cases = data.get("cases") if isinstance(data, dict) else None
        case = cases[index] if isinstance(cases, list) and index < len(cases) else None
        case_id = case.get("id") if isinstance(case, dict) else None
        where = f"case {index + 1}" + (f" ('{case_id}')" if case_id is not None else "") + ": "
    if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
        loc.append("type")
    field = ""
    for part in loc:
        if isinstance(part, int):
            field += f"[{part}]"
        elif part not in _UNION_TAGS or not field.endswith("]"):
            field += f".{part}" if field else str(part)
    return f"{where}field {field or '(case)'}: {message}"


_UNION_TAGS = {
    "contains", "icontains", "contains_any", "not_contains", "regex", "not_regex", "equals",
    "json", "python", "judge", "exec",
}


def _hint(fmt: Format) -> str:
    if fmt == "hubskills":
        return "fix the field, then run: hubskills suite show SKILL"
    return "fix the source file, then run: hubskills suite import FILE --into SKILL"
