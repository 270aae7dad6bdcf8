"""Writing a suite in the shape of its file, and importing a suite into a skill folder.

Native suites are written by `Suite.to_json`. A suite read from skill-creator's
`evals/evals.json` is written back in skill-creator's shape: every entry keeps its keys (unknown
ones included) and their order, an unchanged entry keeps its exact text, and hubskills' `checks`
ride along in an entry's own `checks` key (skill-creator ignores it). NVIDIA's format is
written back the same way (`registry.format.suite_nvidia`). Files a case lists by path
are written into the skill folder where missing; a different file already there is never
overwritten. upskill's files are never rewritten: hubskills reads them, and imports them into
its own shape.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from registry._io import atomic_write_bytes, atomic_write_text
from registry.errors import InvalidSkill, InvalidSuite
from registry.format.inputs import listed_paths
from registry.format.skill import SKILL_FILE
from registry.format.suite import Format, InputFile, Suite, detect_format, load_suite, suite_path
from registry.format.suite_import import assertion_texts
from registry.format.suite_nvidia import nvidia_text

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass
class Imported:
    """What `import_suite` did: the suite, where it went, in which shape, and its warnings."""

    target: Path
    suite: Suite
    shape: Format
    written: bool
    files: list[str] = field(default_factory=list)


def import_suite(source: Path, skill_dir: Path, *, force: bool = False) -> Imported:
    """Import a suite file in any supported format into `skill_dir/evals/evals.json`.

    The target keeps its shape when it exists (with `force`); a new target takes
    skill-creator's shape when the source has it (its listed files are copied along, keeping
    their paths), else the native shape. Importing a skill's own `evals/evals.json` in place
    writes nothing: hubskills reads every supported shape as it is.

    Raises:
        InvalidSkill: `skill_dir` has no SKILL.md.
        InvalidSuite: the source is malformed, the target exists without `force`, the target is
            an upskill file, or a listed file would overwrite a different one; nothing written.
    """
    if not (skill_dir / SKILL_FILE).is_file():
        raise InvalidSkill(f"{skill_dir} is not a skill folder (no {SKILL_FILE})",
                           hint=f"hubskills new {skill_dir.name or 'my-skill'} "
                                f"--dir {skill_dir.parent}")
    suite = load_suite(source)
    target = suite_path(skill_dir)
    if target.is_file() and target.resolve() == source.resolve():
        return Imported(target, suite, suite.shape, written=False)
    if target.exists() and not force:
        raise InvalidSuite(f"{target} already exists",
                           hint=f"hubskills suite import {source} --into {skill_dir} --force")
    shape, original, text = _target_shape(target, suite)
    if suite.skill_name is None and shape == "hubskills":
        suite = suite.model_copy(update={"skill_name": skill_dir.resolve().name})
    files = write_suite(suite.reshaped(shape, original, text), target)
    return Imported(target, suite, shape, written=True, files=files)


def _target_shape(target: Path, suite: Suite) -> tuple[Format, Any, str | None]:
    """The shape to write `target` in, with the document and text whose layout it keeps."""
    try:
        text = target.read_bytes().decode("utf-8-sig")
        existing = json.loads(text)
        shape = detect_format(existing)
    except (OSError, ValueError, RecursionError, InvalidSuite):  # absent or unreadable: replaced
        original, read_from = suite.origin()
        kept = suite.shape in ("skill-creator", "nvidia")
        return (suite.shape if kept else "hubskills", original if kept else None, read_from)
    if shape in ("upskill", "upskill-meta"):
        raise InvalidSuite(f"{target} is an upskill test file; hubskills reads it but never "
                           "rewrites it in another shape",
                           hint=f"move {target} aside, then run the import again")
    return shape, existing, text


def write_suite(suite: Suite, path: Path) -> list[str]:
    """Write `suite` to `path` in its shape; returns the listed files it wrote.

    Raises:
        InvalidSuite: an upskill shape, or a listed file that differs from one already there.
    """
    root = path.parent.parent if path.parent.name == "evals" else path.parent
    files: dict[str, bytes] = {}
    if suite.shape == "skill-creator":
        text = _skill_creator_text(suite, files)
    elif suite.shape == "nvidia":
        text = nvidia_text(suite, files)
    elif suite.shape == "hubskills":
        text = suite.to_json()
        files = {f.path: f.data for case in suite.cases for f in case.files.values()
                 if isinstance(f, InputFile)}
    else:
        raise InvalidSuite(f"{path}: hubskills does not write upskill's format",
                           hint=f"hubskills suite import FILE --into {root}")
    missing = _missing_files(files, (path.parent, root))
    for rel in missing:
        atomic_write_bytes(root / rel, files[rel])
    atomic_write_text(path, text)
    return missing


def _missing_files(files: dict[str, bytes], roots: tuple[Path, Path]) -> list[str]:
    """The listed files to write (absent from the folders the loader reads them from)."""
    missing = []
    for rel, data in sorted(files.items()):
        present = [root / rel for root in roots if (root / rel).is_file()]
        if present and present[0].read_bytes() != data:
            raise InvalidSuite(f"{present[0]} differs from the file the suite lists as {rel!r}; "
                               "not overwritten", hint=f"move {present[0]} aside, or rename it")
        if not present and not (roots[1] / rel).resolve().is_relative_to(roots[1].resolve()):
            raise InvalidSuite(f"{roots[1] / rel} is outside {roots[1]} (a linked folder); "
                               "not written", hint=f"remove the link in {roots[1]}")
        if not present:
            missing.append(rel)
    return missing


# --- skill-creator's shape ---------------------------------------------------------------------


def _skill_creator_text(suite: Suite, files: dict[str, bytes]) -> str:
    original, text = suite.origin()
    original = original if isinstance(original, dict) else {}
    doc = dict(original) if original else {"skill_name": suite.skill_name}
    if suite.skill_name is not None:
        doc["skill_name"] = suite.skill_name
    elif doc.get("skill_name") is None:
        doc.pop("skill_name", None)
    for key, value in (suite.model_extra or {}).items():
        doc.setdefault(key, value)
    doc["evals"] = _entries(suite, original.get("evals"), files)
    spliced = _splice(text, doc, original) if text and original else None
    return spliced or _dump(doc, text)


def _entries(suite: Suite, old: Any, files: dict[str, bytes]) -> list[dict[str, Any]]:
    old = [e for e in old if isinstance(e, dict)] if isinstance(old, list) else []
    by_id = {str(e["id"]) if e.get("id") is not None else str(i + 1): e
             for i, e in enumerate(old)}
    int_ids = all(isinstance(e.get("id"), int) for e in old)
    default_key = "expectations" if old and all("assertions" not in e for e in old) \
        else "assertions"
    entries = []
    for case in suite.cases:
        entry = dict(by_id.get(case.id, {}))
        use_int = case.id.isdigit() and isinstance(entry.get("id", 0 if int_ids else ""), int)
        entry["id"] = int(case.id) if use_int else case.id
        entry["prompt"] = case.prompt
        if case.expected_output is not None:
            entry["expected_output"] = case.expected_output
        paths = listed_paths(case.id, case.files, files)
        if paths or "files" in entry:
            entry["files"] = paths
        key = next((k for k in ("assertions", "expectations") if k in entry), default_key)
        if assertion_texts(entry.get(key)) != list(case.assertions):  # objects kept if unchanged
            entry[key] = list(case.assertions)
        for extension, value in (("checks", _checks(case)), ("metadata", case.metadata)):
            if value:
                entry[extension] = value
            else:
                entry.pop(extension, None)
        entries.append(entry)
    return entries


def _checks(case: Any) -> list[dict[str, Any]]:
    dumped = [c.model_dump(mode="json", exclude_unset=True, by_alias=True) for c in case.checks]
    return [{"type": c["type"], **c} for c in dumped]


def _dump(doc: dict[str, Any], text: str | None) -> str:
    indent = _indent(text) if text else "  "
    return json.dumps(doc, indent=indent, ensure_ascii=_ascii(text)) + "\n"


def _indent(text: str) -> str | None:
    m = re.match(r"\s*\{[ \t\r]*\n([ \t]+)\"", text)
    return m.group(1) if m else None


def _ascii(text: str | None) -> bool:
    return text is not None and text.isascii() and "\\u" in text


def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]  # `[ \t\n\r]*` always matches


def _members(text: str) -> dict[str, tuple[int, int]] | None:
    """Spans of the top-level object's values, by key; None when the text is not one object."""
    i = _skip(text, 0)
    if text[i:i + 1] != "{":
        return None
    spans, i = {}, i + 1
    while (i := _skip(text, i)) < len(text) and text[i] != "}":
        key, i = _DECODER.raw_decode(text, i)
        start = _skip(text, _skip(text, i) + 1)  # past the ':'
        _, i = _DECODER.raw_decode(text, start)
        spans[key] = (start, i)
        i = _skip(text, i)
        i += text[i:i + 1] == ","
    return spans


