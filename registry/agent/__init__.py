"""Agent mode: a student works as a coding agent in a fresh workspace per sample.

    workspace = seed_workspace(root, case_files, skill=skill)   # `.agents/skills/<name>/` or none
    outcome = await runner.run(AgentTask(prompt, workspace.path, skill=..., budget=Budget()))
    workspace.diff()                                             # what the agent changed

`ToolLoopRunner` is hubskills' own loop (tools: list_files, read_file, write_file, edit_file,
run); commands go through the sandbox.

Every runner, hubskills' own loop and the external harnesses (Claude Code, Codex, OpenCode,
Gemini CLI) alike, returns one `AgentOutcome`, so the evaluation engine grades them the same way.
"""

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

__all__ = [
    "AGENT_SYSTEM", "DEFAULT_BOUNDS", "SKILLS_FOLDER", "TOOLS", "TreeWalk", "WorkspaceBounds",
    "WorkspaceOverLimit", "copy_tree", "remove_tree", "AgentOutcome", "AgentRunner", "AgentTask",
    "Budget", "CompleteFn", "FileChange", "StopReason", "ToolLoopRunner", "TranscriptEntry",
    "Workspace", "WorkspaceTools", "seed_workspace", "system_prompt",
]
