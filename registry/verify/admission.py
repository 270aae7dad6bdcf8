"""Pending submissions replayed for the results dataset's owner, and the result told on the PR.

A contributor's run waits in an open pull request on the results dataset (`review.py`).
`replay_pending` replays each one from the exact bytes the pull request holds (no model is
called; code checks in the sandbox, or `not replayable` where none works), records the
verification beside the runs (`verifications.verify_and_record`: it names the rows by their
hash, so it still holds once the pull request is merged unchanged) and posts the result as a
comment on the pull request. The comment carries a marker naming the run and its rows hash, so
a pull request gets one comment per version of its rows, however often the Space refreshes.
What the rows say (a problem quotes stored values) is shown as code, never as markdown.

`merge_submission` is the only way hubskills merges a submission: it replays first and
refuses a `mismatch`. `verify_and_keep` is `hubskills verify NS/NAME --run`'s replay, recorded.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from functools import partial
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from registry._version import __version__
from registry.errors import HubskillsError
from registry.format.untrusted import code_span
from registry.results.leaderboard_badges import REPLAY
from registry.stores.base import ResultsDataset, SkillStore
from registry.stores.verifications import Record, RunFile, for_rows, read_records, rows_hash
from registry.verify.records import CONCLUSIVE, verify_and_record

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.hub import PullRequest, RemoteFile
    from registry.verify.replay import Verification

log = logging.getLogger(__name__)
MARKER = "<!-- hubskills-verification run={run} rows={rows} -->"
NOT_CHECKED = "not checked"  # the run could not be read, or its record not written
_ICONS = {"verified": "✅", "mismatch": "❌", "not replayable": "⚠️", NOT_CHECKED: "⏳"}


@dataclass(frozen=True)
class SubmissionCheck:
    """What replaying one pending run found, and whether its pull request was told now."""

    num: int
    url: str
    author: str
    run_id: str
    skill_repo: str | None
    rows_hash: str
    status: str  # verified, mismatch, not replayable, not checked
    first_problem: str | None
    commented: bool = False

    def line(self) -> str:
        """One markdown line for a view: PR, run, status and the first problem."""
        why = f": {code_span(self.first_problem)}" if self.first_problem else ""
        told = " (commented on the pull request)" if self.commented else ""
        return (f"{_ICONS.get(self.status, '')} [PR #{self.num}]({self.url}) by {self.author}, "
                f"run `{self.run_id}`: **{self.status}**{why}{told}")


def replay_pending(store: SkillStore, settings: Settings, *,
                   comment: bool = True) -> list[SubmissionCheck]:
    """Replay every run waiting in an open pull request on ``store``'s results dataset (rows
    already replayed are not replayed again) and, with ``comment``, post each result on its
    pull request once per version of its rows. A local store has no pull requests: [].

    Raises:
        HubskillsError: the Hub could not be asked, or a record could not be written.
    """
    waiting = store.results.pending()
    records = read_records(store) if waiting else []
    checks = [_check(store, settings, pr, entry, records) for pr, added in waiting
              for entry in added]
    return [_told(store.results, c) for c in checks] if comment else checks


def _check(store: SkillStore, settings: Settings, pr: PullRequest, entry: RemoteFile,
           records: list[Record]) -> SubmissionCheck:
    """`_replay` one run of one pull request; a run that could not be read or recorded is
    `not checked` (said in the view, never commented): one never hides the others."""
    try:
        return _replay(store, settings, pr, entry, records)
    except HubskillsError as err:
        log.warning("could not replay %s of pull request #%d: %s", entry.path, pr.num, err)
        return SubmissionCheck(pr.num, pr.url, pr.author, PurePosixPath(entry.path).stem, None,
                               entry.blob_id or "", NOT_CHECKED, str(err))


def merge_submission(store: SkillStore, settings: Settings, num: int) -> list[SubmissionCheck]:
    """Merge pull request ``num`` on ``store``'s results dataset after replaying its runs;
    returns what the replay found.

    Raises:
        HubskillsError: no such open pull request, or one of its runs is a `mismatch`
            (hubskills never merges those) or could not be replayed, or the Hub refused.
    """
    checks = [c for c in replay_pending(store, settings) if c.num == num]  # (and comment)
    if not checks:
        raise HubskillsError(f"no open pull request #{num} adds runs to "
                             f"{store.results.source()}",
                             hint="hubskills leaderboard --registry hub --pending")
    bad = next((c for c in checks if c.status in ("mismatch", NOT_CHECKED)), None)
    if bad is not None:
        said = "is a mismatch" if bad.status == "mismatch" else "could not be replayed"
        raise HubskillsError(
            f"pull request #{num} is not merged: run {bad.run_id} {said} "
            f"({bad.first_problem})", hint=f"hubskills verify {bad.skill_repo or 'NS/NAME'} "
            f"--run {bad.run_id} --revision refs/pr/{num}")
    store.results.merge(num, "Merged by hubskills after a replay: "
                        + ", ".join(f"{c.run_id} {c.status}" for c in checks))
    return checks


def verify_and_keep(store: SkillStore, repo: str, run_id: str, settings: Settings, *,
                    revision: str | None = None) -> tuple[Verification, str]:
    """Replay run ``run_id`` of ``repo`` as ``store``'s dataset holds it (at ``revision``) and
    record the result beside the runs, unless a conclusive record of these exact rows exists;
    returns the replay and a line saying what was kept (a record that cannot be written, e.g.
    without write access, is said, never raised: the replay stands).

    Raises:
        RunNotFound: no such run (at ``revision``).
        HubskillsError: the dataset could not be read.
    """
    from registry.verify.pushed import read_pushed, verify_published

    data = read_pushed(store, run_id, revision)
    report = verify_published(store, repo, run_id, settings, data=data)
    run = RunFile(run_id, "", rows_hash(data))
    try:
        record, kept = verify_and_record(store, run, lambda: report, skill_repo=repo,
                                         skill_revision=_named_skill(data)[1])
    except HubskillsError as err:
        return report, f"not recorded: {err}"
    if kept:
        return report, (f"already recorded: {record.get('status')} by "
                        f"{record.get('verified_by')} at {record.get('verified_at')}")
    return report, f"recorded as {record['status']} in the results dataset's verifications"


def comment_text(check: SubmissionCheck) -> str:
    """The pull request comment for ``check`` (markdown, ending with its marker)."""
    head = (f"{_ICONS.get(check.status, '')} **hubskills replay: {check.status}** for run "
            f"`{check.run_id}`")
    if check.status == "verified":
        body = ("The skill and suite are the ones the rows name, every planned sample is there "
                "once, every stored output regrades to its stored verdict and the summary "
                "recomputes. A replay proves the grading and the arithmetic, not that the "
                "outputs came from the model: a spot check (`--resample K`) speaks to that.")
    elif check.status == "mismatch":
        body = (f"First problem: {code_span(check.first_problem)}\n\nhubskills will not "
                "merge this pull request while its rows do not replay.")
    else:
        body = f"Why: {code_span(check.first_problem)}"
    again = (f"hubskills verify {check.skill_repo or 'NS/NAME'} --run {check.run_id} "
             f"--revision refs/pr/{check.num}")
    return (f"{head}\n\n{body}\n\nReplayed without calling any model by hubskills "
            f"{__version__}. To replay it yourself: `{again}`\n\n"
            + MARKER.format(run=check.run_id, rows=check.rows_hash))


def _replay(store: SkillStore, settings: Settings, pr: PullRequest, entry: RemoteFile,
            records: list[Record]) -> SubmissionCheck:
    """Replay one run of one pull request (or reuse the record of these exact rows)."""
    from registry.verify.pushed import read_pushed, verify_published

    run_id = PurePosixPath(entry.path).stem
    data = read_pushed(store, run_id, pr.revision)
    run = RunFile(run_id, entry.path, rows_hash(data))
    repo, revision = _named_skill(data)
    record = _kept(records, run)
    if record is None:
        replay = partial(verify_published, store, repo or "", run_id, settings, data=data)
        record, _ = verify_and_record(store, run, replay, skill_repo=repo,
                                      skill_revision=revision, records=records)
        records.append(record)
    return SubmissionCheck(pr.num, pr.url, pr.author, run_id, repo, run.rows_hash,
                           str(record.get("status")), record.get("first_problem"))


def _kept(records: list[Record], run: RunFile) -> Record | None:
    """The latest replay record of these rows that stands: a conclusive one, or one that found
    them not replayable with this very hubskills (a later one may replay them)."""
    mine = [r for r in for_rows(records, run) if r.get("kind", REPLAY) == REPLAY
            and (r.get("status") in CONCLUSIVE or r.get("hubskills_version") == __version__)]
    return max(mine, key=lambda r: str(r.get("verified_at"))) if mine else None


def _named_skill(data: bytes) -> tuple[str | None, str | None]:
    """The skill repo and revision the run's first row names (None when it names none)."""
    first = data.split(b"\n", 1)[0]
    try:
        row: Any = json.loads(first)
    except ValueError:
        return None, None
    if not isinstance(row, dict):
        return None, None
    repo, revision = row.get("skill_repo"), row.get("skill_revision")
    return (repo if isinstance(repo, str) else None,
            revision if isinstance(revision, str) else None)


def _told(results: ResultsDataset, check: SubmissionCheck) -> SubmissionCheck:
    """``check``, commented on its pull request unless a comment names these rows already (a
    comment that cannot be posted is logged, never raised: the view still shows it)."""
    from dataclasses import replace

    if check.status == NOT_CHECKED:
        return check
    marker = MARKER.format(run=check.run_id, rows=check.rows_hash)
    try:
        if any(marker in text for text in results.comments(check.num)):
            return check
        results.comment(check.num, comment_text(check))
    except HubskillsError as err:
        log.warning("could not comment on pull request #%d: %s", check.num, err)
        return check
    return replace(check, commented=True)
