"""`hubskills leaderboard`: skills ranked by how surely they help each model.

Trigger evals (`eval --mode trigger`) have no baseline and no lift: they follow the ranked table
as a table of their own (recall and false triggers with their intervals), never ranked; in
`--json` they are records with ``mode: "trigger"`` and ``rank: null``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from registry.cli import _output as out

if TYPE_CHECKING:
    from registry.evaluation.leaderboard import Entry
    from registry.evaluation.trigger_board import TriggerEntry

VERDICTS = ("helps", "hurts", "no detectable effect", "too few cases", "inconclusive")
DEFAULT_LIMIT = 50
_ALL_SKILLS = 100_000  # tag lookups list every skill once
_LEGEND = ("lift: skill minus baseline pass rate, in points, with a paired t 95% interval over "
           "cases; p: exact sign test on the cases that changed. Ranked by the interval's lower "
           "bound; unranked (-): fewer than 10 cases, uneven errors, a subset or partial run, "
           "or no registry repo. +tokens: the skill's input-token overhead per call; cost: the "
           "skill arm's total.")
_TRIGGER_LEGEND = ("Trigger evals, not ranked (no baseline, no lift): recall on the queries that "
                   "should open the skill, false triggers on those that should not, each with "
                   "its Wilson 95% interval over queries; errors are failed sessions, apart.")


@click.command("leaderboard")
@click.option("--skill", "-s", default=None, help="Skills whose repo or name contains this.")
@click.option("--model", "-m", default=None,
              help="One model (exact reference, else every model containing this).")
@click.option("--tag", default=None, help="Skills whose card has this tag.")
@click.option("--verdict", type=click.Choice(VERDICTS), default=None,
              help="Only entries with this verdict.")
@click.option("--registry", type=click.Choice(["local", "hub"]), default=None,
              help="The embedded local registry (default) or the Hugging Face Hub "
                   "[env: HUBSKILLS_REGISTRY].")
@click.option("--limit", type=click.IntRange(min=0), default=DEFAULT_LIMIT, show_default=True,
              help="Show the top N entries (0: all).")
@click.option("--pending", is_flag=True,
              help="Also show submissions awaiting review (open pull requests on the results "
                   "dataset), marked unreviewed.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def leaderboard_command(skill: str | None, model: str | None, tag: str | None,
                        verdict: str | None, registry: str | None, limit: int,
                        pending: bool, as_json: bool) -> None:
    """Rank skills by measured lift (one row per skill version x model x mode x suite).

    \b
    Examples:
      hubskills leaderboard
      hubskills leaderboard --model sonnet --verdict helps
      hubskills leaderboard --skill cuda --json
      hubskills leaderboard --registry hub --pending   # and unreviewed submissions
    """
    from registry.config import Settings
    from registry.evaluation.leaderboard import entries
    from registry.evaluation.trigger_board import trigger_entries
    from registry.stores import get_store

    store = get_store(Settings.from_env(), registry)
    tags = {info.repo: info.tags for info in store.search("", limit=_ALL_SKILLS)} if tag else None
    filters = dict(skill=skill, model=model, tags=tags, tag=tag, verdict=verdict)
    frame = store.results_frame()
    ranked = entries(frame, **filters)
    # a verdict is a lift's: no trigger entry has one
    triggers = [] if verdict else trigger_entries(frame, skill=skill, model=model, tags=tags,
                                                  tag=tag)
    if pending:
        _with_pending(ranked, store, filters, limit=limit, as_json=as_json)
        return
    render_leaderboard(ranked, limit=limit, as_json=as_json,
                       filtered=any((skill, model, tag, verdict)), triggers=triggers)


def _with_pending(ranked: Sequence[Entry], store: object, filters: dict, *, limit: int,
                  as_json: bool) -> None:
    """The reviewed board, then the unreviewed submissions apart (ranked among themselves)."""
    from registry.evaluation.leaderboard import entries
    from registry.evaluation.leaderboard_table import to_records
    from registry.stores.review import UNREVIEWED, pending_frame

    waiting = entries(pending_frame(store), **filters)  # type: ignore[arg-type]
    if as_json:
        out.as_json([{**r, "review": "merged"} for r in to_records(ranked[:limit or None])]
                    + [{**r, "review": UNREVIEWED} for r in to_records(waiting)])
        return
    render_leaderboard(ranked, limit=limit, filtered=True)
    out.result("")
    if not waiting:
        out.result("No pending submissions: nothing awaits review.")
        return
    out.result(f"Pending submissions ({UNREVIEWED}: open pull requests on the results dataset, "
               "not checked by its owner; ranked among themselves only):")
    render_leaderboard(waiting, limit=0, filtered=True)


def render_leaderboard(ranked: Sequence[Entry], *, limit: int = DEFAULT_LIMIT,
                       as_json: bool = False, filtered: bool = False,
                       triggers: Sequence[TriggerEntry] = ()) -> None:
    """Print the top ``limit`` entries (0: all) as a table, or as JSON records, then the
    first ``limit`` trigger entries as a table of their own.

    With no entries it says why: nothing matched the filters, or nothing was evaluated yet.
    """
    from registry.evaluation import trigger_board
    from registry.evaluation.leaderboard_table import NARROW_DROP, table_rows, to_records

    shown = ranked[:limit] if limit else ranked
    triggers = triggers[:limit] if limit else triggers
    if as_json:
        out.as_json(to_records(shown) + trigger_board.to_records(triggers))
        return
    if shown:
        columns, rows = table_rows(shown)
        out.table(columns, ([escape(cell) for cell in row] for row in rows), drop=NARROW_DROP)
        more = f" Showing {len(shown)} of {len(ranked)} (--limit 0 for all)." \
            if len(shown) < len(ranked) else ""
        out.result(_LEGEND + more)
    elif not triggers:
        out.result("No results match these filters." if filtered
                   else "No evaluation results in this registry yet.")
        out.result("Evaluate a skill and publish its results with: "
                   "hubskills eval SKILL --push")
    if triggers:
        render_triggers(triggers, gap=bool(shown))


def render_triggers(triggers: Sequence[TriggerEntry], *, gap: bool = False) -> None:
    """The trigger entries as their own table, with what their figures mean."""
    from registry.evaluation import trigger_board

    if gap:
        out.result("")
    columns, rows = trigger_board.table_rows(triggers)
    out.table(columns, ([escape(cell) for cell in row] for row in rows),
              title="Trigger evals: does the agent open the skill, listed among others?",
              drop=("date", "should+not × runs", "status", "errors"))
    out.result(_TRIGGER_LEGEND)
