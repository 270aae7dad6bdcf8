"""The two arms of an evaluation, built from one neutral prompt so only the skill differs.

`inline` mode puts the whole SKILL.md in the context: in the user message (`placement="user"`,
the default: agents such as Claude Code load an invoked skill into the conversation, and small
models gain far more this way) or in the system prompt (`placement="system"`, upskill's way).
`tool` mode lists the skill's name and description and offers `load_skill` and
`read_skill_file`; whether and when the model loads the skill is recorded.

Nothing from the current directory reaches either arm: the only inputs are the skill folder,
the case's prompt and the case's own files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from registry.format.skill import Skill
from registry.format.suite import Case, InputFile
from registry.providers.base import Message, ToolCall, ToolSpec

Mode = Literal["inline", "tool", "agent"]
Placement = Literal["user", "system"]

NEUTRAL_SYSTEM = (
    "You are a helpful coding assistant. Answer the user's request accurately and concisely. "
    "When you write a file, put it in a fenced code block and write its file name on the line "
    "just before the block."
)
MAX_TOOL_TURNS = 4
MAX_SKILL_FILE_CHARS = 20_000

LOAD_SKILL = ToolSpec(
    name="load_skill",
    description="Load a skill's full instructions (SKILL.md). Call it before answering when "
    "the skill's description matches the task.",
    parameters={"type": "object", "properties": {"name": {"type": "string"}},
                "required": ["name"]},
)
READ_SKILL_FILE = ToolSpec(
    name="read_skill_file",
    description="Read a file bundled with a loaded skill, e.g. references/api.md.",
    parameters={"type": "object",
                "properties": {"name": {"type": "string"}, "path": {"type": "string"}},
                "required": ["name", "path"]},
)


def user_content(case: Case) -> str:
    """The case's prompt with its input files, identical in both arms; a binary file is
    described (name, size, type), never pasted as text."""
    if not case.files:
        return case.prompt
    blocks = [_file_block(name, file) for name, file in sorted(case.files.items())]
    return "Files:\n\n" + "\n\n".join(blocks) + "\n\n" + case.prompt


def _file_block(name: str, file: str | InputFile) -> str:
    if isinstance(file, InputFile) and file.text() is None:
        return (f"{name} (attached binary file: {len(file.data):,} bytes, {file.media_type()}; "
                "its content is not shown)")
    text = file if isinstance(file, str) else file.text()
    return f"{name}\n```\n{text}\n```"


def skill_block(skill: Skill) -> str:
    """The skill as the model sees it inline: its SKILL.md text."""
    return f"<skill name=\"{skill.name}\">\n{skill.render().strip()}\n</skill>"


def skills_block(skill: Skill, dependencies: Sequence[Skill] = ()) -> str:
    """The skill inline, then each skill it requires (`metadata.requires`) in its own block."""
    return skill_block(skill) + required_text(skill, dependencies)


def required_text(skill: Skill, dependencies: Sequence[Skill]) -> str:
    """What follows the skill's own text when it requires others: each SKILL.md, delimited."""
    if not dependencies:
        return ""
    names = ", ".join(d.name for d in dependencies)
    return (f"\n\n{skill.name} requires these skills, loaded with it: {names}\n\n"
            + "\n\n".join(skill_block(d) for d in dependencies))


@dataclass
class ArmPlan:
    """The first request of one arm: messages and tools."""

    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)


def build_arm(
    arm: str, case: Case, skill: Skill, *, mode: Mode = "inline", placement: Placement = "user",
    dependencies: Sequence[Skill] = (),
) -> ArmPlan:
    """Messages for `arm` ("baseline" or "skill"); the baseline never sees the skill, nor the
    skills it requires (`dependencies`, given after it inline; loaded with it in tool mode)."""
    question = user_content(case)
    if arm == "baseline":
        return ArmPlan([Message("system", NEUTRAL_SYSTEM), Message("user", question)])
    if mode == "tool":
        listing = (
            "\n\nSkills you can load with the load_skill tool when one fits the task:\n"
            f"- {skill.name}: {skill.description}"
        )
        return ArmPlan(
            [Message("system", NEUTRAL_SYSTEM + listing), Message("user", question)],
            [LOAD_SKILL, READ_SKILL_FILE],
        )
    if placement == "system":
        system = f"{NEUTRAL_SYSTEM}\n\nUse this skill when it applies:\n\n" \
            f"{skills_block(skill, dependencies)}"
        return ArmPlan([Message("system", system), Message("user", question)])
    prefixed = f"Use this skill when it applies:\n\n{skills_block(skill, dependencies)}" \
        f"\n\n---\n\n{question}"
    return ArmPlan([Message("system", NEUTRAL_SYSTEM), Message("user", prefixed)])


def run_tool(call: ToolCall, skill: Skill,
             dependencies: Sequence[Skill] = ()) -> tuple[str, bool]:
    """Execute a skill tool call; returns (result text, whether SKILL.md was loaded). Loading
    the skill loads the skills it requires with it (`dependencies`, after its text), so
    `read_skill_file` reads their files too, by their names, with the same path checks."""
    name = str(call.arguments.get("name", ""))
    if call.name == "read_skill_file":
        owner = next((s for s in (skill, *dependencies) if s.name == name), None)
        if owner is None:
            names = ", ".join(s.name for s in (skill, *dependencies))
            return f"No skill named '{name}'. Available: {names}.", False
        return _read_file(owner, str(call.arguments.get("path", ""))), False
    if name != skill.name:
        return f"No skill named '{name}'. Available: {skill.name}.", False
    if call.name == "load_skill":
        return skill.render() + required_text(skill, dependencies), True
    return f"Unknown tool '{call.name}'.", False


def _read_file(skill: Skill, rel: str) -> str:
    path = PurePosixPath(rel)
    if not rel or path.is_absolute() or ".." in path.parts or "\\" in rel:
        return f"'{rel}' is not a file of this skill."
    root = skill.path.resolve()
    target = (root / Path(*path.parts)).resolve()
    if not target.is_relative_to(root) or not target.is_file() or target.is_symlink():
        return f"'{rel}' is not a file of this skill."
    return target.read_text(encoding="utf-8", errors="replace")[:MAX_SKILL_FILE_CHARS]
