"""The scripted agent model for the harness tests: it also records each request's headers (to
see which key reached the model) and, like a real model, opens a skill only when it was listed.

    with HarnessServer(root="/workspace", skill=("toml-facts", "Facts. Use when ..."),
                       skill_dir=".claude/skills") as server:
        ...   # a conversation whose request lists the skill starts by reading its SKILL.md
"""

from __future__ import annotations

import json
import threading
from typing import Any

from tests.fakes.agent_server import TOOLSETS, ScriptedAgentServer, _Handler

__all__ = ["HarnessServer"]


class HarnessServer(ScriptedAgentServer):
    """`ScriptedAgentServer` that reads a listed skill first and records request headers."""

    def __init__(self, root: str, script: list[dict[str, Any]] | None = None, *,
                 skill: tuple[str, str] | None = None,
                 skill_dir: str = ".agents/skills") -> None:
        super().__init__(root, script)
        self.skill, self.skill_dir = skill, skill_dir
        self.headers: list[dict[str, str]] = []
        self._listed = threading.local()
        self._httpd.RequestHandlerClass = type("Handler", (_RecordingHandler,), {"fake": self})

    def handle(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        """As the base server; a request that lists the skill (its description) opens it."""
        self._listed.value = self.skill is not None and self.skill[1] in json.dumps(body)
        return super().handle(path, body)

    def step(self, tools: set[str], done: int) -> tuple[str, list[tuple[str, Any]]]:
        """Step 0 reads the listed skill's SKILL.md with the shell; the script follows."""
        if not getattr(self._listed, "value", False) or self.skill is None:
            return super().step(tools, done)
        if done > 0:
            return super().step(tools, done - 1)
        kit = TOOLSETS[next((k for k in TOOLSETS if k in tools), "exec_command")]
        command = f"cat {self.skill_dir}/{self.skill[0]}/SKILL.md"
        return "A skill fits this task; I'll read it first.", [self._shell(kit, command)]

    def all_bodies(self) -> str:
        """Every request body received, as one string (tool results included)."""
        return "\n".join(json.dumps(body) for _, body in self.requests)


class _RecordingHandler(_Handler):
    def _serve(self) -> None:
        with self.fake._lock:
            self.fake.headers.append({k.lower(): v for k, v in self.headers.items()})
        super()._serve()

    do_GET = do_POST = _serve
