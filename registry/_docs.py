"""Where a message points a reader: the documentation page's address on the web.

A tool install (`pipx install hubskills`) has no `docs/` folder, so a hint that says
"see docs/pulling.md" leads nowhere; every message and `--help` text names the page by its
address under the project's Source URL (`[project.urls]` in pyproject.toml, which
tests/test_docs_links.py keeps equal to `SOURCE`).
"""

from __future__ import annotations

SOURCE = "https://huggingface.co/spaces/hubskills/hubskills"


def doc(page: str, anchor: str = "") -> str:
    """The address of docs/`page`.md (at `anchor`, a heading's slug), e.g. `doc("mcp")`."""
    return f"{SOURCE}/blob/main/docs/{page}.md" + (f"#{anchor}" if anchor else "")
