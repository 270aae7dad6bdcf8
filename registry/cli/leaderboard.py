"""`hubskills leaderboard`: skills ranked by how surely they help each model.

Trigger evals (`eval --mode trigger`) have no baseline and no lift: they follow the ranked table
as a table of their own (recall and false triggers with their intervals), never ranked by
figure; in `--json` they are records with ``mode: "trigger"`` and ``rank: null``. They carry
their run's badge too, and are shown by default only once replayed, as the others.

Each entry carries its run's verification badge (replayed, spot-checked, mismatch, unverified,
from the records in the results dataset); only replayed or better entries are shown and ranked
unless `--include-unverified` asks for the rest (unranked, with the reason).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._trigger_table import render_triggers

if TYPE_CHECKING:
    from registry.results.leaderboard import Entry
    from registry.results.trigger_board import TriggerEntry
    from registry.stores import SkillStore

VERDICTS = ("helps", "hurts", "no detectable effect", "too few cases", "inconclusive")
DEFAULT_LIMIT = 50
_ALL_SKILLS = 100_000  # tag lookups list every skill once
_LEGEND = ("lift: skill minus baseline pass rate, in points, with a paired score 95% interval "
           "over cases; p: exact sign test on the cases that changed. Ranked by the interval's "
           "lower bound, each entry's rank its place on the whole board, whatever the filter; "
           "unranked (-): fewer than 10 cases, errors that could decide the verdict, "
           "a subset or partial run, "
           "or no registry repo; an entry ranks only once its run is replayed (verified: replayed "
           "proves the grading and the arithmetic, spot-checked the outputs too).")
#: What the columns the table may leave out at 80 columns mean: said only where shown (a walk
#: read a legend of `+tokens` and `cost` under a table without them).
_COLUMN_LEGEND = (("+tokens", "+tokens: the skill's input-token overhead per call"),
                  ("cost", "cost: the skill arm's total"))


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
@click.option("--include-unverified", is_flag=True,
              help="Also show entries whose run is not replayed (unverified or mismatch), "
                   "unranked, with the reason.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def leaderboard_command(skill: str | None, model: str | None, tag: str | None,
                        verdict: str | None, registry: str | None, limit: int,
                        pending: bool, include_unverified: bool, as_json: bool) -> None:
    """Rank skills by measured lift (one row per skill version x model x mode x suite).

    Filters keep each row's rank on the whole board, as the Space's pages show it.

    \b
    Examples:
      hubskills leaderboard
      hubskills leaderboard --model sonnet --verdict helps
      hubskills leaderboard --skill cuda --json
      hubskills leaderboard --include-unverified      # not replayed yet: unranked
      hubskills leaderboard --registry hub --pending  # and unreviewed ones
    """
    from registry.config import Settings
    from registry.registries import get_store
    from registry.stores.verifications import badges

    store = get_store(Settings.from_env(), registry)
    tags = {info.repo: info.tags for info in store.search("", limit=_ALL_SKILLS)} if tag else None
    filters = dict(skill=skill, model=model, tags=tags, tag=tag, verdict=verdict)
    frame, found = store.results_frame(), badges(store)
    ranked, hidden, triggers = board_of(frame, filters, found, include_unverified)
    if pending:
        _with_pending(ranked, triggers, store, filters, limit=limit, as_json=as_json)
        return
    render_leaderboard(ranked, limit=limit, as_json=as_json,
                       filtered=any((skill, model, tag, verdict)), triggers=triggers,
                       hidden=hidden)
    if (model or skill) and not (ranked or triggers or hidden or as_json):
        _nothing_contains(model, skill, frame, found)


def _nothing_contains(model: str | None, skill: str | None, frame: object,
                      found: dict) -> None:
    """Where no model (skill) on the board contains `--model` (`--skill`), say which ones it
    has and the nearest (`--model gpt` on a board of one embedded model, or `--skill
    kernel-buildr`, said only that nothing matched)."""
    import difflib

    every, _, triggers = board_of(frame, dict(skill=None, model=None, tags=None, tag=None,
                                              verdict=None), found, True)
    for option, wanted, names in (
            ("model", model, {e.model for e in every} | {t.model for t in triggers}),
            ("skill", skill, {e.repo or e.skill for e in every})):
        if not wanted or not names or any(wanted.lower() in n.lower() for n in names):
            continue  # not asked for, or another filter emptied it
        listed = sorted(names)
        shown = ", ".join(listed[:10]) + (f" and {len(listed) - 10} more"
                                         if len(listed) > 10 else "")
        out.result(f"No {option} on this board contains {wanted!r}; its {option}s: {shown}")
        nearest = difflib.get_close_matches(wanted, listed, n=1, cutoff=0) or listed
        out.command("Nearest:", f"hubskills leaderboard --{option} {nearest[0]}")


def board_of(frame: object, filters: dict, found: dict,
             include_unverified: bool) -> tuple[list[Entry], int, list[TriggerEntry]]:
    """The entries of ``frame`` with their badges (those not replayed or better left out
    unless ``include_unverified``), how many were left out, and the trigger entries."""
    from registry.results.leaderboard import entries
    from registry.results.leaderboard_badges import is_shown
    from registry.results.trigger_board import trigger_entries

    everything = entries(frame, **filters, badges=found)
    ranked = everything if include_unverified else [e for e in everything if is_shown(e)]
    # a verdict is a lift's: no trigger entry has one
    listed = [] if filters["verdict"] else trigger_entries(
        frame, **{k: v for k, v in filters.items() if k != "verdict"},
        badges=found)
    triggers = listed if include_unverified else [e for e in listed if is_shown(e)]
    return ranked, len(everything) - len(ranked) + len(listed) - len(triggers), triggers


def _with_pending(ranked: Sequence[Entry], triggers: Sequence[TriggerEntry], store: SkillStore,
                  filters: dict, *, limit: int, as_json: bool) -> None:
    """The reviewed board, then the unreviewed submissions apart (ranked among themselves,
    each with the badge its replay earned, trigger evals included)."""
    from registry.results import trigger_board
    from registry.results.leaderboard_table import to_records
    from registry.stores.verifications import pending_badges
    from registry.verify.pending import UNREVIEWED, pending_frame

    frame = pending_frame(store)
    waiting, _, waiting_triggers = board_of(frame, filters, pending_badges(store), True)
    if as_json:
        merged = to_records(ranked[:limit or None]) + trigger_board.to_records(triggers)
        out.as_json([{**r, "review": "merged"} for r in merged]
                    + [{**r, "review": UNREVIEWED} for r in
                       to_records(waiting) + trigger_board.to_records(waiting_triggers)])
        return
    render_leaderboard(ranked, limit=limit, filtered=True, triggers=triggers)
    out.result("")
    if not waiting and not waiting_triggers:
        out.result("No pending submissions: nothing awaits review.")
        return
    out.result(f"Pending submissions ({UNREVIEWED}: open pull requests on the results dataset, "
               "not merged by its owner; ranked among themselves only, each with the badge its "
               "replay earned):")
    render_leaderboard(waiting, limit=0, filtered=True, triggers=waiting_triggers)


def render_leaderboard(ranked: Sequence[Entry], *, limit: int = DEFAULT_LIMIT,
                       as_json: bool = False, filtered: bool = False,
                       triggers: Sequence[TriggerEntry] = (), hidden: int = 0) -> None:
    """Print the top ``limit`` entries (0: all) as a table, or as JSON records, then the
    first ``limit`` trigger entries as a table of their own.

    With no entries it says why: nothing matched the filters, nothing was evaluated yet, or
    the ``hidden`` entries (not replayed or better) were left out.
    """
    from registry.results import trigger_board
    from registry.results.leaderboard_table import NARROW_DROP, table_rows, to_records

    shown = ranked[:limit] if limit else ranked
    triggers = triggers[:limit] if limit else triggers
    if as_json:
        out.as_json(to_records(shown) + trigger_board.to_records(triggers))
        return
    if shown:
        columns, rows = table_rows(shown)
        left = out.table(columns, ([escape(cell) for cell in row] for row in rows),
                         drop=NARROW_DROP)
        more = f" Showing {len(shown)} of {len(ranked)} (--limit 0 for all)." \
            if len(shown) < len(ranked) else ""
        also = "; ".join(text for column, text in _COLUMN_LEGEND if column not in left)
        out.result(_LEGEND + (f" {also}." if also else "") + more)
    if hidden:
        out.result(f"{hidden} entr{'y' if hidden == 1 else 'ies'} not replayed or better "
                   "left out: --include-unverified shows them; `hubskills verify NS/NAME --run "
                   "RUN_ID` replays a run.")
    elif not shown and not triggers:
        out.result("No results match these filters." if filtered
                   else "No evaluation results in this registry yet.")
        out.result("Evaluate a skill and publish its results with: "
                   "hubskills eval SKILL --push")
    if triggers:
        render_triggers(triggers, gap=bool(shown))
