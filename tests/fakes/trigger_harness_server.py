"""The trigger model (`trigger_model.choose`) behind the agent CLIs' wire formats: for
`eval --mode trigger --harness NAME` against the real CLIs.

    with TriggerHarnessServer(queries, skill_dir=".claude/skills") as server: ...

A conversation whose prompt is one of `queries` reads, with the CLI's shell tool, the SKILL.md
of the skill listed in the request (as `- name: description` lines, Claude Code's listing) that
shares the most words with the query (at least `threshold`), then answers; with no such skill
it answers at once. A query containing `explode` gets an HTTP 400 (a failed session).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fakes.agent_server import TOOLSETS, _Handler
from tests.fakes.harness_server import HarnessServer
from tests.fakes.trigger_model import choose

_LISTED = re.compile(r"^- ([a-z0-9-]+): (.+?)\s*$", re.M)
ERROR = "error"  # a content type `handle` returns for an HTTP 400


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


class TriggerHarnessServer(HarnessServer):
    """`HarnessServer` whose model opens the listed skill closest to the prompt, or none."""

    def __init__(self, queries: list[str], *, skill_dir: str = ".claude/skills",
                 threshold: int = 2) -> None:
        super().__init__("/workspace", skill_dir=skill_dir)
        self.queries, self.threshold = queries, threshold
        self._httpd.RequestHandlerClass = type("Handler", (_StatusHandler,), {"fake": self})

    def handle(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        """Pick the skill for this conversation (thread-local), then answer as the base does."""
        text = "\n".join(_strings(body))
        query = next((q for q in self.queries if q in text), None)
        if query is not None and "explode" in query and path.endswith("/v1/messages"):
            body_bytes = json.dumps({"type": "error", "error": {
                "type": "invalid_request_error", "message": "exploded"}}).encode()
            return ERROR, body_bytes
        listed = [(n, d, n) for n, d in _LISTED.findall(text)]
        self._listed.value = choose(query, listed, self.threshold) if query else None
        return super(HarnessServer, self).handle(path, body)

    def step(self, tools: set[str], done: int) -> tuple[str, list[tuple[str, Any]]]:
        """Read the chosen skill's SKILL.md first, then answer; or answer at once."""
        chosen = getattr(self._listed, "value", None)
        if chosen is None or done > 0:
            return "I can answer that directly.", []
        kit = TOOLSETS[next((k for k in TOOLSETS if k in tools), "exec_command")]
        command = f"cat {self.skill_dir}/{chosen}/SKILL.md"
        return "A skill fits; I'll read it.", [self._shell(kit, command)]


class _StatusHandler(_Handler):
    """The base handler, answering HTTP 400 when `handle` says `ERROR`."""

    @staticmethod
    def _status(kind: str) -> tuple[int, str]:
        return (400, "application/json") if kind == ERROR else (200, kind)
