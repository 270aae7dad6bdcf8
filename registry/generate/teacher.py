"""The teacher side of `generate`: prompts, default models, and calls that repair bad output.

Prompts live in `registry/prompts/*.md` (package data) and are filled with
`string.Template.safe_substitute`, so JSON braces and stray `$` in inserted text are safe.
Every raw teacher reply is kept under `HUBSKILLS_HOME/generate/<timestamp>/raw-NN-<step>.md`
so a failure can always be inspected.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from string import Template
from typing import TypeVar

from registry._io import atomic_write_text
from registry.config import Settings
from registry.errors import GenerationError
from registry.providers import (
    ALIASES,
    EMBEDDED_REF,
    Message,
    Model,
    RetryPolicy,
    Usage,
    embedded_availability,
    normalize_ref,
    resolve,
)
from registry.providers.base import add_cost
from registry.secrets import scrub

log = logging.getLogger(__name__)
T = TypeVar("T")

HF_TEACHER = "hf/Qwen/Qwen3-Coder-480B-A35B-Instruct"
WEAK_TEACHER_WARNING = (
    "no ANTHROPIC_API_KEY or HF_TOKEN: the teacher is the embedded 135M model, which writes "
    "weak skills (set a key, or pass --teacher)")
API_TEACHER_MAX_TOKENS = 8192
EMBEDDED_TEACHER_MAX_TOKENS = 400


class TeacherFormatError(ValueError):
    """A teacher reply that cannot be used; the message is shown to the teacher on repair."""


def prompt_text(name: str) -> str:
    """The text of `registry/prompts/<name>.md`."""
    return resources.files("registry").joinpath("prompts", f"{name}.md").read_text("utf-8")


def render(prompt: str, **values: object) -> str:
    """A prompt with its `$placeholders` filled (unknown ones are left as they are)."""
    return Template(prompt_text(prompt)).safe_substitute({k: str(v) for k, v in values.items()})


def default_teacher(settings: Settings) -> tuple[str, str | None]:
    """The teacher used when none is named, and a warning when it is a weak one.

    Claude Opus with `ANTHROPIC_API_KEY`, else a strong open model on Hugging Face Inference
    Providers with `HF_TOKEN`, else the embedded model.
    """
    if settings.anthropic_api_key:
        return ALIASES["opus"], None
    if settings.hf_token:
        return HF_TEACHER, None
    return EMBEDDED_REF, WEAK_TEACHER_WARNING


def default_students(teacher_ref: str) -> list[str]:
    """The teacher itself, plus the embedded model when it is installed here."""
    students = [normalize_ref(teacher_ref)]
    if embedded_availability()[0] and EMBEDDED_REF not in students:
        students.append(EMBEDDED_REF)
    return students


def new_workdir(settings: Settings) -> Path:
    """A fresh `HUBSKILLS_HOME/generate/<timestamp>` folder for raw outputs and rounds."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
    folder = settings.home / "generate" / stamp
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@dataclass
class Teacher:
    """A teacher model with its token and dollar account; `ask` is synchronous."""

    model: Model
    workdir: Path
    max_tokens: int = API_TEACHER_MAX_TOKENS
    temperature: float = 0.3
    repairs: int = 1
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    calls: int = 0
    raw_files: list[Path] = field(default_factory=list)

    @classmethod
    def create(cls, ref: str, settings: Settings, workdir: Path, *,
               max_tokens: int | None = None, retry: RetryPolicy | None = None) -> Teacher:
        """Resolve `ref`; the embedded model gets short replies and no repair round (a 135M
        model cannot repair its own format)."""
        model = resolve(ref, settings, retry=retry)
        weak = model.provider_name == "embedded"
        default = EMBEDDED_TEACHER_MAX_TOKENS if weak else API_TEACHER_MAX_TOKENS
        return cls(model, workdir, max_tokens=max_tokens or default, repairs=0 if weak else 1)

    @property
    def ref(self) -> str:
        """The normalized model reference."""
        return self.model.ref

    @property
    def is_weak(self) -> bool:
        """True for the embedded model: its output gets a deterministic fallback."""
        return self.model.provider_name == "embedded"

    def ask(self, prompt: str, step: str) -> str:
        """One call with the teacher system prompt; the raw reply is saved under `step`."""
        messages = [Message("system", prompt_text("system")),  # a skill's files, a trace or
                    Message("user", scrub(prompt))]  # feedback may quote a secret of ours
        completion = self.model.complete_sync(
            messages, temperature=self.temperature, max_tokens=self.max_tokens)
        self.calls += 1
        self.usage = self.usage + completion.usage
        self.cost_usd = add_cost(self.cost_usd, completion.cost_usd)
        self.save_raw(step, completion.text)
        return completion.text

    def save_raw(self, step: str, text: str) -> Path:
        """Keep a raw reply for inspection (scrubbed of secrets); returns its path."""
        path = self.workdir / f"raw-{len(self.raw_files) + 1:02d}-{step}.md"
        atomic_write_text(path, scrub(text))
        self.raw_files.append(path)
        return path

    def ask_parsed(self, prompt: str, step: str, parse: Callable[[str], T], fmt: str) -> T:
        """Ask, parse, and on a `TeacherFormatError` ask again with the error (`repairs` times).

        Raises:
            GenerationError: still unusable; the message names the saved raw reply.
        """
        text = self.ask(prompt, step)
        for attempt in range(self.repairs + 1):
            try:
                return parse(text)
            except TeacherFormatError as exc:
                if attempt == self.repairs:
                    raise GenerationError(
                        f"the teacher's {step} could not be used: {exc}",
                        hint=f"its raw output is in {self.raw_files[-1]}; try a stronger "
                        "--teacher or a more specific task") from None
                log.info("teacher %s unusable (%s); asking for a repair", step, exc)
                text = self.ask(render("repair", error=exc, previous=text[:20_000], format=fmt),
                                f"{step}-repair")
        raise AssertionError("unreachable")