def _elements(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the elements of the array at text[start:end]."""
    spans, i = [], start + 1
    while (i := _skip(text, i)) < end - 1:
        _, stop = _DECODER.raw_decode(text, i)
        spans.append((i, stop))
        i = _skip(text, stop)
        i += text[i:i + 1] == ","
    return spans


def _splice(text: str, doc: dict[str, Any], original: dict[str, Any]) -> str | None:
    """`text` with only what changed re-rendered: unchanged entries and keys keep their bytes.

    None when the layout cannot be kept (keys added or removed, no entries to copy the layout
    from): the caller then writes the whole document.
    """
    try:
        members = _members(text)
        spans = _elements(text, *members["evals"]) if members and "evals" in members else []
    except ValueError:
        return None
    if not members or not spans or set(members) != set(doc) or not doc["evals"]:
        return None
    start, end = members["evals"]
    line = text[text.rfind("\n", 0, spans[0][0]) + 1:spans[0][0]]
    indent = _indent(text) if line.isspace() else None  # entries on one line stay compact
    used: set[int] = set()
    pieces = []
    for entry in doc["evals"]:
        j = next((j for j, old in enumerate(original["evals"]) if j not in used and old == entry),
                 None)
        if j is not None and j < len(spans):
            used.add(j)
            pieces.append(text[spans[j][0]:spans[j][1]])
        else:
            rendered = json.dumps(entry, indent=indent, ensure_ascii=_ascii(text))
            pieces.append(rendered.replace("\n", "\n" + line) if indent else rendered)
    opening, closing = text[start + 1:spans[0][0]], text[spans[-1][1]:end - 1]
    between = text[spans[0][1]:spans[1][0]] if len(spans) > 1 else "," + opening
    replaced = {"evals": "[" + opening + between.join(pieces) + closing + "]"}
    for key in members:
        if key != "evals" and doc[key] != original[key]:
            replaced[key] = json.dumps(doc[key], ensure_ascii=_ascii(text))
    out = text
    for key in sorted(replaced, key=lambda k: members[k][0], reverse=True):
        out = out[:members[key][0]] + replaced[key] + out[members[key][1]:]
    return out if json.loads(out) == doc else None


def save_suite(suite: Suite, path: str | os.PathLike[str]) -> Path:
    """Write a suite atomically, in the shape it was read in (native or skill-creator's).

    Raises:
        InvalidSuite: the suite is in a shape hubskills does not write (upskill's), or a file it
            lists would overwrite a different file in the skill folder; nothing is written.
    """
    write_suite(suite, Path(path))
    return Path(path)
