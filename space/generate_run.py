"""Running `registry.generate.pipeline.generate_skill` for the Generate tab, streaming its progress.

Generation runs in a worker thread; its progress lines are collected in a queue so that the
tab's generator can yield the growing log while the teacher works. The generated skill is saved
under `HUBSKILLS_HOME/space/generated/<id>/` and previewed from there.
"""

from __future__ import annotations

import contextvars
import json
import queue
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from registry import (
    HubskillsError,
    Settings,
    display,
    load_skill,
    safe_html,
    suite_path,
)

POLL_S = 0.25


@dataclass
class GenerateJob:
    """One generation: its options, the lines logged so far, and its outcome."""

    task: str
    options: dict[str, Any]
    settings: Settings
    base_url: str | None = None
    lines: list[str] = field(default_factory=list)
    report: Any = None
    error: BaseException | None = None


def output_dir(home: Path) -> Path:
    """A fresh folder for one generated skill."""
    folder = home / "space" / "generated" / secrets.token_hex(6)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def stream(job: GenerateJob) -> Iterator[list[str]]:
    """Run the job in a thread; yield the log each time new lines arrive, then once at the end.

    The outcome is left in `job.report` or `job.error` (a `HubskillsError` when generation is
    not available in this build).
    """
    lines: queue.Queue[str] = queue.Queue()

    def work() -> None:
        try:
            from registry import generate_skill
        except ImportError as err:
            job.error = HubskillsError("skill generation is not available in this build",
                                       hint="update hubskills, or use the CLI: hubskills "
                                            "generate \"TASK\"")
            job.error.__cause__ = err
            return
        try:
            job.report = generate_skill(job.task, settings=job.settings, progress=lines.put,
                                        base_url=job.base_url, **job.options)
        except Exception as err:  # noqa: BLE001 - reported by the tab as a readable message
            job.error = err

    # The worker runs in this request's context, so its writes know the request's keys.
    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(work,), name="space-generate",
                              daemon=True)
    thread.start()
    while thread.is_alive() or not lines.empty():
        try:
            job.lines.append(lines.get(timeout=POLL_S))
        except queue.Empty:
            continue
        while not lines.empty():
            job.lines.append(lines.get_nowait())
        yield job.lines
    thread.join()
    yield job.lines


def preview(folder: Path) -> tuple[str, str]:
    """The generated SKILL.md (a model wrote it: through the one sanitiser) and its suite
    (pretty JSON)."""
    skill = load_skill(folder)
    path = suite_path(folder)
    suite = json.dumps(json.loads(path.read_text(encoding="utf-8")), indent=2) \
        if path.is_file() else "{}"
    header = f"## {skill.name}\n*{skill.description}*\n\n`v{skill.version or '0.1.0'}`\n\n"
    return safe_html(header + skill.body), suite


def report_markdown(report: Any) -> str:
    """A short summary of a `GenerateReport`: teacher, cases, best round per student."""
    lines = [f"**{report.name}** by `{report.teacher}` · {report.cases} test cases"
             + (" (verified)" if report.suite_verified else "")]
    best = report.best() if hasattr(report, "best") else None
    for s in best.students if best else []:
        lines.append(f"- `{s.model}`: {display.pct(s.baseline)} → {display.pct(s.skill)} with "
                     f"the skill, lift {display.lift_interval(s.lift, s.lo, s.hi)} "
                     f"(**{s.verdict}**)")
    lines += [f"- ⚠️ {w}" for w in report.warnings]
    return "\n".join(lines)
