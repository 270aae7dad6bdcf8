"""Test suites: the native `evals/evals.json`, its hash, and foreign shapes read natively.

Native format::

    {"skill_name": "my-skill",
     "cases": [{"id": "h100", "prompt": "...",
                "files": {"a.py": "...", "logo.png": {"path": "evals/files/logo.png"}},
                "checks": [{"type": "contains", "value": ["9.0"]}],
                "assertions": ["plain-language expectation graded by --judge"]}]}

A file's value is its text, or `{"path": ...}`: a file kept in the skill folder (binary files
must be). Also read: upskill test files (`{"cases": [{"input", "expected": {"contains"}}]}` or a
bare list) and `skill_meta.json`, skill-creator's `evals/evals.json` (`evals` with
`assertions` or `expectations`, `files` as paths) and NVIDIA's (`question`, `ground_truth`,
`expected_behavior`, `expected_skill`: `registry.format.suite_nvidia`). A suite remembers the
shape and text it was read from, so `suite_writer.save_suite` writes skill-creator's and NVIDIA's
files back in their own shape (`registry.format.suite_writer`) instead of converting them.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from registry.errors import InvalidSuite
from registry.format import suite_errors, suite_import, suite_nvidia
from registry.format.checks_schema import Check
from registry.format.inputs import InputFile, is_relative

SUITE_PATH = "evals/evals.json"
MAX_SUITE_BYTES = 20 * 1024 * 1024
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
Format = Literal["hubskills", "upskill", "upskill-meta", "skill-creator", "nvidia"]


class Case(BaseModel):
    """One test case: a prompt, optional input files, checks and judged assertions."""

    model_config = ConfigDict(extra="forbid")

    id: str
    prompt: str = Field(min_length=1)
    files: dict[str, str | InputFile] = Field(default_factory=dict)
    checks: list[Check] = Field(default_factory=list)
    assertions: list[str] = Field(default_factory=list)
    expected_output: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    expect_skill: bool = True
    """Agent mode: whether the skill applies to this task (False: reading it is a false
    activation)."""

    @field_validator("id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        if not _ID_RE.match(value):
            raise ValueError("ids are 1-128 letters, digits, '.', '_' or '-'")
        return value

    @field_validator("files")
    @classmethod
    def _safe_file_names(cls, files: dict[str, str | InputFile]) -> dict[str, str | InputFile]:
        for name, file in files.items():
            if not is_relative(name):
                raise ValueError(f"file name {name!r} must be a relative path inside the case")
            if isinstance(file, InputFile) and not file._loaded:  # only the loaders read files
                raise ValueError(f"{name!r} lists {file.path!r}, which is read only when the "
                                 "suite is loaded from its skill folder")
        return files

    def graded_items(self) -> int:
        """How many checks and assertions grade this case."""
        return len(self.checks) + len(self.assertions)

    def needs_judge(self) -> bool:
        """Whether only a judge model can grade this case (assertions, judge and pairwise checks
        only)."""
        return all(check.type in ("judge", "pairwise") for check in self.checks)

    def input_bytes(self) -> dict[str, bytes]:
        """Every input file as bytes, by the name the model sees (for checks' workspace)."""
        return {name: f.data if isinstance(f, InputFile) else f.encode("utf-8")
                for name, f in self.files.items()}


class Suite(BaseModel):
    """A skill's test suite; unknown top-level keys are kept on save.

    It also remembers where it came from (private, left out of equality and the hash): the
    shape it was read in, the parsed document and its text, and the warnings of the import.
    """

    model_config = ConfigDict(extra="allow")

    skill_name: str | None = None
    cases: list[Case]
    _shape: Format = PrivateAttr(default="hubskills")
    _original: Any = PrivateAttr(default=None)
    _text: str | None = PrivateAttr(default=None)
    _warnings: list[str] = PrivateAttr(default_factory=list)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Suite) and self.__dict__ == other.__dict__
                and self.__pydantic_extra__ == other.__pydantic_extra__)

    @property
    def shape(self) -> Format:
        """The format of the file this suite was read from ("hubskills" when built in code)."""
        return self._shape

    @property
    def warnings(self) -> list[str]:
        """What the import could not map, one line per case (empty for native files)."""
        return list(self._warnings)

    def origin(self) -> tuple[Any, str | None]:
        """The parsed document and the text this suite was read from (None when built)."""
        return self._original, self._text

    def reshaped(self, shape: Format, original: Any = None, text: str | None = None) -> Suite:
        """The same cases, to be written in `shape` over the document `original` (its text)."""
        copy = self.model_copy()
        copy._shape, copy._original, copy._text = shape, original, text
        return copy

    def judge_only_cases(self) -> list[str]:
        """Ids of the cases that only a judge model can grade."""
        return [case.id for case in self.cases if case.needs_judge()]

    @field_validator("cases")
    @classmethod
    def _unique_graded_cases(cls, cases: list[Case]) -> list[Case]:
        seen: dict[str, int] = {}
        for number, case in enumerate(cases, start=1):
            if case.id in seen:
                raise ValueError(f"case {number} ('{case.id}'): field id: duplicate id, "
                                 f"already used by case {seen[case.id]}")
            seen[case.id] = number
            if not (case.checks or case.assertions):  # `graded_items`, as a suite has many
                raise ValueError(f"case {number} ('{case.id}'): field checks: no checks and no "
                                 "assertions (add one, or the case can never fail)")
        return cases

    def suite_hash(self) -> str:
        """sha256 of the canonical JSON (defaults dropped), stable across key order."""
        data = self.model_dump(mode="json", exclude_defaults=True, by_alias=True)
        for case, dumped in zip(self.cases, data["cases"], strict=True):
            for name, file in case.files.items():  # a listed file's content counts too
                if isinstance(file, InputFile):
                    dumped["files"][name]["sha256"] = hashlib.sha256(file.data).hexdigest()
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    def to_json(self) -> str:
        """The file text: fields as written (unset defaults omitted), 2-space indent."""
        data = self.model_dump(mode="json", exclude_unset=True, by_alias=True)
        for case in data.get("cases", []):
            if "checks" in case:  # `type` first: the check reads as what it is
                case["checks"] = [{"type": c["type"], **c} for c in case["checks"]]
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def select(self, ids: list[str], *, source: str | Path | None = None) -> Suite:
        """A suite with only the given case ids, in suite order; `source` (the suite's file or
        skill folder) goes into the hint.

        Raises:
            InvalidSuite: an id is not in the suite.
        """
        known = [case.id for case in self.cases]
        missing = [i for i in ids if i not in known]
        if missing:
            close = [m for i in missing for m in difflib.get_close_matches(i, known, n=1)]
            meant = f" (did you mean {', '.join(close)}?)" if close else ""
            file = Path(source) if source is not None else None
            named = f" {file.parent.name}/{file.name}" if file is not None and \
                file.parent.name == "evals" else ""  # agent mode reads agent.json, not evals.json
            raise InvalidSuite(f"no case with id {', '.join(missing)} in the suite{named}{meant}",
                               hint=f"hubskills suite show {_shown(source)}  # lists the case ids")
        wanted = set(ids)
        return self.model_copy(update={"cases": [c for c in self.cases if c.id in wanted]})


