"""Agent mode: a student works as a coding agent in a fresh workspace per sample.

    workspace = seed_workspace(root, case_files, skill=skill)   # `.agents/skills/<name>/` or none
    outcome = await runner.run(AgentTask(prompt, workspace.path, skill=..., budget=Budget()))
    workspace.diff()                                             # what the agent changed

Every runner, hubskills' own loop and the external harnesses (Claude Code, Codex, OpenCode,
Gemini CLI) alike, returns one `AgentOutcome`, so the evaluation engine grades them the same way.
"""

from registry.agent.outcome import (
    AgentOutcome,
    AgentRunner,
    AgentTask,
    Budget,
    StopReason,
    TranscriptEntry,
)
from registry.agent.workspace import SKILLS_FOLDER, FileChange, Workspace, seed_workspace

__all__ = [
    "SKILLS_FOLDER", "AgentOutcome", "AgentRunner", "AgentTask", "Budget", "FileChange",
    "StopReason", "TranscriptEntry", "Workspace", "seed_workspace",
]
