"""The one gate for submissions: what a pull request on the results dataset may change.

A pull request is admitted whole or not at all. It may only ADD new run files,
`data/evals/YYYY-MM/<run_id>.jsonl`, each a run id `main` does not hold yet, within the
verifier's bounds (`Settings`: run files per pull request, bytes per file, rows per run); each
must then replay clean (`admission.py`). Anything else refuses all of it, naming the first
problem: a changed or deleted file, a verification record (only the verifier writes those),
any other path, a file outside `data/`, too many or too large runs, a pull request whose branch
point cannot be found. Refusing here reads file listings only: nothing is downloaded or
replayed for a pull request that cannot be admitted.

A path in a reason is the submitter's text: it is shown with its control characters escaped
and cut short (`shown`), and every page or comment quotes it as code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from registry.stores.records import run_id_of

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.stores.submissions import Change, Submission

MB = 1_000_000
SHOWN = 160  # characters of a submitter's path a reason shows


@dataclass(frozen=True)
class RunFileAdded:
    """A run file the pull request adds: its path, run id, size and blob id."""

    path: str
    run_id: str
    size: int
    blob_id: str | None


def shown(path: str) -> str:
    """A submitter's path as a reason shows it: control characters escaped, cut short."""
    text = path.encode("unicode_escape").decode("ascii") if not path.isprintable() else path
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def refusal(submission: Submission, settings: Settings) -> str | None:
    """Why ``submission`` cannot be admitted as it stands (the first problem), from its listing
    alone; None when it only adds new run files within the bounds."""
    if not submission.branched:
        return ("where it branched from main is not among main's latest commits: open it again "
                "from the current main")
    for change in submission.changes:
        if why := _change_refusal(change):
            return why
    runs = added_runs(submission)
    if not runs:
        return "it adds no run file (data/evals/YYYY-MM/RUN_ID.jsonl)"
    if len(runs) > settings.review_max_runs:
        return (f"it adds {len(runs)} run files, more than the {settings.review_max_runs} a "
                "pull request may add (the verifier's HUBSKILLS_REVIEW_MAX_RUNS)")
    return _runs_refusal(runs, submission, settings)


def _change_refusal(change: Change) -> str | None:
    where = shown(change.path)
    if change.kind == "deletes":
        return f"it deletes {where}: a pull request may only add new run files"
    if change.kind == "changes":
        return f"it changes {where}, a file already on main: run files are never edited"
    if change.path.startswith("verifications/"):
        return (f"it adds {where}, a verification record: records are written only by the "
                "verifier")
    if run_id_of(change.path) is None:
        return (f"it adds {where}, which is not a new run file "
                "(data/evals/YYYY-MM/RUN_ID.jsonl)")
    return None


def added_runs(submission: Submission) -> list[RunFileAdded]:
    """The run files ``submission`` adds, by path (its other changes are `refusal`'s)."""
    found = []
    for change in submission.changes:
        run_id = run_id_of(change.path) if change.kind == "adds" else None
        if run_id is not None:
            found.append(RunFileAdded(change.path, run_id, change.size, change.blob_id))
    return found


def _runs_refusal(runs: list[RunFileAdded], submission: Submission,
                  settings: Settings) -> str | None:
    on_main = {PurePosixPath(p).stem for p in submission.on_main if run_id_of(p)}
    seen: set[str] = set()
    limit = int(settings.review_max_run_mb * MB)
    for run in runs:
        if run.run_id in on_main:
            return f"it adds run {run.run_id}, which main already holds"
        if run.run_id in seen:
            return f"it adds run {run.run_id} twice"
        seen.add(run.run_id)
        if run.size > limit:
            return (f"{run.path} is {run.size:,} bytes, more than the {limit:,} a run file may "
                    "hold (the verifier's HUBSKILLS_REVIEW_MAX_RUN_MB)")
    return None


def rows_refusal(run: RunFileAdded, data: bytes, settings: Settings) -> str | None:
    """Why a run file's bytes cannot be replayed within the verifier's bounds (None: they
    can): more bytes than listed, or more rows than a replay regrades."""
    if len(data) > int(settings.review_max_run_mb * MB):
        return f"{run.path} holds more bytes than its listing said"
    rows = sum(1 for line in data.splitlines() if line.strip())
    if rows > settings.replay_max_samples:
        return (f"{run.path} holds {rows:,} rows, more than the {settings.replay_max_samples:,}"
                " samples a replay regrades (the verifier's HUBSKILLS_REPLAY_MAX_SAMPLES)")
    return None
