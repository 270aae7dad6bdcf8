"""`search --sort lift` says which version its lift was measured on.

After a new version with no results yet (agent-skill-md 1.1.1), the row lists 1.1.1 and the
lift of 1.1.0, the best ranked entry the leaderboard has: the table says `(1.1.0)` beside the
lift and `--json` names it in `lift_version`. The MCP tool `search_skills` names the same field
(the listed version's own figures, so null for 1.1.1), through the SDK's client over stdio.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from registry.config import Settings
from registry.registries import get_store
from tests.cli_process import hubskills
from tests.test_mcp_pins import REPO, publish_next

pytest.importorskip("mcp")
pytestmark = pytest.mark.timeout(300)


def test_search_by_lift_names_the_version_the_lift_is_of(tmp_path: Path) -> None:
    home = Path(os.environ["HUBSKILLS_HOME"])
    publish_next(get_store(Settings.from_env()), tmp_path)
    table = hubskills("search", "--sort", "lift", cwd=tmp_path, COLUMNS="80")
    assert table.returncode == 0, table.stderr
    row = next(line for line in table.stdout.splitlines() if line.startswith(REPO + " "))
    assert "(1.1.0)" in row, table.stdout
    others = [line for line in table.stdout.splitlines()
              if line.startswith("hubskills/") and not line.startswith(REPO + " ")]
    assert others and not any("(1.1.0)" in line for line in others)  # their own version's
    done = hubskills("search", "--sort", "lift", "--json", cwd=tmp_path)
    records = {r["repo"]: r for r in json.loads(done.stdout)}
    assert records[REPO]["version"] == "1.1.1" and records[REPO]["lift_version"] == "1.1.0"
    assert all(r["lift_version"] == r["version"] for repo, r in records.items() if repo != REPO)
    hits = anyio.run(_search, home)
    assert len(hits) == 3, hits
    assert hits[REPO]["version"] == "1.1.1" and hits[REPO]["lift"] == []
    assert hits[REPO]["lift_version"] is None
    assert all(h["lift_version"] == h["version"] and h["lift"] for repo, h in hits.items()
               if repo != REPO)


async def _search(home: Path) -> dict[str, dict[str, object]]:
    from tests.test_mcp import _stdio

    async with _stdio(home) as session:
        found = await session.call_tool("search_skills", {"query": "skill", "limit": 10})
    return {hit["repo"]: hit for hit in json.loads(found.content[0].text)["skills"]}
