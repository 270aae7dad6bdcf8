"""The schema of every check type a test case can carry (the engine lives in `checks.py`)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


class _Check(BaseModel):
    model_config = ConfigDict(extra="forbid")

    weight: float = Field(1.0, gt=0, allow_inf_nan=False, description="share of the case's score")
    name: str | None = None

    def label(self) -> str:
        """A short human label for reports."""
        return self.name or self.type  # type: ignore[attr-defined]


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


class _Substrings(_Check):
    value: str | list[str]
    case_sensitive: bool = False

    @field_validator("value")
    @classmethod
    def _non_empty(cls, value: str | list[str]) -> str | list[str]:
        items = _as_list(value)
        if not items or any(not isinstance(v, str) or v == "" for v in items):
            raise ValueError("needs one or more non-empty strings")
        return value

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
        unknown = set(flags) - set(_FLAGS)
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

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern with its flags."""
        return re.compile(self.pattern, _flag_bits(self.flags))


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


class ExecCheck(_Check):
    """A command run in a sandboxed temp folder holding the files the model wrote."""

    type: Literal["exec"]
    command: str | list[str]
    timeout: float = Field(60.0, gt=0, le=600)
    requires: list[str] = Field(default_factory=list, description="executables needed")
    expect_exit: int = 0


Check = Annotated[
    Contains | ContainsAny | NotContains | Regex | NotRegex | Equals | JsonCheck | PythonCheck
    | JudgeCheck | ExecCheck,
    Field(discriminator="type"),
]
CHECK_TYPES = (
    "contains", "icontains", "contains_any", "not_contains", "regex", "not_regex", "equals",
    "json", "python", "judge", "exec",
)
