"""`search --sort lift` and the MCP tool `search_skills` rank by the listed version's lift.

After a new version with no results yet (agent-skill-md 1.1.1, whose 1.1.0 is measured), the
result lists 1.1.1, so it ranks by 1.1.1's lift, which it has none of: after the measured skills,
in the CLI's table and `--json` (`lift` null, `lift_version` null) and in the tool's result,
through the SDK's client over stdio, in the same order. (The CLI ranked it by 1.1.0's lift,
second of three, while the tool put it last: a result showing 1.1.1 sold on 1.1.0's figures.)
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


def test_search_by_lift_ranks_the_listed_version_as_the_mcp_tool_does(tmp_path: Path) -> None:
    home = Path(os.environ["HUBSKILLS_HOME"])
    publish_next(get_store(Settings.from_env()), tmp_path)
    done = hubskills("search", "skill", "--sort", "lift", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)
    order = [r["repo"] for r in records]
    assert len(order) == 3 and order[-1] == REPO, order  # its listed version: no lift yet
    mine = records[-1]
    assert (mine["version"], mine["lift"], mine["lift_version"]) == ("1.1.1", None, None)
    assert all(r["lift"] is not None and r["lift_version"] == r["version"]
               for r in records[:-1])
    assert records[0]["lift_lo"] > records[1]["lift_lo"]
    table = hubskills("search", "skill", "--sort", "lift", cwd=tmp_path, COLUMNS="80")
    rows = [line.split()[0] for line in table.stdout.splitlines()
            if line.startswith("hubskills/")]
    assert rows == order, table.stdout
    assert "(1.1.0)" not in table.stdout  # no older version's figures beside 1.1.1
    hits = anyio.run(_search, home)
    assert list(hits) == order, hits  # the same skills in the same order
    assert hits[REPO]["version"] == "1.1.1" and hits[REPO]["lift"] == []
    assert hits[REPO]["lift_version"] is None
    assert all(h["lift_version"] == h["version"] and h["lift"] for repo, h in hits.items()
               if repo != REPO)


async def _search(home: Path) -> dict[str, dict[str, object]]:
    from tests.test_mcp import _stdio

    async with _stdio(home) as session:
        found = await session.call_tool("search_skills", {"query": "skill", "limit": 10})
    return {hit["repo"]: hit for hit in json.loads(found.content[0].text)["skills"]}
