"""`generate` writes a trigger suite (`evals/triggers.json`) beside the test suite.

The teacher is shown the skill's name and description only (what an agent decides from) and
asked for `MIN_QUERIES` queries, half that should open the skill and half near misses that
should not. The reply is read by the same parser and checked by the same rules as a hand-written
suite (`format.triggers`): a reply that does not parse, has too few queries, or is one-sided is
sent back for one repair. The suite is saved in the object shape with its train/holdout split
written out, so it stays fixed from then on. An existing trigger suite is kept; the embedded
teacher writes none (a 135M model cannot).
"""

from __future__ import annotations

from pathlib import Path

from registry._io import atomic_write_text
from registry.errors import InvalidSuite
from registry.format.skill import load_skill
from registry.format.triggers import (
    MIN_QUERIES,
    TRIGGERS_PATH,
    TriggerSuite,
    check_triggers,
    fixed_split,
    parse_triggers,
    triggers_path,
)
from registry.generate.suite import json_from_reply
from registry.generate.teacher import Teacher, TeacherFormatError, render

FORMAT = 'one ```json block holding a list of {"query": "...", "should_trigger": true|false}'


def parse_trigger_reply(text: str, wanted: int = MIN_QUERIES) -> TriggerSuite:
    """A trigger suite from a teacher reply, held to the rules `hubskills validate` checks.

    Raises:
        TeacherFormatError: no JSON, not a trigger suite, fewer than `wanted` queries, or only
            one kind of query (the message is shown to the teacher on repair).
    """
    try:
        suite = parse_triggers(json_from_reply(text), source="the reply")
    except InvalidSuite as exc:
        raise TeacherFormatError(exc.message) from None
    should = sum(q.should_trigger for q in suite.queries)
    if len(suite.queries) < wanted:
        raise TeacherFormatError(f"{len(suite.queries)} queries: write {wanted}")
    if not should or should == len(suite.queries):
        raise TeacherFormatError("every query is of one kind: write half that should trigger "
                                 "the skill and half near misses that should not")
    return suite


def write_trigger_suite(folder: Path, teacher: Teacher, *, skill_name: str | None = None,
                        n: int = MIN_QUERIES) -> tuple[int, list[str]]:
    """Write `folder`'s trigger suite unless it has one: (queries written, warnings).

    Raises:
        GenerationError: the teacher's reply stayed unusable after a repair.
    """
    path = triggers_path(folder)
    if path.is_file():
        return 0, []
    if teacher.is_weak:
        return 0, [f"{teacher.ref} cannot write trigger queries: no {TRIGGERS_PATH} was written "
                   "(write one, or generate with a stronger --teacher)"]
    skill = load_skill(folder)
    prompt = render("triggers", n=n, half=n // 2, name=skill.name,
                    description=skill.description)
    suite = teacher.ask_parsed(prompt, "triggers", lambda text: parse_trigger_reply(text, n),
                               FORMAT)
    fixed = fixed_split(suite)
    fixed = TriggerSuite(fixed.queries, fixed.shape,
                         {"skill_name": skill_name or skill.name, **fixed.extra})
    atomic_write_text(path, fixed.to_json())
    return len(fixed.queries), [f"{TRIGGERS_PATH}: {p.message}" for p in check_triggers(folder)]
