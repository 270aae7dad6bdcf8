"""Fitting an account into the teacher's character budget, least valuable parts cut first.

The sections are filled in order of value (goal, files, commands, failures, denials,
decisions, final answer); an item that no longer fits is trimmed when a useful piece of it
still fits, else left out. No single item takes more than its share (the goal a quarter of
the budget, a file half of it), so one huge file cannot starve the rest. The account ends with
a line saying what was cut, how many repeated passages were collapsed, and the
reader's notes (a trace cut mid-line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from registry.generate.traces.account import TraceAccount

DEFAULT_BUDGET = 24_000
_MIN_PIECE = 160
  # a trimmed piece shorter than this teaches nothing
_SHARE = {"goal": 4, "files": 2}  # an item of these takes at most budget // share


@dataclass
class Fitted:
    """The rendered account and what was cut from it."""

    text: str
    cuts: list[str] = field(default_factory=list)


def fit(account: TraceAccount, budget: int) -> Fitted:
    """The account as markdown within `budget` characters (see the module docstring)."""
    reserve = 0
    for _ in range(4):  # make room for the closing note, which grows with what was cut
        fitted = _fill(account, budget, reserve)
        note = _note(account, budget, fitted.cuts)
        if not note or len(note) + 4 <= reserve:
            break
        reserve = len(note) + 4
    return fitted


def _fill(account: TraceAccount, budget: int, reserve: int) -> Fitted:
    head = f"# Account of an agent session ({account.format})"
    used, parts, cuts = len(head), [head], []
    for key, title, items in account.sections():
        heading = f"## {title}\n\n"
        kept: list[str] = []
        dropped: list[str] = []
        trimmed: list[str] = []
        for label, item in items:
            extra = 2 + (len(heading) if not kept else 2)
            room = budget - reserve - used - extra
            limit = min(room, budget // _SHARE.get(key, 1))
            piece = item if len(item) <= limit else _trim(key, item, limit)
            if piece is None:
                dropped.append(label)
                continue
            if piece is not item:
                trimmed.append(label)
            kept.append(piece)
            used += len(piece) + extra
        if kept:
            parts.append(heading + "\n\n".join(kept))
        cuts += _describe(items, dropped, trimmed, key)
    text = "\n\n".join(parts)
    note = _note(account, budget, cuts)
    if note:
        text += "\n\n" + _cut(note, budget - len(text) - 3)
    return Fitted(text[: budget - 1] + "\n", cuts)


def _note(account: TraceAccount, budget: int, cuts: list[str]) -> str:
    notes = list(account.notes)
    if cuts:
        notes.append(f"Cut to fit {budget} characters: {'; '.join(cuts)}.")
    if account.collapsed:
        notes.append(f"{account.collapsed} repeated passage(s) collapsed.")
    return "_" + " ".join(notes) + "_" if notes else ""


def _trim(key: str, item: str, limit: int) -> str | None:
    """A piece of `item` within `limit` characters that says it was trimmed, or None."""
    if limit < _MIN_PIECE:
        return None
    if key == "files":  # keep the fence closed and the path readable
        head, _, rest = item.partition("\n```\n")
        body, _, tail = rest.rpartition("\n```")
        room = limit - len(head) - len(tail) - 60
        if room < _MIN_PIECE // 2:
            return None
        return f"{head}\n```\n{body[:room]}\n[... {len(body) - room} characters cut]\n```{tail}"
    cut = len(item) - limit + 40  # keep the head (what failed) and the tail (what fixed it)
    kept = (limit - 40) * 3 // 5
    return f"{item[:kept]}\n[... {cut} characters cut ...]\n{item[kept + cut:]}"


def _describe(items: list[tuple[str, str]], dropped: list[str], trimmed: list[str],
              key: str) -> list[str]:
    found = [f"{name} trimmed" for name in trimmed]
    if dropped and key == "files":
        names = ", ".join(dropped[:5]) + (f" and {len(dropped) - 5} more" if len(dropped) > 5
                                          else "")
        found.append(f"{len(dropped)} of {len(items)} files left out ({names})")
    elif dropped:
        found.append(dropped[0] if len(items) == 1
                     else f"{len(dropped)} of {len(items)} {dropped[0]}")
    return found


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 2)] + "…_"
