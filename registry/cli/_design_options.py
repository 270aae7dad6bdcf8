"""`--design-option KEY=VALUE` as a design's parameters, for `eval` in every mode (a trigger
run's design too: `_trigger_eval`)."""

from __future__ import annotations

from pathlib import Path

from registry.errors import HubskillsError


def design_options(given: tuple[str, ...], skill: Path) -> dict[str, object]:
    """`--design-option KEY=VALUE`s as the design's parameters (numbers read as numbers)."""
    options: dict[str, object] = {}
    for text in given:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise HubskillsError(f"--design-option {text!r} is not KEY=VALUE",
                                 hint=f"hubskills eval {skill} --design-option alpha=0.01")
        options[key.strip()] = _number(value.strip())
    return options


def _number(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
