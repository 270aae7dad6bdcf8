"""How figures are written, the same on every screen: shares, lift points, p-values, dollars,
and ids too long for their room (wrapped at their separators, or cut in the middle).

The one formatter of percentages and the one of money for the CLI, the Space, the leaderboard
and the cards. A cost is "unknown" when a price is unknown (never a fake $0), and "$0 (local)"
only for a model that runs on your machine (`pricing.is_free`).
"""

from __future__ import annotations

import functools
import math
import re

from registry.providers.pricing import is_free


@functools.lru_cache(maxsize=1 << 16)  # a leaderboard repeats few values
def pct(share: float | None) -> str:
    """A share as a whole percentage ("33%"), "-" when there is none."""
    return "-" if share is None else f"{share * 100:.0f}%"


@functools.lru_cache(maxsize=1 << 16)  # a leaderboard repeats few values
def points(share: float) -> str:
    """A lift in whole percentage points with its sign ("+26", "-4", "+0")."""
    text = f"{share * 100:+.0f}"
    return "+0" if text == "-0" else text


@functools.lru_cache(maxsize=1 << 16)  # a leaderboard repeats few values
def lift_interval(lift: float, lo: float, hi: float) -> str:
    """A lift and its interval in points: "+26 [+11, +41]"."""
    return f"{points(lift)} [{points(lo)}, {points(hi)}]"


@functools.lru_cache(maxsize=1 << 16)  # a leaderboard repeats few values
def p_value(p: float) -> str:
    """An exact-test p-value with three significant digits, or "<0.001" below that (the exact
    value stays in the run's results)."""
    return "<0.001" if p < 0.001 else f"{p:.3g}"


def p_equals(p: float) -> str:
    """A p-value in a sentence: "p = 0.0078", "p < 0.001" (never "p = <0.001")."""
    shown = p_value(p)
    return f"p {shown[0]} {shown[1:]}" if shown.startswith("<") else f"p = {shown}"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """A count with its noun, plural unless one: "1 case", "3 cases"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def detectable(lift: float) -> str:
    """The smallest lift a suite detects, as a sentence fragment."""
    if math.isinf(lift):
        return "this suite is too small to detect any lift"
    return f"this suite can detect lifts of about {lift * 100:.0f} points or more"


def usd(value: float | None, model: str | None = None) -> str:
    """Dollars: "unknown" for an unknown price, "$0 (local)" for a free local model, else
    up to six decimals below a cent, four below a dollar and two above."""
    if value is None or value != value:
        return "unknown"
    if value == 0:
        return "$0 (local)" if model and is_free(model) else "$0"
    if value < 0.000001:  # a real cost, however small, never reads as "$0"
        return "<$0.000001"
    if value < 0.01:
        return "$" + f"{value:.6f}".rstrip("0").rstrip(".")
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def mode(mode_name: str, placement: str | None) -> str:
    """The arm's mode with the skill's placement: "inline (user)", "tool"."""
    return f"{mode_name} ({placement})" if mode_name == "inline" and placement else mode_name


#: Where an id may break across lines: after `/` and `-`, before `@` (`ns/name@1.2.0`); after
#: `.` too (`qwen2.` `5-coder`) only where a piece is wider than its room without it.
_ID_BREAKS = (re.compile(r"(?<=[/-])(?=.)|(?<=.)(?=@)"), re.compile(r"(?<=[/.-])(?=.)|(?<=.)(?=@)"))


def wrap_id(ident: str, width: int) -> list[str] | None:
    """``ident`` in lines of at most ``width`` characters, broken only at its separators (after
    `/` or `-`, before `@`, after `.` where it must), each line as full as it can be; None when
    a piece between two separators is wider than ``width`` (then `middle_ellipsis` it)."""
    for breaks in _ID_BREAKS:
        pieces = breaks.split(ident)
        if max(map(len, pieces)) > width:
            continue
        lines: list[str] = []
        for piece in pieces:
            if lines and len(lines[-1]) + len(piece) <= width:
                lines[-1] += piece
            else:
                lines.append(piece)
        return lines
    return None


def middle_ellipsis(ident: str, width: int) -> str:
    """``ident`` cut to ``width`` characters in the middle (`hubskills/kern…hopper@1.0.0`): its
    namespace and its end (name, version) stay readable; whole when it fits."""
    if len(ident) <= width:
        return ident
    keep = max(width - 1, 0)  # the characters around the ellipsis, the first half the larger
    head, tail = (keep + 1) // 2, keep // 2
    return ident[:head] + "…" + (ident[-tail:] if tail else "")


def case_order(case_id: str | None) -> tuple:
    """Sort key for case ids in natural order: `build-2` before `build-10`."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"(\d+)", case_id or "") if part)


#: Stands in for the space after a number while a line wraps (a character no wrapper breaks
#: at, one cell wide), so a count stays with its noun: `· 0` ended a line, `refinement rounds`
#: began the next. `unglued` puts the space back.
GLUE = "\ue000"
_COUNT_SPACE = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*%?) (?=[^\W\d_])")


def glued(text: str) -> str:
    """`text` with each number joined to the word after it by `GLUE` (same length)."""
    return _COUNT_SPACE.sub(lambda found: found.group(1) + GLUE, text)


def unglued(text: str) -> str:
    """`text` with its `GLUE`s spaces again."""
    return text.replace(GLUE, " ")
