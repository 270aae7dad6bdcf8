"""The `search_skills` tool: a task in words -> ranked skills with badges and `skill://` URIs.

Ranking: skills matching more words of the task first, then by the lower bound of the best
ranked lift of the version listed (a measured, verified gain before an unmeasured one; another
version's lift never counts), then by repo id: `search --sort lift`'s order (`base.lift_order`).
Each hit says what `_meta` says (version, verification, lift per model and mode) and the URI of its
`SKILL.md` at a pinned revision, which the agent reads with `resources/read`.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from registry.mcp.catalog import META_KEY, Catalog

SEARCH_TOOL = types.Tool(
    name="search_skills",
    description="Find skills in the hubskills registry for a task: give the task in words; "
                "get ranked skills with their measured lift, verification badge and the "
                "skill:// URI of their SKILL.md to read with resources/read.",
    input_schema={"type": "object", "properties": {
        "query": {"type": "string", "description": "The task, in words."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5}},
        "required": ["query"]},
    annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False))


def search_result(catalog: Catalog, query: str, limit: int) -> dict[str, Any]:
    """The tool's structured result: `{"skills": [...]}`, best first."""
    hits = []
    for info, rev in catalog.search(query, limit):
        meta = catalog.entry(rev)["_meta"][META_KEY]
        hits.append({"uri": rev.uri(), "repo": info.repo, "name": rev.name,
                     "description": info.description, "version": meta.get("version"),
                     "revision": rev.sha, "license": meta.get("license"),
                     "verification": meta.get("verification"), "lift": meta.get("lift", []),
                     # the version `lift` was measured on: always the one listed (its own
                     # figures, none when it has no results), as `search --json` names it
                     "lift_version": meta.get("version") if meta.get("lift") else None,
                     "triggers": meta.get("triggers", []),
                     "scan_findings": meta["scan"]["findings"]})
    return {"skills": hits}
