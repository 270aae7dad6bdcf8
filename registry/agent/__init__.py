"""Agent mode: a student works as a coding agent in a fresh workspace per sample.

    workspace = seed_workspace(root, case_files, skill=skill)   # `.agents/skills/<name>/` or none
    outcome = await runner.run(AgentTask(prompt, workspace.path, skill=..., budget=Budget()))
    workspace.diff()                                             # what the agent changed

`ToolLoopRunner` is hubskills' own loop (tools: list_files, read_file, write_file, edit_file,
run); commands go through the sandbox.

Every runner, hubskills' own loop and the external harnesses (Claude Code, Codex, OpenCode,
Gemini CLI) alike, returns one `AgentOutcome`, so the evaluation engine grades them the same way.

Each name is imported from its module on first use (PEP 562 `__getattr__`), so a chat run that
needs only `Budget` (registry.agent.outcome) does not load the tool loop, its tools and the
sandbox.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from registry._lazy import lazy_names

if TYPE_CHECKING:
    from registry.agent.bounds import (
        DEFAULT_BOUNDS,
        TreeWalk,
        WorkspaceBounds,
        WorkspaceOverLimit,
        copy_tree,
        remove_tree,
    )
    from registry.agent.loop import AGENT_SYSTEM, CompleteFn, ToolLoopRunner, system_prompt
    from registry.agent.outcome import (
        AgentOutcome,
        AgentRunner,
        AgentTask,
        Budget,
        StopReason,
        TranscriptEntry,
    )
    from registry.agent.tools import TOOLS, WorkspaceTools
    from registry.agent.workspace import SKILLS_FOLDER, FileChange, Workspace, seed_workspace

#: public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "DEFAULT_BOUNDS": "registry.agent.bounds",
    "TreeWalk": "registry.agent.bounds",
    "WorkspaceBounds": "registry.agent.bounds",
    "WorkspaceOverLimit": "registry.agent.bounds",
    "copy_tree": "registry.agent.bounds",
    "remove_tree": "registry.agent.bounds",
    "AGENT_SYSTEM": "registry.agent.loop",
    "CompleteFn": "registry.agent.loop",
    "ToolLoopRunner": "registry.agent.loop",
    "system_prompt": "registry.agent.loop",
    "AgentOutcome": "registry.agent.outcome",
    "AgentRunner": "registry.agent.outcome",
    "AgentTask": "registry.agent.outcome",
    "Budget": "registry.agent.outcome",
    "StopReason": "registry.agent.outcome",
    "TranscriptEntry": "registry.agent.outcome",
    "TOOLS": "registry.agent.tools",
    "WorkspaceTools": "registry.agent.tools",
    "SKILLS_FOLDER": "registry.agent.workspace",
    "FileChange": "registry.agent.workspace",
    "Workspace": "registry.agent.workspace",
    "seed_workspace": "registry.agent.workspace",
}

__all__ = [
    "AGENT_SYSTEM", "DEFAULT_BOUNDS", "SKILLS_FOLDER", "TOOLS", "TreeWalk", "WorkspaceBounds",
    "WorkspaceOverLimit", "copy_tree", "remove_tree", "AgentOutcome", "AgentRunner", "AgentTask",
    "Budget", "CompleteFn", "FileChange", "StopReason", "ToolLoopRunner", "TranscriptEntry",
    "Workspace", "WorkspaceTools", "seed_workspace", "system_prompt",
]


__getattr__, __dir__ = lazy_names("registry.agent", _EXPORTS, globals())


