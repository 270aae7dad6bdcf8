"""Trigger sessions run by a real agent CLI: `eval --mode trigger --harness NAME`.

Per query and repeat, the CLI starts headless in a fresh workspace of its own whose skills
folder (where that CLI reads skills: `.claude/skills` for Claude Code, `.agents/skills` for the
others) holds the skill and every distractor, name and description only, so the CLI lists them
to its model its own way; the query is its prompt. Triggered = the CLI's own skill-read event
for this skill (its skill tool loading it, or a tool call opening its `SKILL.md`), read from the
CLI's event stream by `harness.skill_files`, the first listed skill opened winning. The turn
budget is the trigger session's (`trigger.MAX_CALLS` model calls), held by the CLI and its
proxy. A CLI that fails is an error row, counted apart, never "did not trigger"; so is a
session in which no model answer reached the CLI (no tokens used: its retries of a failing
endpoint ran into the turn budget, and the CLI then "answers" with the error text). The CLI
orders the listing itself.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from registry.agent import (
    AgentOutcome,
    AgentTask,
    Budget,
    TranscriptEntry,
    remove_tree,
    seed_workspace,
)
from registry.agent.outcome import AgentRunner
from registry.config import Settings
from registry.errors import ProviderError
from registry.format.inputs import InputFile
from registry.providers import Model
from registry.sandbox import choose

if TYPE_CHECKING:
    from registry.agent.harness.replay import ResponseStore


def make_runners(harness: str, models: list[Model], settings: Settings, sandbox: str, *,
                 cache: ResponseStore, use_cache: bool) -> tuple[dict[str, AgentRunner], str]:
    """One runner per model and the skills folder that CLI reads, checked before any call.

    Raises:
        HubskillsError: no bwrap sandbox, the CLI not installed, or a model it cannot speak to.
    """
    from registry.agent.harness import ADAPTERS, make_harness  # Node CLIs: only for --harness

    chosen = choose(sandbox, settings, has_code=True, code_checks="require", folder=None)
    runners = {m.ref: make_harness(harness, model=m, sandbox=chosen.sandbox, settings=settings,
                                   cache=cache, read_cache=use_cache)
               for m in models}
    return runners, ADAPTERS[harness].skills_folder


def opened_by_cli(entries: list[TranscriptEntry], names: set[str]) -> str | None:
    """The first listed skill whose SKILL.md one of the CLI's tool calls loaded, else None."""
    from registry.agent.harness import skill_files

    for entry in entries:
        for name in sorted(names):
            if "SKILL.md" in skill_files([entry], name):
                return name
    return None


async def harness_session(runner: AgentRunner, folder: str,
                          listed: list[tuple[str, str, str]], query: str, seed: int,
                          max_turns: int) -> tuple[AgentOutcome, str | None]:
    """One trigger session by the CLI behind `runner` (module docstring): its outcome and
    the listed skill it opened (None: none).

    Raises:
        ProviderError: the CLI failed, or no model answer reached it.
    """
    root = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix="hubskills-trigger-"))
    try:
        files: dict[str, str | InputFile] = {f"{folder}/{name}/SKILL.md":
                 f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n"
                 for name, description, _ in listed}
        workspace = await asyncio.to_thread(seed_workspace, root / "workspace", files)
        outcome = await runner.run(AgentTask(query, workspace.path, seed=seed,
                                             budget=Budget(max_turns=max_turns)))
    finally:
        await asyncio.to_thread(remove_tree, root)  # however deep the CLI nested folders
    if outcome.error or outcome.stop_reason == "error":
        raise ProviderError(outcome.error or f"{runner!r} failed")
    if not (outcome.input_tokens or outcome.output_tokens):  # retries spent on failures
        raise ProviderError(f"the agent CLI got no answer from the model: "
                            f"{outcome.final_text[:300]}")
    return outcome, opened_by_cli(outcome.transcript, {name for name, _, _ in listed})
