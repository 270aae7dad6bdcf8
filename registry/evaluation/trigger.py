"""Trigger evals: does the agent open this skill, listed among others, for a query?

Per query, model and repeat, one fresh session: the system prompt lists the skill among the
distractors exactly as the agent loop lists skills (`agent.loop.skills_prompt`, in an order
shuffled per query and repeat, seeded), the agent loop's tools are offered, and the query is the
first user message. The session ends at the first read of a listed skill's `SKILL.md` or at the
first answer, so it costs one model call, two when the agent first looks around (the tools then
run in a workspace of its own holding the listed skills). Triggered = this skill's `SKILL.md`
was the one read. A session whose model call fails is an error row, counted apart, never "did
not trigger".

With `harness` set, a real agent CLI runs each session instead (`trigger_harness`), triggered
being the CLI's own skill-read event.

Rows are `ResultRow`s with `mode: "trigger"`, `arm: "skill"`: `activated` (triggered),
`expect_skill` (should trigger), `passed` (the decision was right) and `opened_skill` (the
listed skill that was read, this one or a distractor). Calls go through the response cache, so
a rerun or a resumed run repeats none.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from registry.agent import SKILLS_FOLDER, TOOLS, AgentOutcome, Budget, WorkspaceTools
from registry.agent.loop import skills_prompt
from registry.config import Settings
from registry.errors import HubskillsError, ProviderError
from registry.evaluation.calls import ModelCalls
from registry.evaluation.config import EvalConfig
from registry.evaluation.distractors import Listed
from registry.evaluation.preflight import Probes
from registry.evaluation.stopping import StopSignal, gather_until_stopped
from registry.format.folder_names import plain_name
from registry.format.triggers import TriggerQuery
from registry.providers import CapReached, Completion, Message, Model, ToolCall
from registry.providers.base import tally
from registry.results.runs import ResultRow, RunManifest, RunStatus

if TYPE_CHECKING:  # the statistics (numpy) load only when a design is made
    from registry.evaluation.trigger_rounds import Item
    from registry.results.sequential_rates import RateDesign

MODE = "trigger"
MAX_CALLS = 2  # the session ends at the first read or answer: one call, two after a look around
_READ = re.compile(re.escape(SKILLS_FOLDER) + r"/([^/\s'\";|&<>()]+)/SKILL\.md")
Listing = list[tuple[str, str, str]]  # (name, description, folder) as the agent sees it
OnRow = Callable[[ResultRow], None]


@dataclass
class Session:
    """How one trigger session went; `opened` is the listed skill whose SKILL.md was read."""

    opened: str | None = None
    text: str = ""
    turns: int = 0
    stop_reason: str = "answered"  # "read", "answered" or "turns" (still looking around)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    latency_s: float = 0.0
    cached: bool = True


def listing(name: str, description: str, distractors: list[Listed], key: str) -> Listing:
    """The skill among `distractors`, shuffled with the seed `key` (a query and repeat), so
    no position favours it on every query and a rerun lists the same order."""
    entries = [(name, description), *((d.name, d.description) for d in distractors)]
    random.Random(key).shuffle(entries)
    return [(n, d, f"{SKILLS_FOLDER}/{n}") for n, d in entries]


def opened_skill(calls: list[ToolCall], names: set[str]) -> str | None:
    """The first listed skill whose SKILL.md one of `calls` reads (read_file, or a command
    that names the file), else None."""
    for call in calls:
        paths: list[str] = []
        if call.name == "read_file" and isinstance(call.arguments.get("path"), str):
            clean = os.path.normpath(call.arguments["path"].strip())
            paths = [PurePosixPath(clean.removeprefix("./")).as_posix()]
        elif call.name == "run" and isinstance(call.arguments.get("command"), str):
            paths = [m.group(0) for m in _READ.finditer(call.arguments["command"])]
        for path in paths:
            parts = PurePosixPath(path).parts
            if len(parts) == 4 and path.startswith(SKILLS_FOLDER + "/") \
                    and parts[3] == "SKILL.md" and parts[2] in names:
                return parts[2]
    return None


CompleteFn = Callable[[list[Message], int], Awaitable[tuple[Completion, bool]]]


async def run_session(complete: CompleteFn, listed: Listing, query: str, seed: int) -> Session:
    """One trigger session (module docstring); raises what the model call raises."""
    messages = [Message("system", skills_prompt(listed)), Message("user", query)]
    names = {name for name, _, _ in listed}
    session, root = Session(), None
    try:
        for turn in range(MAX_CALLS):
            completion, cached = await complete(messages, seed)
            session.turns += 1
            session.text = completion.text
            tally(session, completion, cached=cached)
            if not completion.tool_calls:
                return session
            if (opened := opened_skill(completion.tool_calls, names)) is not None:
                session.opened, session.stop_reason = opened, "read"
                return session
            if turn == MAX_CALLS - 1:
                session.stop_reason = "turns"
                return session
            root = root or Path(await asyncio.to_thread(_seed_workspace, listed))
            messages += await _tool_results(completion, root / "workspace")
        return session
    finally:
        if root is not None:
            await asyncio.to_thread(shutil.rmtree, root, ignore_errors=True)


def _seed_workspace(listed: Listing) -> str:
    """A fresh folder holding each listed skill's SKILL.md (name and description only)."""
    if bad := [name for name, _, _ in listed if not plain_name(name)]:  # the callers refuse
        raise ValueError(f"listed skill name {bad[0][:80]!r} is not a folder name")  # them
    root = tempfile.mkdtemp(prefix="hubskills-trigger-")
    for name, description, folder in listed:
        target = Path(root, "workspace", folder)
        target.mkdir(parents=True)
        text = f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n"
        (target / "SKILL.md").write_text(text, encoding="utf-8")
    return root


