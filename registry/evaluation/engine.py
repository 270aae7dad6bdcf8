"""The A/B runner: every case, in both arms, on every model, `runs` times, concurrently.

Each sample is one independent completion (seeded by its repeat index, the same seed in both
arms so the pair differs only by the skill). Completions go through a content-addressed cache,
so a rerun or a resumed run makes no repeated model calls. Provider errors are retried by the
provider layer, then recorded as error rows that stay out of pass rates.
"""

from __future__ import annotations

import asyncio
import logging
import platform
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from registry import __version__
from registry.config import Settings
from registry.errors import ContextOverflow, HubskillsError, ProviderError
from registry.evaluation.arms import MAX_TOOL_TURNS, Mode, Placement, build_arm, run_tool
from registry.evaluation.cache import ResponseCache, cache_key
from registry.evaluation.checks import case_score, run_checks
from registry.evaluation.judge import make_judge
from registry.evaluation.results import (
    CheckVerdict,
    ResultRow,
    RunManifest,
    RunWriter,
    new_run_id,
    read_manifest,
    read_rows,
)
from registry.format.skill import Skill, load_skill
from registry.format.suite import Suite, load_suite, suite_path
from registry.providers import Model, resolve
from registry.providers._retry import RetryPolicy
from registry.providers.base import Completion, Message, ToolCall, Usage

log = logging.getLogger(__name__)
ARMS = ("baseline", "skill")
Progress = Callable[[int, int, ResultRow], None]


@dataclass
class EvalConfig:
    """What to run: models, repeats, mode and limits."""

    models: list[str]
    runs: int = 3
    mode: Mode = "inline"
    placement: Placement = "user"
    judge: str | None = None
    concurrency: int | None = None
    max_cost: float | None = None
    case_ids: list[str] = field(default_factory=list)
    temperature: float = 0.7
    max_tokens: int = 512
    use_cache: bool = True
    base_url: str | None = None
    retry: RetryPolicy | None = None
    via: str = "cli"


@dataclass
class EvalRun:
    """A finished (or stopped) run: its manifest and its rows."""

    manifest: RunManifest
    rows: list[ResultRow]


class _BudgetExceeded(Exception):
    pass


def _completion_to_dict(completion: Completion) -> dict[str, Any]:
    return asdict(completion)


def _completion_from_dict(data: dict[str, Any]) -> Completion:
    data = dict(data)
    data["usage"] = Usage(**data.get("usage") or {})
    data["tool_calls"] = [ToolCall(**call) for call in data.get("tool_calls") or []]
    return Completion(**data)


def _message_dict(message: Message) -> dict[str, Any]:
    return asdict(message)


