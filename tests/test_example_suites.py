"""The example skills' suites: big enough to show a lift, and each case fair and discriminating.

Each case must pass on an answer that repeats the skill (the skill teaches what the checks
want, so the facts in SKILL.md and in the suite agree) and must fail on an answer that only
repeats the question (a model cannot pass by parroting the prompt).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from registry.evaluation.checks import case_score, run_checks
from registry.format.skill import load_skill
from registry.format.suite import load_suite, suite_path

SKILLS = sorted(p for p in (Path(__file__).resolve().parents[1] / "skills").iterdir()
                if (p / "SKILL.md").is_file())


def cases(folder: Path):
    return load_suite(suite_path(folder), skill_dir=folder).cases


def passing(pairs: list) -> list[bool | None]:
    """Whether each (case, answer) passes, graded in one event loop."""
    async def grade():
        return await asyncio.gather(*(run_checks(case, answer) for case, answer in pairs))

    return [case_score(results)[0] for results in asyncio.run(grade())]


@pytest.mark.parametrize("folder", SKILLS, ids=lambda p: p.name)
def test_each_suite_has_at_least_40_cases_with_unique_ids(folder: Path):
    ids = [case.id for case in cases(folder)]
    assert len(ids) >= 40 and len(set(ids)) == len(ids)


@pytest.mark.parametrize("folder", SKILLS, ids=lambda p: p.name)
def test_the_skill_answers_every_case_and_the_question_answers_none(folder: Path):
    skill = load_skill(folder)
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    suite = cases(folder)
    taught = passing([(c, text) for c in suite])
    parrot = passing([(c, c.prompt) for c in suite])
    untaught = [c.id for c, ok in zip(suite, taught, strict=True) if not ok]
    parroted = [c.id for c, ok in zip(suite, parrot, strict=True) if ok]
    assert (untaught, parroted) == ([], []), skill.name


def test_the_readme_table_shows_the_recorded_runs_as_the_engine_computes_them():
    from registry.results import display
    from registry.results.report import summarize
    from registry.results.runs import latest_rows, list_runs, read_rows

    root = SKILLS[0].parent / ".runs"
    readme = (root.parent.parent / "README.md").read_text(encoding="utf-8")
    manifests = list_runs(root)
    assert sorted(m.skill_name for m in manifests) == sorted(p.name for p in SKILLS)
    for m in manifests:
        [s] = summarize(latest_rows(read_rows(root, m.run_id)))
        st = s.stats
        row = (f"| `{m.skill_name}` | {len(m.case_ids)} × {m.runs} | "
               f"{display.pct(st.baseline.pass_rate)} | {display.pct(st.skill.pass_rate)} | "
               f"{display.lift_interval(st.lift, st.lo, st.hi)} | "
               f"{display.p_value(st.p_value)} ({st.b}, {st.c}) | {st.verdict} |")
        assert row in readme
