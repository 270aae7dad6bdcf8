"""The schema of every check type a test case can carry (the engine lives in `checks.py`)."""

from __future__ import annotations

import re
from itertools import repeat
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from registry.format.patterns import Pattern, compile_pattern

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


class _Check(BaseModel):
    model_config = ConfigDict(extra="forbid")

    weight: float = Field(1.0, gt=0, allow_inf_nan=False, description="share of the case's score")
    name: str | None = None
    if TYPE_CHECKING:  # each concrete check declares its own `type: Literal[...]` field
        type: str

    def label(self) -> str:
        """A short human label for reports."""
        return self.name or self.type


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


class _Substrings(_Check):
    value: str | list[str]
    case_sensitive: bool = False

    @field_validator("value")
    @classmethod
    def _non_empty(cls, value: str | list[str]) -> str | list[str]:
        # no Python loop: a suite's every substring check passes here (a replay parses it)
        if value if isinstance(value, str) else (
                value and "" not in value and all(map(isinstance, value, repeat(str)))):
            return value
        raise ValueError("needs one or more non-empty strings")

    def values(self) -> list[str]:
        """The substrings, always as a list."""
        return _as_list(self.value)


class Contains(_Substrings):
    """Every value appears in the output (case-insensitive unless `case_sensitive`)."""

    type: Literal["contains", "icontains"]

    @model_validator(mode="after")
    def _icontains_is_insensitive(self) -> Contains:
        if self.type == "icontains" and self.case_sensitive:
            raise ValueError("icontains is case-insensitive; use contains with case_sensitive")
        return self


class ContainsAny(_Substrings):
    """At least one value appears in the output."""

    type: Literal["contains_any"]


class NotContains(_Substrings):
    """No value appears in the output."""

    type: Literal["not_contains"]


def _flag_bits(letters: str) -> int:
    bits = 0
    for letter in letters:
        bits |= _FLAGS[letter]
    return bits


class _Pattern(_Check):
    # `flags` is declared first so that `pattern` is compiled with them (verbose mode changes
    # what compiles); each error then names its own field.
    flags: str = ""
    pattern: str

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, flags: str) -> str:
        unknown = set(flags) - set(_FLAGS) if flags else None
        if unknown:
            raise ValueError(f"unknown regex flags {''.join(sorted(unknown))} (use i, m, s, x)")
        return flags

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str, info: ValidationInfo) -> str:
        try:
            re.compile(pattern, _flag_bits(info.data.get("flags", "")))
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return pattern

    def compiled(self) -> Pattern:
        """The pattern with its flags, compiled for RE2: its matches take linear time, since a
        suite's pattern never runs through Python's backtracking `re` (`patterns.py`).

        Raises:
            UnsafePattern: RE2 cannot express it (a backreference, a lookaround, ...).
        """
        return compile_pattern(self.pattern, self.flags)


class Regex(_Pattern):
    """The pattern matches somewhere in the output."""

    type: Literal["regex"]


class NotRegex(_Pattern):
    """The pattern matches nowhere in the output."""

    type: Literal["not_regex"]


class Equals(_Check):
    """The output equals the value (whitespace stripped by default)."""

    type: Literal["equals"]
    value: str
    case_sensitive: bool = True
    strip: bool = True


class JsonCheck(_Check):
    """The output (or its first fenced block) is valid JSON, optionally matching a schema."""

    type: Literal["json"]
    json_schema: dict[str, Any] | None = Field(None, alias="schema")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @field_validator("json_schema")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        if schema is not None:
            import jsonschema

            try:
                jsonschema.validators.validator_for(schema).check_schema(schema)
            except jsonschema.SchemaError as exc:
                raise ValueError(f"invalid JSON Schema: {exc.message}") from None
        return schema


class PythonCheck(_Check):
    """`def check(output, files)` returning a bool or (bool, reason), run in a subprocess."""

    type: Literal["python"]
    code: str
    timeout: float = Field(10.0, gt=0, le=300)

    @field_validator("code")
    @classmethod
    def _defines_check(cls, code: str) -> str:
        try:
            compile(code, "<check>", "exec")
        except SyntaxError as exc:
            message = f"python check does not compile: {exc.msg} (line {exc.lineno})"
            raise ValueError(message) from None
        if not re.search(r"^def check\(", code, re.M):
            raise ValueError("python check must define `def check(output, files):`")
        return code


class JudgeCheck(_Check):
    """A rubric graded pass/fail by the pinned `--judge` model."""

    type: Literal["judge"]
    rubric: str = Field(min_length=1)


class PairwiseCheck(_Check):
    """A rubric the `--judge` model grades by comparing both arms' answers to one sample, in
    both orders (`evaluation/pairwise.py`): the arm both orders prefer wins, else a tie."""

    type: Literal["pairwise"]
    rubric: str = Field(min_length=1)

    @field_validator("rubric")
    @classmethod
    def _said(cls, rubric: str) -> str:
        if not rubric.strip():
            raise ValueError("a pairwise check needs a rubric: what makes one answer better")
        return rubric


class ExecCheck(_Check):
    """A command run in a sandboxed temp folder holding the files the model wrote."""

    type: Literal["exec"]
    command: str | list[str]
    timeout: float = Field(60.0, gt=0, le=600)
    requires: list[str] = Field(default_factory=list, description="executables needed")
    expect_exit: int = 0