def tool_versions() -> dict[str, str]:
    """Versions that can change results: ours, Python's, and the model SDKs'."""
    versions = {"hubskills": __version__, "python": platform.python_version()}
    for package in ("openai", "anthropic", "llama_cpp_python", "huggingface_hub"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions


class Evaluator:
    """Runs one evaluation; use `run_evaluation` rather than this class directly."""

    writer: RunWriter

    def __init__(self, skill: Skill, suite: Suite, config: EvalConfig, settings: Settings,
                 done: set[tuple[str, str, str, int]]) -> None:
        self.skill, self.suite, self.config = skill, suite, config
        self.secrets = settings.secrets()
        if config.base_url:  # only local/ references read it: API models keep their endpoints
            settings = settings.with_(base_url=config.base_url)
        self.models = [resolve(ref, settings, retry=config.retry) for ref in config.models]
        self.cache = ResponseCache(settings.cache_path)
        self.done = done
        self.spent = 0.0
        self.unknown_cost = False
        self._limits: dict[str, asyncio.Semaphore] = {}
        self.judge = None
        if config.judge:
            judge_model = resolve(config.judge, settings, retry=config.retry)
            self.judge = make_judge(judge_model, self._complete)

    def _limit(self, model: Model) -> asyncio.Semaphore:
        name = model.provider_name
        if name not in self._limits:
            size = self.config.concurrency or model.provider.default_concurrency
            self._limits[name] = asyncio.Semaphore(max(1, size))
        return self._limits[name]

    async def _complete(self, model: Model, messages: list[Message], *, tools: list | None = None,
                        seed: int, repeat: int, temperature: float | None = None,
                        max_tokens: int | None = None) -> tuple[Completion, bool]:
        temperature = self.config.temperature if temperature is None else temperature
        max_tokens = max_tokens or self.config.max_tokens
        key = cache_key(model=model.ref, messages=[_message_dict(m) for m in messages],
                        tools=[asdict(t) for t in tools or []], temperature=temperature,
                        max_tokens=max_tokens, seed=seed, repeat=repeat)
        if self.config.use_cache and (hit := self.cache.get(key)) is not None:
            return _completion_from_dict(hit), True
        async with self._limit(model):
            if self.config.max_cost is not None and self.spent >= self.config.max_cost:
                raise _BudgetExceeded
            completion = await model.complete(messages, tools=tools or None, seed=seed,
                                              temperature=temperature, max_tokens=max_tokens)
        if completion.cost_usd is None:
            self.unknown_cost = True
        else:
            self.spent += completion.cost_usd
        self.cache.put(key, _completion_to_dict(completion))
        return completion, False

    async def sample(self, model: Model, arm: str, case_index: int, repeat: int) -> ResultRow:
        """One answer to one case in one arm, graded."""
        case = self.suite.cases[case_index]
        plan = build_arm(arm, case, self.skill, mode=self.config.mode,
                         placement=self.config.placement)
        messages = list(plan.messages)
        row = self._row(model, arm, case.id, repeat)
        loaded: bool | None = False if plan.tools else None
        try:
            for _turn in range(MAX_TOOL_TURNS):
                completion, cached = await self._complete(
                    model, messages, tools=plan.tools, seed=repeat, repeat=repeat)
                self._account(row, completion, cached)
                if not (plan.tools and completion.tool_calls):
                    break
                messages.append(Message("assistant", completion.text,
                                        tool_calls=completion.tool_calls))
                for call in completion.tool_calls:
                    result, was_loaded = run_tool(call, self.skill)
                    loaded = loaded or was_loaded
                    messages.append(Message("tool", result, tool_call_id=call.id))
        except ContextOverflow as exc:
            return _arm_failure(row, scrub(str(exc), self.secrets))
        except ProviderError as exc:
            row.error, row.error_kind = scrub(str(exc), self.secrets), "transport"
            return row
        row.output, row.skill_loaded = scrub(completion.text, self.secrets), loaded
        if plan.tools and completion.tool_calls:
            return _arm_failure(row, f"tool loop still calling tools after {MAX_TOOL_TURNS} "
                                     "turns")
        if completion.finish_reason == "content_filter":
            return _arm_failure(row, "the model refused (content filter)")
        verdicts = await run_checks(case, completion.text, judge=self.judge)
        row.passed, row.score = case_score(verdicts)
        row.checks = [CheckVerdict(**asdict(v)) for v in verdicts]
        return row

    def _row(self, model: Model, arm: str, case_id: str, repeat: int) -> ResultRow:
        m = self.writer.manifest
        return ResultRow(run_id=m.run_id, skill_name=m.skill_name, skill_version=m.skill_version,
                         skill_repo=m.skill_repo, skill_revision=m.skill_revision,
                         content_hash=m.content_hash, model=model.ref, mode=m.mode, arm=arm,
                         case_id=case_id, repeat=repeat, cost_usd=0.0, cached=True,
                         **m.row_fields())

    @staticmethod
    def _account(row: ResultRow, completion: Completion, cached: bool) -> None:
        row.input_tokens += completion.usage.input_tokens
        row.output_tokens += completion.usage.output_tokens
        row.latency_s += completion.latency_s
        row.cached = row.cached and cached
        if row.cost_usd is not None:
            row.cost_usd = None if completion.cost_usd is None \
                else row.cost_usd + completion.cost_usd

    def work(self) -> list[tuple[Model, str, int, int]]:
        """Every (model, arm, case, repeat) still to run, repeat-major so a stop is balanced."""
        items = []
        for repeat in range(self.config.runs):
            for index, case in enumerate(self.suite.cases):
                for model in self.models:
                    for arm in ARMS:
                        if (model.ref, arm, case.id, repeat) not in self.done:
                            items.append((model, arm, index, repeat))
        return items

    async def run(self, progress: Progress | None) -> str:
        """Run all pending samples; returns the final status."""
        items = self.work()
        total, finished = len(items), 0
        stopped = False

        async def one(item: tuple[Model, str, int, int]) -> None:
            nonlocal finished, stopped
            try:
                row = await self.sample(*item)
            except _BudgetExceeded:
                stopped = True
                return
            self.writer.add(row)
            finished += 1
            if progress:
                progress(finished, total, row)

        try:
            await asyncio.gather(*(one(item) for item in items))
        finally:
            await self._close_clients()
        return "stopped" if stopped else "complete"

    async def _close_clients(self) -> None:
        providers = {id(m.provider): m.provider for m in self.models}
        for provider in providers.values():
            if hasattr(provider, "aclose"):
                await provider.aclose()


def _arm_failure(row: ResultRow, reason: str) -> ResultRow:
    """An error caused by the arm itself: a graded failure of that arm, not a lost sample."""
    row.error, row.error_kind, row.passed, row.score = reason, "arm", False, 0.0
    return row


def scrub(text: str, secrets: list[str]) -> str:
    """Replace every secret value in `text`, so keys never reach saved results."""
    for secret in secrets:
        if len(secret) >= 8:
            text = text.replace(secret, "<redacted>")
    return text


def latest_rows(rows: list[ResultRow]) -> list[ResultRow]:
    """One row per (model, arm, case, repeat): a resumed run's retry replaces its error row."""
    keyed: dict[tuple[str, str, str, int], ResultRow] = {}
    for row in rows:
        key = (row.model, row.arm, row.case_id, row.repeat)
        if key not in keyed or keyed[key].is_error or not row.is_error:
            keyed[key] = row
    return list(keyed.values())


def run_evaluation(skill_dir: str | Path, config: EvalConfig, settings: Settings, *,
                   tests: str | Path | None = None, progress: Progress | None = None,
                   resume: str | None = None, skill_repo: str | None = None,
                   skill_revision: str | None = None, skill_version: str | None = None) -> EvalRun:
    """Evaluate a skill folder: baseline vs skill on each model; results saved as a run.

    Raises:
        HubskillsError: a bad skill or suite, an unknown model or a missing key, before any
            model is called.
    """
    skill = load_skill(skill_dir)
    full = load_suite(tests or suite_path(skill.path), skill_dir=skill.path)
    manifest = read_manifest(settings.runs_dir, resume) if resume else None
    if manifest is not None:
        _check_resumable(manifest, skill, full)
        config = replace(config, models=manifest.models, runs=manifest.runs, mode=manifest.mode,
                         placement=manifest.placement, judge=manifest.judge,
                         temperature=manifest.temperature, max_tokens=manifest.max_tokens,
                         case_ids=manifest.case_ids)
    suite = full.select(config.case_ids) if config.case_ids else full
    if config.runs < 1:
        raise HubskillsError("--runs must be at least 1", hint="hubskills eval SKILL --runs 3")
    if manifest is not None:
        done = {(r.model, r.arm, r.case_id, r.repeat) for r in
                latest_rows(read_rows(settings.runs_dir, resume)) if not r.is_error}
        manifest.status = "running"
        if skill_repo and not manifest.skill_repo:  # placed now: the resumed rows join it
            manifest.skill_repo, manifest.skill_revision = skill_repo, skill_revision
            manifest.skill_version = skill_version or manifest.skill_version
    else:
        manifest = _new_manifest(skill, full, suite, config, skill_repo, skill_revision)
        manifest.skill_version = skill_version or manifest.skill_version
        done = set()
    evaluator = Evaluator(skill, suite, config, settings, done)  # resolves models: may raise
    writer = evaluator.writer = RunWriter(settings.runs_dir, manifest, resume=bool(resume))
    status, note = "interrupted", None
    try:
        status = asyncio.run(evaluator.run(progress))
        if status == "stopped":
            note = f"--max-cost ${config.max_cost} reached after ${evaluator.spent:.4f}"
        elif evaluator.unknown_cost and config.max_cost is not None:
            note = "some prices are unknown: --max-cost counted only known costs"
    finally:
        rows = latest_rows(read_rows(settings.runs_dir, manifest.run_id))
        _count_samples(writer.manifest, rows, status)
        writer.close(status, note)
        evaluator.cache.close()
    return EvalRun(writer.manifest, rows)


def _count_samples(manifest: RunManifest, rows: list[ResultRow], status: str) -> None:
    """Record how many planned samples have a row: fewer, or a stop, make the run partial."""
    manifest.samples_planned = len(manifest.models) * len(manifest.case_ids) * manifest.runs * 2
    manifest.samples_done = len(rows)
    manifest.partial = status != "complete" or manifest.samples_done < manifest.samples_planned


def _new_manifest(skill: Skill, full: Suite, suite: Suite, config: EvalConfig,
                  repo: str | None, revision: str | None) -> RunManifest:
    """A new run of ``suite`` (``full`` or some of its cases: a subset run)."""
    return RunManifest(
        run_id=new_run_id(), skill_name=skill.name, skill_version=skill.version,
        skill_repo=repo, skill_revision=revision, content_hash=skill.content_hash(),
        suite_hash=full.suite_hash(), suite_cases=len(full.cases), models=list(config.models),
        mode=config.mode, placement=config.placement, runs=config.runs,
        temperature=config.temperature, max_tokens=config.max_tokens, judge=config.judge,
        case_ids=[c.id for c in suite.cases], skill_tokens=skill.token_estimate()["body"],
        versions=tool_versions(), partial=True, produced_via=config.via,
        samples_planned=len(config.models) * len(suite.cases) * config.runs * 2,
    )


def _check_resumable(manifest: RunManifest, skill: Skill, suite: Suite) -> None:
    if manifest.content_hash != skill.content_hash() or manifest.suite_hash != suite.suite_hash():
        raise HubskillsError(
            f"run {manifest.run_id} was made with a different version of the skill or suite",
            hint=f"hubskills eval {skill.path}  # start a new run instead",
        )
