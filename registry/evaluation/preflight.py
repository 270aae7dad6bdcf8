"""Checks an evaluation makes before its first model call: what costs nothing fails first.

`check_suite` asks whether the cases can be graded and repeated as asked; `check_mode` whether
the models can do what the mode needs (tool calling for `tool`); `check_writable` whether the
run and the response cache can be saved; `check_endpoints` whether each model's server answers
at all. `generate` asks the same
of its students before its teacher is paid.
"""

from __future__ import annotations

import asyncio

from registry._io import why_unwritable
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.arms import Mode
from registry.format.suite import Suite
from registry.providers import Model, aclose_all


def check_suite(suite: Suite, *, judge: str | None, runs: int, command: str) -> None:
    """Refuse cases only a judge can grade when no judge is named, and fewer than one run;
    `command` is the command line to hint at.

    Raises:
        HubskillsError: either.
    """
    if not judge and (judged := suite.judge_only_cases()):
        shown = ", ".join(judged[:5]) + (f" and {len(judged) - 5} more" if len(judged) > 5 else "")
        raise HubskillsError(f"{len(judged)} of {len(suite.cases)} cases can only be graded by a "
                             f"judge model ({shown}), and no --judge model was given",
                             hint=f"{command} --judge MODEL")
    if runs < 1:
        raise HubskillsError("--runs must be at least 1", hint=f"{command} --runs 3")


def check_mode(models: list[Model], mode: Mode, command: str) -> str | None:
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