# --- workspace checks: graded on the files in the final workspace ----------------------------
# In agent mode that is the folder the agent worked in; in chat mode, a temp folder holding the
# case's files and the answer's named fenced blocks. Paths are checked here, at suite load.

_GLOB = re.compile(r"[*?\[]")


def is_glob(path: str) -> bool:
    """Whether a `file_exists` path is a pattern (`*`, `?`, `[...]`) rather than a name."""
    return bool(_GLOB.search(path))


_MAX_PATH = 300


def _workspace_path(path: str, *, glob: bool = False) -> str:
    """`path` if it names something inside the workspace, else a ValueError saying why."""
    if not isinstance(path, str) or not path.strip():
        raise ValueError("paths are non-empty strings")
    parts = PurePosixPath(path).parts
    if path.startswith(("/", "~")) or "\\" in path or ".." in parts or ":" in path:
        raise ValueError(f"path {path!r} must be relative and stay inside the workspace "
                         "(no leading / or ~, no .., no backslash or drive)")
    if len(path) > _MAX_PATH or any(ord(c) < 32 for c in path) or parts in ((), (".",)):
        raise ValueError(f"path {path!r} is not a usable file name")
    if not glob and _GLOB.search(path):
        raise ValueError(f"path {path!r}: wildcards are allowed only in file_exists")
    return path


class FileExists(_Check):
    """Every path (a glob with `*`, `?`, `[...]`, `**/`) names a file or folder in the workspace."""

    type: Literal["file_exists"]
    path: str | list[str]

    @field_validator("path")
    @classmethod
    def _inside(cls, path: str | list[str]) -> str | list[str]:
        items = _as_list(path)
        if not items:
            raise ValueError("needs one or more paths")
        for item in items:
            _workspace_path(item, glob=True)
        return path

    def paths(self) -> list[str]:
        """The paths, always as a list."""
        return _as_list(self.path)


class _FileCheck(_Check):
    path: str

    @field_validator("path")
    @classmethod
    def _inside(cls, path: str) -> str:
        return _workspace_path(path)


class FileContains(_FileCheck, _Substrings):
    """The file holds every value (case-insensitive unless `case_sensitive`)."""

    type: Literal["file_contains"]


class FileNotContains(_FileCheck, _Substrings):
    """The file exists and holds none of the values."""

    type: Literal["file_not_contains"]


class FileRegex(_FileCheck, _Pattern):
    """The pattern (with `flags`, like `regex`) matches somewhere in the file."""

    type: Literal["file_regex"]


class FileParses(_FileCheck):
    """The file parses as `format`; `key` (a dotted path such as `general.cuda.capabilities`,
    list items by index) must then exist and, if given, `equals` or `contains` a value (a list
    holds the item, or every item of a list given; a string holds the substring; a table holds
    the key)."""

    type: Literal["file_parses"]
    format: Literal["json", "toml", "yaml"]
    key: str | None = None
    equals: Any = None
    contains: Any = None

    @field_validator("key")
    @classmethod
    def _dotted(cls, key: str | None) -> str | None:
        if key is not None and (not key or any(not part for part in key.split("."))):
            raise ValueError("key is a dotted path like general.cuda.capabilities")
        return key

    @model_validator(mode="after")
    def _one_expectation(self) -> FileParses:
        if {"equals", "contains"} <= self.model_fields_set:
            raise ValueError("give equals or contains, not both")
        if "contains" in self.model_fields_set and self.contains is None:
            raise ValueError("contains needs a value")
        return self

    def expectation(self) -> tuple[str, Any] | None:
        """("equals" | "contains", value) when the check expects a value at `key`."""
        for name in ("equals", "contains"):
            if name in self.model_fields_set:
                return name, getattr(self, name)
        return None


class CommandCheck(_Check):
    """A shell command run in the sandbox in a copy of the workspace; passes on exit code 0
    (and when its output holds every `output_contains` value). A tool in `requires` that the
    sandbox cannot find skips the check with a reason."""

    type: Literal["command"]
    command: str = Field(min_length=1)
    output_contains: str | list[str] | None = None
    requires: list[str] = Field(default_factory=list, description="executables needed")
    timeout_s: float = Field(60.0, gt=0, le=600)

    @field_validator("output_contains")
    @classmethod
    def _non_empty(cls, value: str | list[str] | None) -> str | list[str] | None:
        if value is not None and (not _as_list(value) or "" in _as_list(value)):
            raise ValueError("needs one or more non-empty strings")
        return value

    def expected_output(self) -> list[str]:
        """The `output_contains` values, always as a list."""
        return [] if self.output_contains is None else _as_list(self.output_contains)


Check = Annotated[
    Contains | ContainsAny | NotContains | Regex | NotRegex | Equals | JsonCheck | PythonCheck
    | JudgeCheck | PairwiseCheck | ExecCheck | FileExists | FileContains | FileNotContains
    | FileRegex | FileParses | CommandCheck,
    Field(discriminator="type"),
]
WORKSPACE_CHECK_TYPES = (
    "file_exists", "file_contains", "file_not_contains", "file_regex", "file_parses", "command",
)
CHECK_TYPES = (
    "contains", "icontains", "contains_any", "not_contains", "regex", "not_regex", "equals",
    "json", "python", "judge", "pairwise", "exec", *WORKSPACE_CHECK_TYPES,
)
