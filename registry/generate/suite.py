"""Test suites written by the teacher, parsed leniently and verified before they are kept.

A case is kept only when it is fair and useful: its prompt does not give the answer away
(a check that would pass on the prompt itself), the teacher following the skill passes it,
and the first student does not pass it without the skill on every repeat. Dropped cases are
reported with their reason, and the teacher gets one chance to replace them.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from registry._io import NestedTooDeep, loads_bounded
from registry.errors import InvalidSuite
from registry.evaluation.text_checks import unsafe_pattern
from registry.format.checks_schema import Contains, ContainsAny
from registry.format.markdown import fenced_blocks
from registry.format.skill import SKILL_FILE, Skill, load_skill
from registry.format.suite import Case, detect_format, parse_suite
from registry.generate.teacher import Teacher, TeacherFormatError, render
from registry.generate.verify import Verifier

log = logging.getLogger(__name__)
_ID_BAD = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class SuiteOutcome:
    """The cases kept, those dropped with their reasons, and how far they were verified."""

    cases: list[Case]
    dropped: list[tuple[str, str]] = field(default_factory=list)
    verified: bool = True
    placeholder: bool = False
    easy: list[Case] = field(default_factory=list)
    """Passable cases dropped as too easy: a last resort when nothing else survives."""
    warnings: list[str] = field(default_factory=list)


def json_from_reply(text: str) -> Any:
    """The JSON document in a reply: a ```json block, any block that parses, or the outermost
    braces of the text.

    Raises:
        TeacherFormatError: nothing parses; the message carries the JSON error.
    """
    blocks = fenced_blocks(text, lenient=True)
    candidates = [b.body for b in blocks if b.info.lower().startswith("json")]
    candidates += [b.body for b in blocks if b.body.lstrip()[:1] in "{["]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    error = "no JSON block found"
    for candidate in candidates:
        try:
            return loads_bounded(candidate)
        except json.JSONDecodeError as exc:
            error = f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        except NestedTooDeep:  # `[[[...` a thousand deep: a traceback on 3.11, parsed on 3.13
            error = "invalid JSON: nested too deeply"
    raise TeacherFormatError(f"{error}; expected one ```json block with {{\"cases\": [...]}}")


def unique_id(raw: str, taken: set[str]) -> str:
    """A valid case id from `raw`, suffixed until it is not in `taken`."""
    base = _ID_BAD.sub("-", raw).strip("-._")[:60] or "case"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def parse_suite_reply(text: str, taken: set[str]) -> tuple[list[Case], list[tuple[str, str]]]:
    """Cases from a reply (native, upskill or skill-creator JSON); malformed cases are
    returned apart with the reason, and ids are made unique against `taken`.

    Raises:
        TeacherFormatError: no JSON, or not one usable case.
    """
    data = json_from_reply(text)
    if isinstance(data, list):
        data = {"cases": data}
    try:
        native = detect_format(data) == "hubskills"
        raws = data["cases"] if native else [
            c.model_dump(exclude_defaults=True) for c in parse_suite(data).cases]
    except InvalidSuite as exc:
        raise TeacherFormatError(exc.message) from None
    taken, cases, invalid = set(taken), [], []
    for number, raw in enumerate(raws, start=1):
        if not isinstance(raw, dict):
            invalid.append((f"case-{number}", "not a JSON object"))
            continue
        raw = {k: v for k, v in raw.items() if k in Case.model_fields}
        raw["id"] = unique_id(str(raw.get("id") or f"case-{number}"), taken)
        try:
            case = Case.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            invalid.append((raw["id"], f"field {where}: {first['msg']}"))
            continue
        if not case.graded_items():
            invalid.append((case.id, "no checks and no assertions"))
            continue
        taken.add(case.id)
        cases.append(case)
    if not cases:
        reasons = "; ".join(f"{i}: {r}" for i, r in invalid[:5]) or "the list is empty"
        raise TeacherFormatError(f"no usable test case ({reasons})")
    return cases, invalid


_SUBSTRING_TYPES = (Contains, ContainsAny)  # types contains, icontains, contains_any


def screen_leaks(case: Case) -> tuple[Case | None, str | None]:
    """Reject a case whose prompt gives the answer away; values of a multi-value `contains`
    that the prompt already holds are removed instead (they test nothing).

    Returns the (possibly rewritten) case, or None and the reason.
    """
    given = case.prompt + "\n" + "\n".join(
        file if isinstance(file, str) else file.text() or "" for file in case.files.values())
    checks = []
    for check in case.checks:
        if isinstance(check, _SUBSTRING_TYPES):
            sensitive = getattr(check, "case_sensitive", False) and check.type != "icontains"
            hay = given if sensitive else given.casefold()
            leaked = [v for v in check.values() if (v if sensitive else v.casefold()) in hay]
            rest = [v for v in check.values() if v not in leaked]
            if leaked and (check.type == "contains_any" or not rest):
                return None, f"leaks the answer: the prompt already contains {leaked[0]!r}"
            if leaked:
                check = check.model_copy(update={"value": rest})
        elif check.type == "regex" and unsafe_pattern(check) is None \
                and check.compiled().search(given):  # one RE2 cannot run is not tried here
            return None, f"leaks the answer: the prompt already matches /{check.pattern}/"
        elif check.type == "equals" and check.value.strip().casefold() in given.casefold():
            return None, "leaks the answer: the prompt already holds the expected value"
        checks.append(check)
    return case.model_copy(update={"checks": checks}), None


def skill_text(folder: Path, limit: int = 60_000) -> str:
    """SKILL.md and its resource files as the teacher sees them, trimmed to `limit` chars."""
    parts = [(folder / SKILL_FILE).read_text(encoding="utf-8")]
    for rel in load_skill(folder).files():
        if rel != SKILL_FILE and not rel.startswith("evals/") and (folder / rel).is_file() \
                and not (folder / rel).is_symlink():  # a link's target is not the skill's
            text = (folder / rel).read_text(encoding="utf-8", errors="replace")
            parts.append(f"path: {rel}\n````\n{text[:8000]}\n````")
    joined = "\n\n".join(parts)
    return joined if len(joined) <= limit else joined[:limit] + "\n[... trimmed]"


@dataclass
class SuiteRequest:
    """What the teacher is asked for: `n` cases for the skill in `folder`."""

    folder: Path
    n: int
    examples: list[str] = field(default_factory=list)
    existing: list[Case] = field(default_factory=list)
    task: str = ""


def _prompt(request: SuiteRequest, teacher: Teacher, n: int, avoid: str,
            kept: list[Case]) -> str:
    skill = load_skill(request.folder)
    existing, have = "", request.existing + kept
    if have:
        listed = "\n".join(f"  - {c.id}: {c.prompt[:100]}" for c in have[:40])
        existing = f"\n- The suite already has these cases; do not repeat them:\n{listed}"
    examples = "".join(f"\nExample of the kind of request:\n{e}\n" for e in request.examples)
    limit = 6000 if teacher.is_weak else 60_000
    return render("suite", n=n, skill=skill_text(request.folder, limit), examples=examples,
                  existing=existing, avoid=avoid,
                  suite_format=render("suite_format", name=skill.name))


def write_suite(request: SuiteRequest, teacher: Teacher, verifier: Verifier | None,
                *, progress: Any = None) -> SuiteOutcome:
    """Ask for `request.n` cases, screen and verify them, and ask once more to replace drops.

    `verifier` None skips the model checks (leaks are still rejected).

    Raises:
        GenerationError: the teacher's reply stays unusable after a repair round.
    """
    taken = {c.id for c in request.existing}
    outcome = SuiteOutcome(cases=[], verified=verifier is not None)
    avoid = ""
    for attempt in range(2):
        wanted = request.n - len(outcome.cases)
        fmt = render("suite_format", name=load_skill(request.folder).name)
        def parse(text: str, taken_now: frozenset[str] = frozenset(taken)
                  ) -> tuple[list[Case], list[tuple[str, str]]]:
            return parse_suite_reply(text, set(taken_now))

        cases, invalid = teacher.ask_parsed(
            _prompt(request, teacher, wanted, avoid, outcome.cases),
            "suite" if not attempt else "suite-more", parse, fmt)
        outcome.dropped += invalid
        kept, dropped, easy = _screen(cases, request.folder, verifier)
        outcome.cases += kept[:wanted]  # a teacher that writes more than asked: keep the first
        outcome.dropped += dropped
        outcome.easy += easy
        taken |= {c.id for c in cases}
        if progress:
            progress(f"suite: {len(kept)} of {len(cases)} cases kept"
                     + (f" ({_tally(dropped)})" if dropped else ""))
        if len(outcome.cases) >= request.n or not dropped or verifier is None:
            break
        avoid = "\n- Cases like these were rejected; write different ones:\n" + "\n".join(
            f"  - {case_id}: {reason}" for case_id, reason in dropped[:12])
    outcome.warnings += verifier.notes if verifier is not None else []  # e.g. no sandbox
    return outcome


def _tally(dropped: list[tuple[str, str]]) -> str:
    kinds: dict[str, int] = {}
    for _, reason in dropped:
        kind = reason.split(":", 1)[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    return ", ".join(f"{kind}: {n}" for kind, n in kinds.items())


def _screen(cases: list[Case], folder: Path, verifier: Verifier | None
            ) -> tuple[list[Case], list[tuple[str, str]], list[Case]]:
    """(kept, dropped with reasons, passable but too easy)."""
    clean, dropped = [], []
    for case in cases:
        screened, reason = screen_leaks(case)
        if screened is None:
            dropped.append((case.id, reason or "leaks the answer"))
        else:
            clean.append(screened)
    if verifier is None or not clean:
        return clean, dropped, []
    reasons = verifier.verify_all(clean, load_skill(folder))
    pairs = list(zip(clean, reasons, strict=True))
    dropped += [(c.id, r) for c, r in pairs if r is not None]
    easy = [c for c, r in pairs if r is not None and r.startswith("too easy")]
    return [c for c, r in pairs if r is None], dropped, easy


def placeholder_suite(skill: Skill, task: str) -> SuiteOutcome:
    """One clearly marked placeholder case, for a weak teacher that wrote no usable suite."""
    case = Case.model_validate({
        "id": "placeholder-task",
        "prompt": f"{task.strip()}\n\nExplain the steps and show a short example.",
        "checks": [{"type": "regex", "pattern": r"\S{3,}",
                    "name": "placeholder: replace with checks the skill's knowledge decides"}],
        "metadata": {"placeholder": True,
                     "note": "written by hubskills because the teacher wrote no usable suite"},
    })
    warning = (f"the teacher wrote no usable test suite: evals/evals.json holds one placeholder "
               f"case; write real cases before trusting any eval of '{skill.name}'")
    return SuiteOutcome([case], verified=False, placeholder=True, warnings=[warning])

