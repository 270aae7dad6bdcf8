"""Checks an evaluation makes before its first model call: what costs nothing fails first.

`check_suite` asks whether the cases can be graded and repeated as asked; `check_mode` whether
the models can do what the mode needs (tool calling for `tool`); `check_here` whether a model
run in this process can run on this machine; `check_writable` whether the run and the response
cache can be saved; `check_endpoints` whether each model's server answers
at all (`Probes` asks the same beside a run's first calls). `generate` asks the same
of its students before its teacher is paid.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

from registry._io import why_unwritable
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.stopping import StopSignal
from registry.format.suite import Suite
from registry.providers import Model, aclose_all
from registry.results.display import count

T = TypeVar("T")


def check_suite(suite: Suite, *, judge: str | None, runs: int, command: str,
                arms: Iterable[str] = ("baseline", "skill")) -> None:
    """Refuse cases only a judge can grade when no judge is named, fewer than one run, and
    pairwise checks in a run of one arm (`arms`); `command` is the command line to hint at.

    Raises:
        HubskillsError: any of them.
    """
    from registry.evaluation.pairwise import check_pairwise

    check_pairwise(suite, arms=arms, command=command)
    if not judge and (judged := suite.judge_only_cases()):
        shown = ", ".join(judged[:5]) + (f" and {len(judged) - 5} more" if len(judged) > 5 else "")
        raise HubskillsError(f"{len(judged)} of {len(suite.cases)} cases can only be graded by a "
                             f"judge model ({shown}), and no --judge model was given",
                             hint=f"{command} --judge MODEL")
    if runs < 1:
        raise HubskillsError("--runs must be at least 1", hint=f"{command} --runs 3")


def check_mode(models: list[Model], mode: str, command: str) -> str | None:
    """A warning when some `models` lack what `mode` needs (None when all have it); `command`
    is the command line to hint at, ending where `--mode` would go.

    `tool` mode needs tool calling: a model without it never loads the skill, so its "lift"
    measures only the skill's name and description in the prompt.

    Raises:
        HubskillsError: no model has it, so nothing about the skill could be measured.
    """
    lacking = [m.ref for m in models if mode == "tool" and not m.provider.supports_tools]
    if not lacking:
        return None
    names = ", ".join(lacking)
    if len(lacking) == len(models):
        raise HubskillsError(
            f"--mode tool needs a model that can call tools, and {names} cannot: it would "
            "never load the skill, so the run would measure nothing about it",
            hint=f"{command} --mode inline   (or add a model that calls tools)")
    return (f"{names} cannot call tools: in --mode tool it never loads the skill, so its lift "
            "measures only the skill's name and description")


def check_writable(settings: Settings) -> None:
    """The run folder and the response cache must be writable: found out before any call."""
    for folder in (settings.runs_dir, settings.cache_path.parent):
        if why := why_unwritable(folder, create=False):
            raise HubskillsError(f"cannot save the run in {folder}: {why}",
                                 hint="set HUBSKILLS_HOME to a folder you can write to")


def check_here(models: list[Model], asked: Callable[[], set[str]]) -> None:
    """A model that runs in this process and cannot on this machine (the embedded one
    without its extra) is refused before the run is saved, unless the response cache holds
    every answer the run asks of it (`asked`: the refs of the models asked for more).

    Raises:
        HubskillsError: such a model, with the command that installs what it needs.
    """
    for model in models:
        try:
            model.provider.check_here()
        except HubskillsError:
            if model.ref in asked():
                raise


def check_endpoints(models: list[Model]) -> None:
    """Probe each endpoint of `models` once (the same connection once), together, before the
    first sample: a listing or the connection itself, never a paid call; an in-process model
    needs none. A dead endpoint would otherwise fail every sample in transport.

    Raises:
        ProviderError: an endpoint that cannot answer, with its address and the cause.
    """
    endpoints = {model.connection_key: model for model in models}

    async def probe_all() -> None:
        try:
            await asyncio.gather(*(model.provider.probe() for model in endpoints.values()))
        finally:
            await aclose_all(endpoints.values())

    if any(model.provider.endpoint for model in endpoints.values()):
        asyncio.run(probe_all())


class Probes:
    """Each endpoint of a run's models probed once at no cost, beside the run's own first calls
    instead of a round trip before them (`check_endpoints`' refusal, without its wait).

    A sample on model M starts only once every *other* endpoint has answered its probe
    (`clear_for`): a call is sent only where a refused probe would have made it fail unpaid
    (nothing listening, a failed handshake, no chat route), so a dead judge or a second dead
    server still refuses the run before any answer is paid for. What the run shows or saves
    (`show`) is held until every probe has answered, so a refused run saved and showed nothing.
    """

    def __init__(self, models: Iterable[Model]) -> None:
        self._endpoints = {m.connection_key: m for m in models if m.provider.endpoint}
        self._probes: dict[tuple[str, ...], asyncio.Future[None]] = {}
        self._held: list[tuple[Callable[..., None], tuple[Any, ...]]] | None = []
        self.refused = False

    async def clear_for(self, model: Model) -> None:
        """Wait until every endpoint but `model`'s own has answered its probe.

        Raises:
            ProviderError: one of them was refused (the run is being cancelled).
        """
        others = [p for key, p in self._probes.items() if key != model.connection_key]
        if others:
            await asyncio.gather(*(asyncio.shield(p) for p in others))

    def show(self, action: Callable[..., None], *args: Any) -> None:
        """`action(*args)` now when every probe has answered, else once they all have."""
        if self._held is None:
            action(*args)
        else:
            self._held.append((action, args))

    def _release(self) -> None:
        held, self._held = self._held or [], None
        for action, args in held:
            action(*args)

    async def around(self, work: Awaitable[T], stop: StopSignal | None = None) -> T:
        """Await `work` with the probes running beside it; a refused probe cancels `work` and
        is raised. When `work` ends first after a `stop`, the probes are dropped and what it
        finished is shown (an interrupted run keeps its rows).

        Raises:
            ProviderError: an endpoint cannot answer (`refused` is then True).
        """
        if self._held is None:  # a later run by the same evaluator (`tune`'s rounds)
            self._held = []
        self._probes = {key: asyncio.ensure_future(m.provider.probe())
                        for key, m in self._endpoints.items()}
        running: asyncio.Future[T] = asyncio.ensure_future(work)
        probes: asyncio.Future[Any] = asyncio.gather(*self._probes.values())
        try:
            await asyncio.wait({probes, running}, return_when=asyncio.FIRST_COMPLETED)
            if probes.done() or stop is None or not stop.is_set():
                await asyncio.wait({probes})
                if (error := probes.exception()) is not None:
                    self.refused = True
                    raise error
            self._release()  # (after a stop, the probes left unanswered are cancelled below)
            return await running
        finally:
            for task in (running, probes, *self._probes.values()):
                task.cancel()
            await asyncio.gather(running, probes, return_exceptions=True)


def agent_tasks(suite: Suite, command: str) -> str | None:
    """The note for a chat-mode run over cases an imported suite marks as agent tasks (NVIDIA's
    cases with starter `files`): the model gets those files inline, not a workspace."""
    tasks = [c.id for c in suite.cases if c.metadata.get("mode") == "agent"]
    if not tasks:
        return None
    shown = ", ".join(tasks[:3]) + (f" and {len(tasks) - 3} more" if len(tasks) > 3 else "")
    return (f"{count(len(tasks), 'case')} ({shown}) "
            f"{'is an agent task' if len(tasks) == 1 else 'are agent tasks'} with starter "
            f"files: this run shows the files inline; to run them as tasks in a workspace: "
            f"{command} --mode agent")
