"""The evaluate → refine loop of `generate`.

Round 0 evaluates the draft; each later round shows the teacher the best version so far with
the cases its students failed WITH the skill, and evaluates the revision. The best round is
the one with the highest mean lower bound of the lift (ties: the higher with-skill pass rate,
then the earlier round). The loop stops early once every student shows a significant lift and
reaches the target pass rate; a round at 0% is refined like any other.
"""

from __future__ import annotations

import logging
from pathlib import Path

from registry.errors import GenerationError
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import EvalRun, run_evaluation
from registry.format.skill import load_skill
from registry.format.suite import Suite, load_suite, suite_path
from registry.generate.draft import finish_draft
from registry.generate.parse import parse_skill_reply
from registry.generate.report import (
    RoundResult,
    describe_round,
    failures_text,
    round_cost,
    summarize_round,
)
from registry.generate.session import Session
from registry.generate.suite import skill_text
from registry.generate.teacher import render
from registry.providers.base import add_cost
from registry.results.display import count as counted
from registry.results.display import pct

log = logging.getLogger(__name__)


def needs_judge(suite: Suite) -> bool:
    """Whether any case is graded by a judge (judge or pairwise checks, plain-language
    assertions)."""
    return any(c.assertions or any(ch.type in ("judge", "pairwise") for ch in c.checks)
               for c in suite.cases)


def evaluate_round(session: Session, folder: Path, round_no: int) -> tuple[RoundResult, EvalRun]:
    """Baseline vs skill on every student; the round's results are added to the report."""
    suite = load_suite(suite_path(folder), skill_dir=folder)
    opts = session.opts
    config = EvalConfig(models=session.students, runs=opts.runs, mode=opts.mode,
                        judge=session.teacher.ref if needs_judge(suite) else None,
                        retry=opts.retry, code_checks="if_sandboxed")
    session.say(f"round {round_no}: evaluating on {', '.join(session.students)} "
                f"({counted(len(suite.cases), 'case')} × {counted(opts.runs, 'run')} × 2 arms)")
    run = run_evaluation(folder, config, session.settings)
    result = summarize_round(run, round_no)
    report = session.report
    report.rounds.append(result)
    cost = round_cost(result)
    report.eval_cost_usd = add_cost(report.eval_cost_usd, cost)
    session.say(f"round {round_no}: {describe_round(result)} · run {result.run_id}")
    return result, run


def refine(session: Session, folder: Path, result: RoundResult, run: EvalRun,
           round_no: int) -> Path | None:
    """The teacher's revision of `folder` against its failures, validated; None when there is
    nothing to refine or the revision stayed unusable (a warning says which)."""
    suite = load_suite(suite_path(folder), skill_dir=folder)
    failures = failures_text(run.rows, suite.cases)
    if not failures:
        session.say(f"round {round_no}: every case passes with the skill; nothing to refine")
        return None
    current = load_skill(folder)
    fmt = render("skill_format")
    prompt = render("refine", skill=skill_text(folder), summary=describe_round(result),
                    failures=failures, name=current.name, skill_format=fmt)
    session.say(f"round {round_no}: asking {session.teacher.ref} to revise the skill")

    def parse(text: str) -> Path:
        return finish_draft(session, parse_skill_reply(text), session.work / f"round-{round_no}",
                            base=current, version=current.version)

    try:
        return session.teacher.ask_parsed(prompt, f"refine-{round_no}", parse, fmt)
    except GenerationError as exc:
        session.warn(f"round {round_no}: the revision was unusable ({exc.message}); keeping "
                     f"the best version so far ({exc.hint})")
        return None


def improve(session: Session, folder: Path) -> Path:
    """Evaluate the draft and refine it up to `rounds` times; returns the best version."""
    best, run = evaluate_round(session, folder, 0)
    best_folder, best_run = folder, run
    for round_no in range(1, session.opts.rounds + 1):
        if best.reached(session.opts.target):
            session.say(f"target reached: significant lift and ≥ {pct(session.opts.target)} "
                        "with the skill on every student")
            break
        if session.teacher.is_weak:
            session.warn(f"{session.teacher.ref} cannot revise skills: no refinement rounds")
            break
        revised = refine(session, best_folder, best, best_run, round_no)
        if revised is None:
            break
        result, run = evaluate_round(session, revised, round_no)
        if result.score() > best.score():
            best, best_folder, best_run = result, revised, run
    session.report.best_round = best.round
    session.say(f"best: round {best.round} ({describe_round(best)})")
    return best_folder
