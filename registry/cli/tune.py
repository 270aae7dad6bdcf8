"""`hubskills tune`: rewrite a skill's description from trigger-eval misses, kept on held-out
evidence only."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._skill_ref import no_such_folder
from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.results import display


@click.command("tune")
@click.argument("skill", type=click.Path(path_type=Path, file_okay=False))
@click.option("--model", "-m", required=True, help="The model whose triggering is measured.")
@click.option("--teacher", default=None, help="The model that rewrites the description "
                                              "(default: as `generate` picks its teacher).")
@click.option("--rounds", type=click.IntRange(min=1, max=20), default=5, show_default=True)
@click.option("--runs", type=click.IntRange(min=1), default=3, show_default=True,
              help="Sessions per query and candidate.")
@click.option("--max-cost", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Never spend past this many USD (teacher included): each call reserves "
                   "its worst case first, and the rounds stop when none fits.")
@click.option("--max-calls", type=click.IntRange(min=1), default=None, metavar="N",
              help="At most N model calls (teacher included): what --max-cost needs for a "
                   "model without a known price.")
@click.option("--distractors", type=click.Path(path_type=Path, file_okay=False), default=None,
              metavar="FOLDER", help="List these installed skills (default: the bundled set).")
@click.option("--base-url", default=None, help="Server for local/<model> references.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None)
@click.option("--design", type=click.Choice(["adaptive", "fixed"]), default=None,
              help="How each candidate's trigger eval spends its sessions: adaptive (rounds "
                   "that stop once the figures are settled) or fixed (every query x run). "
                   "Default: adaptive for 10 queries or more with --runs 3 or more.")
@click.option("--write", is_flag=True, help="Put the best description in SKILL.md (only "
                                            "that value changes).")
@click.option("--json", "as_json", is_flag=True, help="Every round as JSON.")
def tune_command(skill: Path, model: str, teacher: str | None, rounds: int, runs: int,
                 max_cost: float | None, max_calls: int | None, distractors: Path | None,
                 base_url: str | None,
                 concurrency: int | None, design: str | None, write: bool,
                 as_json: bool) -> None:
    """Rewrite a skill's description so agents open it when they should.

    Trigger evals (evals/triggers.json) score each candidate; the teacher sees only the train
    split's misses, and the best is chosen by its holdout score's lower bound.

    \b
    Example:
      hubskills tune skills/my-skill -m sonnet --teacher opus --max-cost 2
      hubskills tune skills/my-skill -m openai/gpt-5-mini --write
    """
    from registry.generate.teacher import default_teacher
    from registry.generate.tune import tune_description, write_description

    if not skill.is_dir():  # the README's example tunes a pulled skill: say to pull it
        raise no_such_folder(str(skill), "pull")
    settings = Settings.from_env()
    config = EvalConfig(models=[model], mode="trigger", runs=runs, max_cost=max_cost,
                        max_calls=max_calls, base_url=base_url, concurrency=concurrency,
                        distractors=distractors, design=design or "auto")
    teacher = teacher or default_teacher(settings)[0]
    result = tune_description(skill, config, settings, teacher=teacher, rounds=rounds,
                              say=out.info)
    if write and result.best.round:
        write_description(skill, result.best.description)
    if as_json:
        out.as_json({**result.to_dict(), "written": write and result.best.round > 0})
        return
    _render(result, write)


def _render(result, write: bool) -> None:
    from registry.cli._trigger_eval import rate_text

    def figures(scores) -> tuple[str, str]:
        if scores is None:
            return "-", "-"
        return rate_text(scores.recall), rate_text(scores.false_triggers)

    out.table(["round", "description", "train recall", "train false", "holdout recall",
               "holdout false", "holdout accuracy", "cost"],
              [(str(c.round) + (" ★" if c is result.best else ""),
                escape(c.refused and f"refused: {c.refused}" or c.description[:70]),
                *figures(c.train), *figures(c.holdout),
                rate_text(c.holdout.accuracy) if c.holdout else "-",
                display.usd(c.cost_usd)) for c in result.candidates],
              title="tune: every round (★ the best by its holdout accuracy's lower bound)")
    spent = f"spent ${result.spent_usd:.4f}" + (
        "" if result.estimate_usd is None else f" of an estimated ${result.estimate_usd:.4f}")
    out.result(f"  {spent}" + (f"; stopped: {escape(result.stopped_by or 'at the cap')}"
                               if result.status == "stopped" else ""))
    out.result(f"  Report and sessions of tune run {result.run_id}: {result.saved}")
    if result.best.round == 0:
        out.result("  The original description scored best on the holdout queries: nothing to "
                   "change.")
        return
    verdict = result.comparison.verdict if result.comparison else "-"
    out.result(f"  Best: round {result.best.round} ({escape(verdict)}). " + (
        "It is better than the original on the holdout queries." if result.significant else
        "It is NOT significantly better than the original on the holdout queries."))
    out.result(f"  {escape(result.best.description)}")
    out.result("  SKILL.md's description was rewritten (nothing else changed)." if write else
               "  Nothing was written: --write puts it in SKILL.md.")
