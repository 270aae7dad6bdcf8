"""What a reviewer is shown: per case one pair of answers, the baseline's and the skill's.

A case is shown once, with its first sample (by model, then repeat) where both arms answered
without an error; cases where no sample has both are left out, and a run with no such case at
all (one arm only, a trigger run, every sample an error) cannot be reviewed. The prompt comes
from the suite when it can be read (for agent mode the task, and the files the agent left in
its workspace come from the rows).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from registry.errors import HubskillsError
from registry.results.runs import ResultRow, RunManifest, latest_rows
from registry.review.feedback import Side, skill_side

NO_PROMPT = "(the prompt is not available: the suite this run graded could not be read)"
MAX_FILE = 20_000  # characters of one final file shown


@dataclass(frozen=True)
class Shown:
    """One arm's answer as shown: the output, and in agent mode the final files."""

    output: str
    files: dict[str, str] = field(default_factory=dict)
    passed: bool | None = None  # the checks' verdict


@dataclass(frozen=True)
class ReviewCase:
    """One case to review: the prompt and two answers, the skill's on `skill_side`."""

    case: str
    sample: str
    prompt: str
    mode: str
    skill_side: Side
    skill: Shown
    baseline: Shown

    def side(self, side: Side) -> Shown:
        """The answer shown on `side`."""
        return self.skill if side == self.skill_side else self.baseline


def _files(row: ResultRow) -> dict[str, str]:
    shown = {}
    for f in row.workspace or []:
        if f.content is None:
            text = f"({f.status}; {f.size} bytes, content not stored)"
        elif f.base64:
            text = f"({f.status}; binary, {len(base64.b64decode(f.content))} bytes)"
        else:
            text = f.content if len(f.content) <= MAX_FILE else f.content[:MAX_FILE] + "\n…"
        shown[f.path] = text
    return shown


def review_cases(run_id: str, rows: list[ResultRow], secret: str,
                 prompts: Mapping[str, str] | None = None, *,
                 hint: str | None = None) -> list[ReviewCase]:
    """The run's cases to review, in the run's case order, sides drawn from `secret`.

    Raises:
        HubskillsError: no case has a sample answered by both arms.
    """
    usable = [r for r in latest_rows(rows) if not r.is_error]
    by_sample: dict[tuple[str, str, int], dict[str, ResultRow]] = {}
    for row in usable:
        by_sample.setdefault((row.case_id, row.model, row.repeat), {})[row.arm] = row
    order = list(dict.fromkeys(r.case_id for r in rows))
    cases: list[ReviewCase] = []
    for case in order:
        pairs = sorted((k for k, arms in by_sample.items()
                        if k[0] == case and {"baseline", "skill"} <= arms.keys()),
                       key=lambda k: (k[1], k[2]))
        if not pairs:
            continue
        key = pairs[0]
        arms, sample = by_sample[key], f"{key[1]}#{key[2]}"
        shown = {arm: Shown(r.output, _files(r), r.passed) for arm, r in arms.items()}
        cases.append(ReviewCase(case, sample, (prompts or {}).get(case) or NO_PROMPT,
                                arms["skill"].mode, skill_side(secret, run_id, case, sample),
                                shown["skill"], shown["baseline"]))
    if not cases:
        found = sorted({r.arm for r in rows})
        why = ("it has no rows" if not rows else f"only the {found[0]} arm answered"
               if len(found) == 1 else "every sample is an error in one arm or the other")
        raise HubskillsError(f"run {run_id} has no pairs of answers to review: {why}",
                             hint=hint or f"hubskills runs show {run_id}")
    return cases


def suite_prompts(manifest: RunManifest, skill_dir: Path | None = None) -> dict[str, str]:
    """Each case's prompt from the suite of the skill folder the run graded ({} when it
    cannot be read: the folder moved, or the suite changed since)."""
    folder = skill_dir or (Path(manifest.skill_path) if manifest.skill_path else None)
    return {} if folder is None else folder_prompts(folder, manifest.mode)


def folder_prompts(folder: Path, mode: str) -> dict[str, str]:
    """Each case's prompt from the suite of the skill folder `folder` ({} when unreadable)."""
    from registry.evaluation.agent_mode import agent_suite_path
    from registry.format.suite import load_suite, suite_path

    if not folder.is_dir():
        return {}
    try:
        path = agent_suite_path(folder) if mode == "agent" else suite_path(folder)
        suite = load_suite(path, skill_dir=folder)
    except (HubskillsError, OSError):
        return {}
    return {case.id: case.prompt for case in suite.cases}
