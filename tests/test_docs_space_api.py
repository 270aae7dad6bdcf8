"""docs/space.md names each page's API endpoints, and they are the ones each page serves: the
leaderboard's at `Client(SPACE)`, the workbench's at `Client(SPACE + "/work/")` (an endpoint
added to a page and not to the docs, or moved between the pages, fails here)."""

from __future__ import annotations

import re
from pathlib import Path

from registry.config import Settings
from space import build_demo

DOC = Path(__file__).resolve().parent.parent / "docs" / "space.md"


def _documented() -> tuple[set[str], set[str]]:
    """The endpoints the docs give `Client(SPACE)`, then those they give the workbench's."""
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    said = text.split("API clients use each page's URL:", 1)[1].split(". ", 1)[0]
    board, work = said.split('`Client(SPACE + "/work/")`', 1)
    return (set(re.findall(r"`/(\w+\*?)`", board)), set(re.findall(r"`/(\w+\*?)`", work)))


def _served(page) -> set[str]:
    return {str(f.api_name) for f in page.fns.values()
            if f.api_name and str(getattr(f, "api_visibility", "public")) == "public"}


def test_the_docs_name_every_public_endpoint_on_the_page_that_serves_it(tmp_path):
    demo = build_demo(Settings.from_env({"HUBSKILLS_HOME": str(tmp_path)}), on_space=False)
    try:
        board, work = _served(demo), _served(demo.hubskills_workbench)
    finally:
        demo.close()
    documented_board, documented_work = _documented()
    assert "leaderboard" in board and "evaluate" in work
    assert documented_board == board
    prefixes = {name[:-1] for name in documented_work if name.endswith("*")}
    assert {n for n in work if not any(n.startswith(p) for p in prefixes)} == (
        documented_work - {p + "*" for p in prefixes})
    assert all(any(n.startswith(p) for n in work) for p in prefixes)