def _shown(source: str | Path | None) -> str:
    """What `suite show` takes to list a suite's cases: the skill folder for a skill's own
    suite (`evals/evals.json`, `evals/agent.json`: `suite show` lists both; a fetched skill's
    temporary folder reads as its reference), else the suite file itself."""
    if source is None:
        return "SKILL"
    file = Path(source)
    if file.parent.name == "evals" and file.name in ("evals.json", "agent.json"):
        return str(file.parent.parent)
    return str(file)


def _missing_hint(file: Path, skill_dir: Path | None) -> str | None:
    """The next step for a suite file that is not there: writing a skill's own suite, or (for
    another path, such as a mistyped `--tests` file) the closest suite file next to it, else
    the skill's own suite."""
    skill = skill_dir if skill_dir is not None else (
        file.parent.parent if file.parent.name == "evals" else None)
    if skill is not None and file.parent.resolve() == (skill / "evals").resolve():
        return (f"hubskills suite generate {skill}  # or: hubskills suite import FILE "
                f"--into {skill}")
    folder = file.parent
    names = sorted(p.name for p in folder.glob("*.json")) if folder.is_dir() else []
    close = difflib.get_close_matches(file.name, names, n=1, cutoff=0.6)
    if close:
        return f"did you mean {folder / close[0]}?"
    return (f"hubskills suite show {skill_dir}  # the skill's own suite, what runs when no "
            "suite file is named") if skill_dir is not None else None