async def _tool_results(completion: Completion, workspace: Path) -> list[Message]:
    """The assistant's tool calls run in the session's workspace (no sandbox: a `run` is
    answered with an error), as messages for the next call."""
    tools = WorkspaceTools(workspace, None, Budget(), AgentOutcome())
    messages = [Message("assistant", completion.text, tool_calls=completion.tool_calls)]
    for call in completion.tool_calls:
        result, _ = await tools.call(call)
        messages.append(Message("tool", result, tool_call_id=call.id))
    return messages


class TriggerEvaluator(ModelCalls):
    """Runs trigger sessions for one skill, through the run's model-calls core (`calls`)."""

    def __init__(self, name: str, config: EvalConfig, settings: Settings,
                 distractors: list[Listed], manifest: RunManifest) -> None:
        super().__init__(config, settings)
        self.name, self.distractors = name, distractors
        self.settings, self.manifest = self.call_settings, manifest
        lacking = [m.ref for m in self.models if not m.provider.supports_tools]
        if lacking:
            raise HubskillsError(f"{', '.join(lacking)} cannot call tools, so it cannot open a "
                                 "skill: a trigger eval measures nothing on it",
                                 hint="hubskills models   # lists models that call tools")
        self.probes = Probes(self.models)
        self.design: RateDesign | None = None  # adaptive: asked in rounds (`trigger_rounds`)
        self.history: dict[str, dict[str, tuple[bool, list[bool | None]]]] = {}
        self.design_stops: dict[str, dict[str, Any]] = {}  # per model: where its plan stopped
        self.on_round: Callable[[str], None] | None = None  # told what each round does
        self.runners: dict[str, Any] = {}  # model ref -> the agent CLI's runner (`--harness`)
        if config.harness:
            from registry.evaluation.trigger_harness import make_runners

            self.runners, self.skills_folder = make_runners(
                config.harness, self.models, self.settings, config.sandbox, cache=self.cache,
                use_cache=config.use_cache)

    async def session_call(self, model: Model, messages: list[Message], seed: int
                           ) -> tuple[Completion, bool]:
        """One call of a session: the agent loop's tools offered, seeded and keyed by `seed`."""
        return await self.complete(model, messages, tools=TOOLS, seed=seed, repeat=seed)

    async def _harness_session(self, model: Model, listed: Listing, query: str,
                               repeat: int) -> Session:
        """One session by the agent CLI, under the model's limit; its calls are not reserved
        one by one: the session's cost is counted when it ends."""
        from registry.evaluation.trigger_harness import harness_session

        async with self.limit(model):
            self.cap.check_open()
            outcome, opened = await harness_session(self.runners[model.ref], self.skills_folder,
                                                    listed, query, repeat, MAX_CALLS)
        if not outcome.cached:
            self.cap.record(outcome.cost_usd)
        stop = "read" if opened else "turns" if outcome.stop_reason in ("turns", "wall_time") \
            else "answered"
        return Session(opened=opened, text=outcome.final_text, turns=outcome.turns,
                       stop_reason=stop, input_tokens=outcome.input_tokens,
                       output_tokens=outcome.output_tokens, cost_usd=outcome.cost_usd,
                       latency_s=outcome.wall_s, cached=outcome.cached)

    async def sample(self, model: Model, description: str, query: TriggerQuery,
                     repeat: int) -> ResultRow:
        """One session of `query` with the skill listed under `description`, as a row."""
        m = self.manifest
        row = ResultRow(run_id=m.run_id, skill_name=m.skill_name, skill_version=m.skill_version,
                        skill_repo=m.skill_repo, skill_revision=m.skill_revision,
                        content_hash=m.content_hash, model=model.ref, mode=MODE, arm="skill",
                        case_id=query.id, repeat=repeat, cost_usd=0.0, cached=True,
                        protocol=f"harness:{self.config.harness}" if self.runners else "tools",
                        expect_skill=query.should_trigger, **m.row_fields())
        listed = listing(self.name, description, self.distractors, f"{query.id}:{repeat}")
        await self.probes.clear_for(model)

        async def complete(messages: list[Message], seed: int) -> tuple[Completion, bool]:
            return await self.session_call(model, messages, seed)

        try:
            session = await self._harness_session(model, listed, query.query, repeat) \
                if self.runners else await run_session(complete, listed, query.query, repeat)
        except ProviderError as exc:  # a context overflow too: the session did not happen
            row.error, row.error_kind = str(exc), "transport"
            return row
        row.output, row.turns, row.stop_reason = session.text, session.turns, session.stop_reason
        row.input_tokens, row.output_tokens = session.input_tokens, session.output_tokens
        row.cost_usd, row.latency_s, row.cached = session.cost_usd, session.latency_s, \
            session.cached
        row.opened_skill, row.activated = session.opened, session.opened == self.name
        row.skill_files = ["SKILL.md"] if row.activated else []
        row.passed = row.activated == query.should_trigger
        row.score = 1.0 if row.passed else 0.0
        return row

    async def run(self, description: str, queries: list[TriggerQuery], on_row: OnRow, *,
                  done: frozenset[tuple[str, str, int]] = frozenset(),
                  stop: StopSignal | None = None) -> RunStatus:
        """Every (model, query, repeat) not in `done`, concurrently, repeat-major; each row
        goes to `on_row` as it finishes (once the endpoints' probes have answered). Returns
        "complete", "stopped" (`max_cost`) or "interrupted" (`stop`).

        Raises:
            ProviderError: an endpoint cannot answer (`self.probes.refused`)."""
        items = [(model, query, repeat, None) for repeat in range(self.config.runs)
                 for query in queries for model in self.models
                 if (model.ref, query.id, repeat) not in done]
        stopped = False
        # Sessions begun at once: twice the calls the connections take at once, so the first
        # calls go out before every later session has built its prompt and cache key (all of
        # them did, before a single request was sent), and a freed slot finds one ready.
        slots = {m.connection_key: self.slots(m) for m in self.models}
        begun = asyncio.Semaphore(2 * sum(slots.values()))

        async def one(model: Model, query: TriggerQuery, repeat: int,
                      round_: int | None) -> None:
            nonlocal stopped
            async with begun:
                try:
                    row = await self.sample(model, description, query, repeat)
                except CapReached:  # --max-cost or --max-calls: no further call
                    stopped = True
                    return
                row.round = round_
                if round_ is not None:  # an outcome of the design, in run order
                    self.history[model.ref][query.id][1].append(
                        None if row.is_error else row.activated)
                self.probes.show(on_row, row)

        async def asked(round_items: list[Item]) -> bool:
            return await gather_until_stopped((one(*item) for item in round_items), stop) \
                and not stopped

        if self.adaptive:
            from registry.evaluation.trigger_rounds import run_rounds

            work = run_rounds(self, queries, asked, self.on_round)
        else:
            work = gather_until_stopped((one(*item) for item in items), stop)
        if not await self.probes.around(work, stop) and stop is not None and stop.is_set():
            return "interrupted"
        return "stopped" if stopped else "complete"

    @property
    def adaptive(self) -> bool:
        """Whether the run's design is adaptive (asked in rounds, `trigger_rounds`)."""
        return self.design is not None and self.design.kind == "adaptive"
