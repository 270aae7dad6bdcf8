"""A scripted model that does two of the kernel-builder skill's agent cases, right only when it
has read the skill: for the end-to-end agent-mode tests.

    responder = KernelScript()                          # hubskills' own loop, either fake LLM
    with FakeOpenAIServer(responder=responder) as server: ...
    with KernelHarnessServer(root="/workspace") as server: ...   # a real agent CLI (harness)

Cases `torch-binding` (write `torch-ext/torch_binding.cpp`) and `a100-too` (add A100 to
`build.toml` with sed). The model knows the kernel-builder facts only from SKILL.md: once the
conversation holds its text (a tool result), it writes the right file; without it, a subtly
wrong one (the binding without `REGISTER_EXTENSION`, the capability of an L4 instead of an
A100), which the suite's workspace checks catch. The skill arm's model reads SKILL.md only
when the skill is listed, as a real one decides to.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from tests.fakes.harness_server import HarnessServer
from tests.fakes.tool_script import _assistant_turns, _call, _system

__all__ = ["CASE_IDS", "KernelHarnessServer", "KernelScript", "SKILL_NAME"]

SKILL_NAME = "kernel-builder-cuda-kernels"
SKILL_MARKER = "Last line of torch_binding.cpp"  # only in SKILL.md: the skill was read
CASE_IDS = ("torch-binding", "a100-too")
BINDING_TASK = "Write torch-ext/torch_binding.cpp for"  # torch-binding's prompt, not a100-too's
BINDING = """#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("fused_gelu(Tensor! out, Tensor input) -> ()");
  ops.impl("fused_gelu", torch::kCUDA, &fused_gelu);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
"""
WRONG_BINDING = BINDING.replace("\nREGISTER_EXTENSION(TORCH_EXTENSION_NAME)\n", "")
RIGHT_CAPS, WRONG_CAPS = '["8.0", "9.0"]', '["8.9", "9.0"]'  # A100 + H100; L4 + H100


def _plan(prompt: str, knows: bool) -> list[dict[str, Any]]:
    """The script's steps for the case `prompt` asks for (ScriptedAgentServer's format)."""
    if BINDING_TASK in prompt:
        path = "torch-ext/torch_binding.cpp"
        return [{"say": "I'll write the binding.",
                 "write": (path, BINDING if knows else WRONG_BINDING)},
                {"say": "Checking the op schema.", "run": f"grep -n 'ops.def' {path}"},
                {"say": f"Done: {path} registers fused_gelu and its CUDA implementation."}]
    caps = RIGHT_CAPS if knows else WRONG_CAPS
    # sed, not an edit tool: Claude Code edits only files it has read with its own tool
    sed = f"sed -i 's/capabilities = \\[\"9.0\"\\]/capabilities = {caps}/' build.toml"
    return [{"say": "I'll add the A100 capability.", "run": sed},
            {"say": "Checking build.toml.", "run": "grep -n capabilities build.toml"},
            {"say": f"Done: build.toml now builds for capabilities {caps}."}]


def _task(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content = users[0].get("content") if users else ""
    return content if isinstance(content, str) else json.dumps(content)


class KernelScript:
    """A responder for hubskills' own loop: `KernelScript()(body)` is the reply to one request.

    The step is chosen by how many assistant turns the conversation holds (a pure function of
    the request, so a cached rerun replays it). Turn 0 reads SKILL.md when the system prompt
    lists it; the plan's steps follow, one per turn. `requests` counts requests.
    """

    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests += 1
        turn = _assistant_turns(body)
        skill_md = f".agents/skills/{SKILL_NAME}/SKILL.md"
        if skill_md in _system(body) and turn == 0:
            return {"text": "A skill fits this task; I'll read it first.",
                    "tool_calls": [_call("read_file", path=skill_md)]}
        read = SKILL_MARKER in json.dumps(body.get("messages", []))
        steps = _plan(_task(body), read)
        step = steps[min(turn - int(read), len(steps) - 1)]
        calls = []
        if "write" in step:
            calls.append(_call("write_file", path=step["write"][0], content=step["write"][1]))
        if "run" in step:
            calls.append(_call("run", command=step["run"]))
        return {"text": step["say"], **({"tool_calls": calls} if calls else {})}


class KernelHarnessServer(HarnessServer):
    """`HarnessServer` (reads the listed skill first) whose script is the case's plan, right
    only in a conversation that holds SKILL.md's text."""

    def __init__(self, root: str, *, skill: tuple[str, str] | None = None,
                 skill_dir: str = ".claude/skills") -> None:
        self._request = threading.local()
        super().__init__(root, skill=skill, skill_dir=skill_dir)

    @property  # type: ignore[override]
    def script(self) -> list[dict[str, Any]]:
        """The plan for the request this thread is answering."""
        body = getattr(self._request, "body", {})
        text = json.dumps(body)
        return _plan(text, SKILL_MARKER in text)

    @script.setter
    def script(self, value: Any) -> None:
        """The base class sets a fixed script; this server picks one per request."""

    def handle(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        """As the base server, with the request kept for `script`."""
        self._request.body = body
        return super().handle(path, body)
