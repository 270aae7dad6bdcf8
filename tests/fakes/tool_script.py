"""Scripted tool-calling answers for hubskills' own agent loop, for either fake LLM server.

    script = AgentScript(skill="zorblax-ports")
    with FakeOpenAIServer(responder=script) as server: ...      # or FakeAnthropicServer

The step is chosen by how many assistant turns the conversation already holds, so the script
is a pure function of the request (a cached rerun replays it exactly). Five turns: write
`config.toml` with an unclosed array, run a check that fails, fix it with `edit_file`, run the
check again, answer. When the system prompt lists the skill, the first turn also reads its
SKILL.md, and every later turn knows what the skill said (the port) when the conversation shows
it: the answer and the file then carry the right port, else a guessed one.
"""

from __future__ import annotations

import json
from typing import Any

CHECK = "python3 -c \"import tomllib; print(tomllib.load(open('config.toml', 'rb'))['port'])\""
GUESSED_PORT, SKILL_PORT = "8080", "4417"
#: The skill the script plays against: it says the port the script looks for.
SKILL_MD = ("---\nname: zorblax-ports\ndescription: \"Ports of the zorblax daemon. Use when "
            f"configuring zorblax.\"\n---\n\nZorblax listens on port {SKILL_PORT}.\n")


def _assistant_turns(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


def _system(body: dict[str, Any]) -> str:
    if "system" in body:  # Anthropic
        system = body["system"]
        return system if isinstance(system, str) else json.dumps(system)
    return " ".join(str(m.get("content")) for m in body.get("messages", [])
                    if m.get("role") == "system")


def _task(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return json.dumps(users[0].get("content")) if users else ""


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


class AgentScript:
    """A responder: `AgentScript(skill=NAME)(body)` is the reply to one request.

    `loop_forever` keeps calling tools (for budget tests); with `trigger`, SKILL.md is read
    only for a task that names it (for activation tests); `requests` counts requests.
    """

    def __init__(self, *, skill: str, loop_forever: bool = False, command: str = CHECK,
                 trigger: str = "") -> None:
        self.skill, self.loop_forever, self.command = skill, loop_forever, command
        self.trigger = trigger  # the skill is read only when the task names this word
        self.requests = 0

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests += 1
        turn = _assistant_turns(body)
        if self.loop_forever:
            return {"text": f"turn {turn}", "tool_calls": [_call("run", command="echo again"),
                                                           _call("list_files")]}
        listed = f".agents/skills/{self.skill}/SKILL.md" in _system(body) \
            and self.trigger.lower() in _task(body).lower()
        port = SKILL_PORT if SKILL_PORT in json.dumps(body.get("messages", [])) \
            else GUESSED_PORT
        bad = f'name = "zorblax"\nport = {port}\nhosts = ["a", "b"\n'
        steps: list[dict[str, Any]] = [
            {"text": "I'll write the config.", "tool_calls": [
                *([_call("read_file", path=f".agents/skills/{self.skill}/SKILL.md")]
                  if listed else []),
                _call("write_file", path="config.toml", content=bad)]},
            {"text": "", "tool_calls": [_call("run", command=self.command)]},
            {"text": "The array is not closed.", "tool_calls": [
                _call("edit_file", path="config.toml", old_string='"b"\n',
                      new_string='"b"]\n')]},
            {"text": "Checking again.", "tool_calls": [_call("run", command=self.command)]},
        ]
        if turn < len(steps):
            return steps[turn]
        return {"text": f"Done: config.toml sets zorblax to port {port} and parses."}
