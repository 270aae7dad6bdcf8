"""Run by fast-agent's own venv (`.tools/fast-agent`, Python 3.12+), never imported by pytest:
fast-agent lists the Skills-extension registry of the one MCP server in the config it is given
and installs every skill it lists with its own verified installer, into DEST.

    python fast_agent_probe.py CONFIG SERVER DEST  ->  JSON on stdout:
    {"skills": [{"name", "uri", "revision", "files": {path: sha256}}]}
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from pathlib import Path

from fast_agent import FastAgent
from fast_agent.skills.mcp_registry import install_mcp_registry_skill


async def main(config: str, server: str, dest: Path) -> dict:
    fast = FastAgent("hubskills-probe", config_path=config, parse_cli_args=False, quiet=True)
    found: dict = {"skills": []}

    @fast.agent(name="probe", instruction="List skills.", servers=[server], model="passthrough")
    async def probe() -> None:  # pragma: no cover - registered only
        return None

    async with fast.run() as app:
        aggregator = app.probe.aggregator
        for registry in await aggregator.list_mcp_skill_registries():
            for skill in registry.skills:
                folder = await install_mcp_registry_skill(aggregator, skill,
                                                          destination_root=dest)
                files = {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes())
                         .hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}
                found["skills"].append({"name": skill.name, "uri": skill.uri,
                                        "revision": skill.revision, "files": files})
    return found


if __name__ == "__main__":
    result = asyncio.run(main(sys.argv[1], sys.argv[2], Path(sys.argv[3])))
    print("HUBSKILLS-PROBE " + json.dumps(result))
