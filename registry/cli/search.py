"""`hubskills search`: find skills by name or description, or by measured lift."""

from __future__ import annotations

import difflib
import re
import shlex
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli import _store as shared
from registry.results import display
from registry.results.leaderboard import Entry
from registry.stores.summary import best_entries

if TYPE_CHECKING:
    from registry.stores.base import SkillInfo


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
    """Find skills by name or description (--json: each with its signature status).

    \b
    Examples:
      hubskills search cuda
      hubskills search --sort lift --json
    """
    settings, store = shared.open_store(registry)
    found: dict[tuple[str, str | None], Entry] = {}
    infos = store.search(query, sort=sort, limit=limit or _ALL,
                         lift_key=(lambda frame, badges: _best_entries(frame, badges, found))
                         if sort == "lift" else None)
    best = {i.repo: found[(i.repo, i.version)] for i in infos if (i.repo, i.version) in found}
    if as_json:
        from registry.cli._revision_facts import facts_of, signature_json

        out.as_json([{**shared.info_json(i, card=False),
                      "signature": signature_json(facts_of(settings, store, i.repo, i.version)),
                      **(_lift_json(best.get(i.repo)) if sort == "lift" else {})}
                     for i in infos])
    elif not infos and query:
        _no_match(store.search(limit=_NEAR), query)
    elif not infos:
        out.result("No skills yet.")
    elif sort == "lift":
        out.table(["skill", "version", "lift [95% CI]", "model", "downloads", "description"],
                  [(i.repo, i.version or "-", _lift_text(best.get(i.repo)),
                    best[i.repo].model if i.repo in best else "-", i.downloads,
                    escape(_clip(i.description))) for i in infos],
                  drop=["downloads", "model", "version"], per_row=_PER_ROW)
    else:
        out.table(["skill", "version", "downloads", "likes", "description"],
                  [(i.repo, i.version or "-", i.downloads, i.likes,
                    escape(_clip(i.description))) for i in infos],
                  drop=["likes", "downloads", "version"], per_row=_PER_ROW)


#: a skill's own figures: the same in every row only by chance (a fresh registry: 1.1.0 and 0
#: downloads everywhere), so a narrow table drops them rather than saying them once above it
_PER_ROW = ("version", "downloads", "likes")
_ALL = 100_000  # `--limit 0`: every skill, as `leaderboard --limit 0` shows every entry
_NEAR = 500  # skills looked through for a near match when none has every word
_CLOSE = 0.75  # difflib's ratio a word must reach to count as a typo of another (pdff, pdf)


def _no_match(every: list[SkillInfo], query: str) -> None:
    """No skill has every word of `query`: show those that nearly do (a typo: `pdff`,
    `kernal`) and the search that finds them; a search with no hit is not an error."""
    close = _closest(every, query)
    if not close:
        out.result(f"No skills match '{escape(query)}', and none comes close.")
        out.hint(f"hubskills search  # with no words: every skill{_count(every)}")
        return
    out.result(f"No skills match '{escape(query)}'. The closest:")
    out.table(["skill", "description"], [(i.repo, escape(_clip(i.description)))
                                         for i, _ in close])
    out.hint(f"hubskills search {shlex.quote(close[0][1])}  # or no words: every skill"
             + _count(every))


def _count(every: list[SkillInfo]) -> str:
    """` (3)`: how many skills there are, when `every` is not cut at `_NEAR`."""
    return f" ({len(every)})" if len(every) < _NEAR else ""


def _closest(infos: list[SkillInfo], query: str, n: int = 3) -> list[tuple[SkillInfo, str]]:
    """Up to `n` skills whose id, name or description words come close to every word of
    `query` (as `search` matches: each word somewhere), best first, each with the query
    its own words spell."""
    scored = []
    for info in infos:
        text = f"{info.repo} {info.name} {info.description}".lower()
        words = set(re.findall(r"[a-z0-9]+", text))
        found = [(1.0, typed) if typed in text else max(
            ((difflib.SequenceMatcher(None, typed, word).ratio(), word) for word in words),
            default=(0.0, typed)) for typed in query.lower().split()]
        worst = min(score for score, _ in found)
        if worst >= _CLOSE:
            scored.append((worst, info, " ".join(word for _, word in found)))
    scored.sort(key=lambda item: -item[0])  # stable: the store's order among equals
    return [(info, spelled) for _, info, spelled in scored[:n]]


def _best_entries(frame: Any, badges: Any, found: dict[tuple[str, str | None], Entry]
                  ) -> dict[tuple[str, str | None], float]:
    """The lift key `search --sort lift` orders by (`summary.lift_key`), keeping each version's
    best ranked entry in `found` so the table and the JSON show the lift it was sorted by."""
    found.update(best_entries(frame, badges))
    return {key: entry.lift_lo for key, entry in found.items()}


def _lift_text(entry: Entry | None) -> str:
    """The listed version's best ranked lift with its interval; `-` when it has none (the
    newest version may have no results yet: an older version's figures are not its own)."""
    if entry is None:
        return "-"
    return display.lift_interval(entry.lift, entry.lift_lo, entry.lift_hi)


def _lift_json(entry: Entry | None) -> dict[str, Any]:
    """The listed version's best ranked entry's lift (shares, as in the leaderboard's JSON),
    null when it has none; `lift_version` is the version it was measured on (the `version`
    listed, or null), as the MCP tool `search_skills` names it."""
    return {"lift": entry.lift if entry else None, "lift_lo": entry.lift_lo if entry else None,
            "lift_hi": entry.lift_hi if entry else None,
            "lift_model": entry.model if entry else None,
            "lift_version": entry.version if entry else None}


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
