"""Every `# type: ignore` in the package and the Space names its error codes and says why in
the same comment: `# type: ignore[code]  # why`. `make typecheck` (mypy, `warn_unused_ignores`)
fails one that is no longer needed; this fails one that does not say what it silences, or why.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<rest>.*)$")
JUSTIFIED = re.compile(r"\[[a-z-]+(?:, [a-z-]+)*\]  # \S")


def _unjustified(text: str) -> list[int]:
    return [number for number, line in enumerate(text.splitlines(), 1)
            if (found := IGNORE.search(line)) and not JUSTIFIED.match(found["rest"])]


def test_the_rule_tells_a_justified_ignore_from_a_bare_one():
    assert _unjustified("x = f()  # type: ignore[arg-type]  # the stub is wrong") == []
    assert _unjustified("class C(b):  # type: ignore[misc, valid-type]  # made at run time") == []
    assert _unjustified("x = f()  # type: ignore") == [1]
    assert _unjustified("x = f()\ny = g()  # type: ignore[arg-type]") == [2]
    assert _unjustified("x = f()  # type:ignore[arg-type] #why") == [1]


def test_every_type_ignore_in_the_package_and_the_space_says_what_and_why():
    found = [f"{path.relative_to(ROOT)}:{number}"
             for folder in ("registry", "space") for path in sorted((ROOT / folder).rglob("*.py"))
             for number in _unjustified(path.read_text(encoding="utf-8"))]
    assert found == []