def detect_format(data: Any) -> Format:
    """Which suite format a parsed JSON document is in.

    Raises:
        InvalidSuite: none of the known formats.
    """
    if isinstance(data, list) and (not data or isinstance(data[0], dict) and "input" in data[0]):
        return "upskill"
    if suite_nvidia.is_nvidia(data):
        return "nvidia"
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
        "{\"evals\": [...]} (skill-creator), a list of {\"question\", ...} (NVIDIA's) or "
        "skill_meta.json",
        hint="hubskills new NAME  # shows the native evals/evals.json format",
    )


def load_suite(path: str | os.PathLike[str], *, skill_dir: Path | None = None) -> Suite:
    """Load a suite file in any supported format, converted to the native schema.

    Files listed by path are read from `skill_dir` when given, else from the suite's folder or
    its parent (the skill folder for `evals/evals.json`).

    Raises:
        InvalidSuite: unreadable, too large, not JSON, or a case or field is malformed; the
            message names the file, the case and the field.
    """
    file = Path(path)
    if not file.is_file():
        raise InvalidSuite(f"{file}: no such suite file", hint=_missing_hint(file, skill_dir))
    if file.stat().st_size > MAX_SUITE_BYTES:
        raise InvalidSuite(f"{file}: larger than {MAX_SUITE_BYTES // 2**20} MiB")
    try:
        text = file.read_bytes().decode("utf-8-sig")
        data = json.loads(text)
    except OSError as exc:
        raise InvalidSuite(f"{file}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InvalidSuite(f"{file}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InvalidSuite(f"{file}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise InvalidSuite(f"{file}: invalid JSON: nested too deeply") from None
    roots = (skill_dir,) if skill_dir is not None else (file.parent, file.parent.parent)
    suite = parse_suite(data, source=str(file), roots=roots)
    suite._text = text
    return suite


def parse_suite(data: Any, *, source: str = "<suite>", base_dir: Path | None = None,
                roots: tuple[Path, ...] | None = None) -> Suite:
    """Convert parsed JSON in any supported format to a validated native `Suite`.

    Files listed by path are looked up under `roots` (default: `base_dir`, then its parent).

    Raises:
        InvalidSuite: an unknown format, or a malformed case or field; the message starts
            with `source` and names the case and the field.
    """
    if roots is None:
        roots = (base_dir, base_dir.parent) if base_dir is not None else ()
    warnings: list[str] = []
    try:
        fmt = detect_format(data)
        native = {
            "hubskills": lambda d: suite_import.from_native(d, roots),
            "upskill": lambda d: suite_import.from_upskill(d, warnings),
            "upskill-meta": lambda d: suite_import.from_upskill_meta(d, warnings),
            "skill-creator": lambda d: suite_import.from_skill_creator(d, roots),
            "nvidia": lambda d: suite_nvidia.from_nvidia(d, roots, warnings),
        }[fmt](data)
    except InvalidSuite as exc:
        raise InvalidSuite(f"{source}: {exc.message}",
                           hint=exc.hint or _hint("upskill", source)) from None
    try:
        suite = Suite.model_validate(native)
    except ValidationError as exc:
        raise InvalidSuite(suite_errors.describe(exc, native, source),
                           hint=_hint(fmt, source)) from None
    except RecursionError:
        raise InvalidSuite(f"{source}: nested too deeply", hint=_hint(fmt, source)) from None
    suite._shape, suite._original, suite._warnings = fmt, data, warnings
    return suite


def suite_path(skill_dir: str | os.PathLike[str]) -> Path:
    """Where a skill keeps its suite."""
    return Path(skill_dir) / SUITE_PATH


def _hint(fmt: Format, source: str) -> str:
    """The next command, with the real file (and skill folder, for evals/evals.json)."""
    file = Path(source)
    if fmt == "hubskills":
        skill = ("SKILL" if source.startswith("<")  # parsed from memory: no folder to name
                 else file.parent.parent if file.parent.name == "evals" else file)
        return f"fix the field, then run: hubskills suite show {skill}"
    return f"fix the source file, then run: hubskills suite import {file} --into SKILL"
