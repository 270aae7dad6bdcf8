"""What a publisher says about its own skill: `skill-card.md` and `BENCHMARK.md` when a skill
ships them (NVIDIA's catalogue ships both: ownership, licence, limits; with-vs-without-skill
scores per agent).

They are the publisher's claims, never hubskills' measurements: `info` and the Space show them
under that label, apart from the leaderboard's results, and as untrusted text (the Space through
its one sanitiser, the terminal without control characters). Each is read as UTF-8 (bad bytes
replaced) and cut at `MAX_CLAIM_CHARS`; a link or anything but a regular file is not read.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

CLAIM_FILES = ("skill-card.md", "BENCHMARK.md")
MAX_CLAIM_CHARS = 32_000
CLAIMS_LABEL = ("The publisher's own claims, from files the skill ships; not measured or "
                "checked by hubskills (its measured results are the leaderboard's).")
_KEPT = frozenset("\n\t")


def publisher_claims(folder: Path) -> dict[str, str]:
    """`{file name: text}` for each claim file at the top of `folder`, in `CLAIM_FILES` order."""
    found = {}
    for name in CLAIM_FILES:
        path = folder / name
        if path.is_symlink() or not path.is_file():
            continue
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_CLAIM_CHARS * 4 + 1)
        except OSError:
            continue
        text = data.decode("utf-8", errors="replace")
        if len(text) > MAX_CLAIM_CHARS or len(data) > MAX_CLAIM_CHARS * 4:
            text = text[:MAX_CLAIM_CHARS] + f"\n\n… (cut at {MAX_CLAIM_CHARS:,} characters)"
        found[name] = text
    return found


def plain_text(text: str, keep: str = "") -> str:
    """`text` without control, format or private-use characters but newlines, tabs and those
    in `keep` (what a terminal would act on: escape sequences, bidi overrides)."""
    kept = _KEPT | frozenset(keep) if keep else _KEPT
    return "".join(c for c in text if c in kept or unicodedata.category(c)[0] != "C")
