"""A scripted model for every case of the kernel-builder skill's agent suite, through hubskills'
own agent loop: it writes a case's right files only once it has read the skill.

    script = KernelSuiteScript(prompts={case.id: case.prompt ...}, right=RIGHT)
    with FakeOpenAIServer(responder=script) as server: ...

The case is told by its prompt (the conversation's first user message). Turn 0 reads SKILL.md
when the system prompt lists it (the skill arm), the next turn writes the case's files with
`write_file` (one call a file), the last answers. Without the skill's text in the conversation
(the baseline) it answers at once and leaves the workspace as seeded, so every case's checks
fail there. A pure function of the request: a cached rerun replays it exactly.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.tool_script import _assistant_turns, _call, _system

SKILL_NAME = "kernel-builder-cuda-kernels"
SKILL_MARKER = "Last line of torch_binding.cpp"  # only in SKILL.md: the skill was read


class KernelSuiteScript:
    """A responder: `KernelSuiteScript(prompts=..., right=...)(body)` is one reply.

    `prompts` maps a case id to its prompt, `right` a case id to the files (path -> text) a
    right answer leaves; `requests` counts requests.
    """

    def __init__(self, *, prompts: dict[str, str], right: dict[str, dict[str, str]]) -> None:
        self.prompts, self.right = prompts, right
        self.requests = 0

    def _case(self, body: dict[str, Any]) -> str:
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        task = json.dumps(users[0].get("content")) if users else ""
        return next(case for case, prompt in self.prompts.items()
                    if json.dumps(prompt)[1:-1] in task)

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests += 1
        turn = _assistant_turns(body)
        if f".agents/skills/{SKILL_NAME}/SKILL.md" in _system(body) and turn == 0:
            return {"text": "A skill fits this task; I'll read it first.", "tool_calls": [
                _call("read_file", path=f".agents/skills/{SKILL_NAME}/SKILL.md")]}
        if SKILL_MARKER not in json.dumps(body.get("messages", [])):
            return {"text": "Done."}  # the baseline: nothing written
        files = self.right[self._case(body)]
        if turn == 1:
            return {"text": "Writing the files.", "tool_calls": [
                _call("write_file", path=path, content=text) for path, text in files.items()]}
        return {"text": f"Done: wrote {', '.join(files)}."}
