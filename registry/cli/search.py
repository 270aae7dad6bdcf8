"""`hubskills search`: find skills by name or description, or by measured lift."""

from __future__ import annotations

from typing import Any

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli import _store as shared
from registry.results import display
from registry.results.leaderboard import Entry, entries


@click.command("search")
@click.argument("query", required=False, default="")
@click.option("--sort", type=click.Choice(["downloads", "likes", "lift"]), default="downloads",
              show_default=True, help="Order of the results.")
@click.option("--limit", type=click.IntRange(min=0), default=50, show_default=True,
              help="Skills to show at most (0: all).")
@shared.json_option
@shared.registry_option
def search_command(query: str, sort: str, limit: int, as_json: bool,
                   registry: str | None) -> None:
    """Find skills by name or description.

    \b
    Examples:
      hubskills search cuda
      hubskills search --sort lift --json
    """
    _, store = shared.open_store(registry)
    best: dict[str, Entry] = {}
    infos = store.search(query, sort=sort, limit=limit or _ALL,
                         lift_key=(lambda frame: _best_entries(frame, best)) if sort == "lift"
                         else None)
    if as_json:
        out.as_json([{**shared.info_json(i, card=False), **_lift_json(best.get(i.repo))}
                     for i in infos] if sort == "lift" else
                    [shared.info_json(i, card=False) for i in infos])
    elif not infos:
        out.result(f"No skills match '{query}'." if query else "No skills yet.")
    elif sort == "lift":
        out.table(["skill", "version", "lift [95% CI]", "model", "downloads", "description"],
                  [(i.repo, i.version or "-", _lift_text(best.get(i.repo)),
                    best[i.repo].model if i.repo in best else "-", i.downloads,
                    escape(_clip(i.description))) for i in infos],
                  drop=["downloads", "model", "version"])
    else:
        out.table(["skill", "version", "downloads", "likes", "description"],
                  [(i.repo, i.version or "-", i.downloads, i.likes,
                    escape(_clip(i.description))) for i in infos],
                  drop=["likes", "downloads", "version"])


_ALL = 100_000  # `--limit 0`: every skill, as `leaderboard --limit 0` shows every entry


def _best_entries(frame: Any, best: dict[str, Entry]) -> dict[str, float]:
    """The lift key `search --sort lift` orders by (`summary.lift_key`), keeping each skill's
    best ranked entry in `best` so the table and the JSON show the lift it was sorted by."""
    for entry in entries(frame):
        if entry.rank is not None and entry.repo and entry.repo not in best:
            best[entry.repo] = entry  # entries come best first
    return {repo: entry.lift_lo for repo, entry in best.items()}


def _lift_text(entry: Entry | None) -> str:
    return display.lift_interval(entry.lift, entry.lift_lo, entry.lift_hi) if entry else "-"


def _lift_json(entry: Entry | None) -> dict[str, Any]:
    """The best ranked entry's lift (shares, as in the leaderboard's JSON), null when unranked."""
    return {"lift": entry.lift if entry else None, "lift_lo": entry.lift_lo if entry else None,
            "lift_hi": entry.lift_hi if entry else None,
            "lift_model": entry.model if entry else None}


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
