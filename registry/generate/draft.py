"""The draft step of `generate`: the teacher's first version of the skill, made valid.

A strong teacher gets the full prompt (format, rules, traces, the skill to improve) and one
repair round. The embedded model gets a short prompt for plain notes, and the skill is built
from them deterministically: a 135M model cannot follow the format, and saying so beats
pretending.
"""

from __future__ import annotations

from pathlib import Path

from registry.errors import ProviderError
from registry.format.folder_names import plain_name
from registry.format.skill import Skill
from registry.generate.files import bump_patch, copy_without_links
from registry.generate.parse import (
    SkillDraft,
    fallback_draft,
    normalize_frontmatter,
    parse_skill_reply,
    validated,
    write_skill,
)
from registry.generate.session import Session
from registry.generate.suite import skill_text
from registry.generate.teacher import TeacherFormatError, render

WEAK_SOURCE_CHARS = 4000


def finish_draft(session: Session, draft: SkillDraft, parent: Path, *, base: Skill | None,
                 version: str | None) -> Path:
    """Normalize the frontmatter over `base`'s, write `parent/<name>` and validate it.

    Raises:
        TeacherFormatError: the folder does not validate (the errors are listed).
    """
    fm = normalize_frontmatter(draft.frontmatter, task=session.task,
                               name=base.name if base else session.opts.name,
                               base=dict(base.frontmatter) if base else None)
    fm["metadata"]["version"] = version or fm["metadata"].get("version") or "0.1.0"
    if session.feedback is not None:  # the version says which people's review it answers
        fm["metadata"]["feedback"] = f"run {session.feedback.run_id}"
    draft.frontmatter = fm
    if not plain_name(fm["name"]):  # `split_sources` and `--name` refuse one; a slug is one
        raise TeacherFormatError(f"the name {fm['name'][:80]!r} is not a folder name")
    return validated(write_skill(draft, parent / fm["name"],
                                 base_dir=base.path if base else None))


def _sources(session: Session, limit: int | None = None) -> str:
    text = "".join(f"\n<trace>\n{t}\n</trace>\n" for t in session.traces)
    if session.base is not None:
        text += ("\nImprove this existing skill: keep its name, what is right in it and its "
                 "files; fix what is wrong or missing.\n<existing_skill>\n"
                 f"{skill_text(session.base.path, limit or 60_000)}\n</existing_skill>\n")
    if session.feedback is not None:
        text += session.feedback.text
    return text[:limit] if limit else text


def draft_skill(session: Session) -> Path:
    """The first version of the skill, validated, in `work/round-0/<name>`.

    Raises:
        GenerationError: a strong teacher's reply stayed unusable after a repair round.
    """
    examples = "".join(f"\n<example>\n{e}\n</example>\n" for e in session.opts.examples)
    if session.teacher.is_weak:
        return _weak_draft(session, examples)
    fmt = render("skill_format")
    prompt = render("draft", task=session.task, examples=examples, sources=_sources(session),
                    skill_format=fmt)
    return session.teacher.ask_parsed(prompt, "draft", lambda text: _parse(session, text), fmt)


def _parse(session: Session, text: str) -> Path:
    base = session.base
    return finish_draft(session, parse_skill_reply(text), session.work / "round-0", base=base,
                        version=bump_patch(base.version) if base else None)


def _weak_draft(session: Session, examples: str) -> Path:
    prompt = render("draft_weak", task=session.task, examples=examples,
                    sources=_sources(session, WEAK_SOURCE_CHARS))
    try:
        text = session.teacher.ask(prompt, "draft")
    except ProviderError as exc:
        session.warn(f"{session.teacher.ref} failed to answer: {exc.message}")
        text = ""
    try:
        return _parse(session, text)
    except TeacherFormatError:
        return _fallback(session, text)


def _fallback(session: Session, text: str) -> Path:
    session.report.fallback = True
    ref, base = session.teacher.ref, session.base
    if base is not None:
        session.warn(f"{ref} cannot revise a skill in the required format: the existing skill "
                     "is kept unchanged")
        folder = session.work / "round-0" / base.name
        copy_without_links(base.path, folder)
        return folder
    session.warn(f"{ref} did not write a skill in the required format: the skill was "
                 "assembled from its notes and must be reviewed before use")
    draft = fallback_draft(text, session.task, ref)
    if session.opts.name:
        draft.frontmatter["name"] = session.opts.name
    return validated(write_skill(draft, session.work / "round-0" / draft.frontmatter["name"]))
