"""A stdio MCP server that floods its stdout (run as a script: `python mcp_stdio_flood.py MODE`).

- "at-once": prints without end, no newline, from its first byte;
- "after-initialize": answers `initialize` as a Skills-extension server would, then answers
  the next request (`skills/list`) with bytes without end, no newline.
It never reads a byte of a skill from anywhere: the flood is all it serves.
"""

from __future__ import annotations

import json
import sys

CHUNK = b"x" * 65536


def _flood() -> None:
    out = sys.stdout.buffer
    try:
        while True:
            out.write(CHUNK)
    except (BrokenPipeError, OSError):
        pass


def main(mode: str) -> None:
    if mode == "at-once":
        _flood()
        return
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification
        if message["method"] == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"],
                      "capabilities": {"extensions": {"io.modelcontextprotocol/skills": {}}},
                      "serverInfo": {"name": "flood", "version": "1"}}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                         "result": result}) + "\n")
            sys.stdout.flush()
        else:
            _flood()
            return


if __name__ == "__main__":
    main(sys.argv[1])
