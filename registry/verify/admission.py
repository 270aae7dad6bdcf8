"""Submissions admitted through one gate: pull requests on the results dataset, reviewed for its
owner, told on their thread, and merged only as the bytes that were replayed.

A contributor's runs wait in an open pull request on the results dataset. Reviewing one
(`examine`) reads what it changes (`stores.submissions`); the gate (`gate.py`) refuses it whole
unless it only adds new run files within the verifier's bounds; then each run file is replayed
from the exact bytes at the commit reviewed (no model is called; in a child process within the
verifier's time cap, `bounded.py`, which also downloads, hashes and bounds those bytes: the
reviewing process, the Space's, never reads them), unless a record of these rows that counts
says so already.
The new records go in one commit, the result in one comment (`thread.py`), per pull request.

`replay_pending` reviews the open pull requests, at most `Settings.review_max_prs` of them a
call that the verifier has not settled yet at their current commit (the others are listed as
waiting); `merge_submission` is the only way hubskills merges: it reviews the pull request
again, refuses it (naming the first problem) unless every run replays clean and, under the
owner's `review_spot_check`, was spot-checked, then commits exactly the replayed files to
`main` and closes the pull request (`ResultsDataset.admit`). `verify_and_keep` is `hubskills
verify NS/NAME --run`'s replay, recorded.
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from typing import TYPE_CHECKING

from registry._version import __version__
from registry.errors import HubskillsError
from registry.results.leaderboard_badges import REPLAY, SPOT_CHECK
from registry.stores.verifications import RunFile, for_rows, read_records, rows_hash
from registry.verify.bounded import Inspected, Replay, limits, named_skill, open_replay
from registry.verify.gate import RunFileAdded, added_runs, refusal
from registry.verify.records import (
    CONCLUSIVE,
    append_records,
    make_record,
    recorded_line,
    verify_and_record,
)
from registry.verify.thread import (
    NOT_CHECKED,
    Review,
    SubmissionCheck,
    admitted_text,
    comment_text,
    said,
    settled,
)

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.hub import PullRequest
    from registry.stores.base import SkillStore
    from registry.stores.records import Record
    from registry.verify.replay import Verification

log = logging.getLogger(__name__)
__all__ = ["NOT_CHECKED", "SubmissionCheck", "comment_text", "merge_submission",
           "replay_pending", "verify_and_keep"]


def replay_pending(store: SkillStore, settings: Settings, *,
                   comment: bool = True) -> list[SubmissionCheck]:
    """Review the open pull requests on ``store``'s results dataset (module docstring) and,
    with ``comment``, tell each reviewed one on its thread, once per review. A local store has
    no pull requests: [].

    Raises:
        HubskillsError: the Hub could not be asked, or no token says who the verifier is.
    """
    pulls = store.results.open_pull_requests()
    if not pulls:
        return []
    verifier, records = store.results.producer(), read_records(store)
    found: list[SubmissionCheck] = []
    examined = 0
    for pr in pulls:
        review, (mine, head) = _settled(store, pr, verifier)
        if review is None and examined >= settings.review_max_prs:
            review = Review(pr, head, waiting=(
                f"waits for a later refresh: hubskills examines at most "
                f"{settings.review_max_prs} pull request(s) a refresh"))
        elif review is None:
            examined += 1
            review = examine(store, settings, pr, head, records, verifier)
            review = _told(store, review, mine) if comment else review
        found += review.outcome()
    return found


def _settled(store: SkillStore, pr: PullRequest, verifier: str
             ) -> tuple[Review | None, tuple[list[str], str]]:
    """The review the verifier already gave ``pr`` at its current commit, if one stands, and
    (the verifier's comments on it, that commit); a pull request that cannot be read is a
    review that waits."""
    try:
        head = store.results.pull_head(pr)
        mine = [c.text for c in store.results.comments(pr.num) if c.author == verifier]
    except HubskillsError as err:
        return Review(pr, "", waiting=f"could not be read: {err}"), ([], "")
    return settled(mine, pr, head), (mine, head)


def examine(store: SkillStore, settings: Settings, pr: PullRequest, head: str,
            records: list[Record], verifier: str) -> Review:
    """Review ``pr`` at commit ``head``: refused by the gate, or each run file replayed (or
    read from ``records``, the records that count; new ones are appended to it and to the
    dataset, in one commit). Never raises: what cannot be read or recorded waits."""
    try:
        submission = store.results.submission(pr, head)
        if (why := refusal(submission, settings)) is not None:
            return Review(pr, head, refused=why)
        runs = added_runs(submission)
    except HubskillsError as err:
        return Review(pr, head, waiting=f"could not be read: {err}")
    with ExitStack() as stack:  # each run file read, hashed and bounded in its replay's child
        replays = []
        for run in runs:  # every run's rows within bounds before any replay
            replay = stack.enter_context(open_replay(store, settings, run, head))
            seen = replay.inspect()
            if seen.error is not None:
                return Review(pr, head, waiting=f"could not be read: {seen.error}")
            if seen.refused is not None:
                return Review(pr, head, refused=seen.refused)
            replays.append((run, replay, seen))
        checks, new = [], []
        for run, replay, seen in replays:
            check, record = _replayed(settings, pr, run, replay, seen, records, verifier)
            checks.append(check)
            new += [record] if record is not None else []
    if new:
        try:
            append_records(store, new, f"Verify {len(new)} run(s) of pull request #{pr.num}: "
                           + ", ".join(f"{r['run_id']} {r['status']}" for r in new))
        except HubskillsError as err:
            log.warning("could not record the replays of pull request #%d: %s", pr.num, err)
            return Review(pr, head, waiting=f"its replays could not be recorded: {err}")
        records += new
    return Review(pr, head, checks)


def _replayed(settings: Settings, pr: PullRequest, run: RunFileAdded, replay: Replay,
              seen: Inspected, records: list[Record], verifier: str
              ) -> tuple[SubmissionCheck, Record | None]:
    """One run file's check, and the record to append (None: one that counts exists, or the
    replay judged nothing); ``seen``: what ``replay``'s child read of it."""
    rows = RunFile(run.run_id, run.path, seen.rows_hash)
    record = _kept(records, rows)
    new = None
    if record is None:
        found = replay.run()
        record = make_record(found, rows, skill_repo=seen.repo, skill_revision=seen.revision,
                             verified_by=verifier)
        new = record if found.recorded else None
    replay.close()
    return SubmissionCheck(pr.num, pr.url, pr.author, run.run_id, seen.repo, rows.rows_hash,
                           str(record.get("status")), record.get("first_problem"),
                           path=run.path), new


def _told(store: SkillStore, review: Review, mine: list[str]) -> Review:
    """``review``, commented on its pull request unless the verifier said it already (nothing
    is said of a review that waits; a comment that cannot be posted is logged, and the view
    still lists the review)."""
    if not review.is_complete or said(mine, review):
        return review
    text = comment_text(review)
    try:
        store.results.comment(review.pr.num, text)
    except HubskillsError as err:
        log.warning("could not comment on pull request #%d: %s", review.pr.num, err)
        return review
    mine.append(text)
    return review.told()


def merge_submission(store: SkillStore, settings: Settings, num: int) -> list[SubmissionCheck]:
    """Admit pull request ``num`` on ``store``'s results dataset: review it again (and tell
    it), then commit exactly the replayed run files to `main` and close it; returns its checks.

    Raises:
        HubskillsError: no such open pull request, or it is refused, or a run does not replay
            clean (or awaits the owner's spot check), or it changed meanwhile, or the Hub
            refused.
    """
    pr = next((p for p in store.results.open_pull_requests() if p.num == num), None)
    if pr is None:
        raise HubskillsError(f"no open pull request #{num} on {store.results.source()}",
                             hint="hubskills review pending  # the open pull requests")
    verifier, records = store.results.producer(), read_records(store)
    _, (mine, head) = _settled(store, pr, verifier)
    review = _told(store, examine(store, settings, pr, head, records, verifier), mine)
    _refuse_unless_clean(review, settings, records)
    files = {c.path: store.results.read_at(c.path, head) for c in review.checks}
    if store.results.pull_head(pr) != head or any(
            rows_hash(files[c.path]) != c.rows_hash for c in review.checks):
        raise HubskillsError(f"pull request #{num} is not merged: it changed while it was "
                             "replayed", hint=f"hubskills review merge {num}  # again")
    store.results.close(num, admitted_text(review, store.results.admit(num, files)))
    return review.checks


def _refuse_unless_clean(review: Review, settings: Settings, records: list[Record]) -> None:
    """Raise, naming the first problem, unless ``review`` may be admitted."""
    num = review.pr.num
    if review.refused is not None or review.waiting is not None:
        said_ = "is refused" if review.waiting is None else "could not be examined"
        raise HubskillsError(f"pull request #{num} {said_}: {review.refused or review.waiting}",
                             hint="hubskills review pending  # what each pull request holds")
    for check in review.checks:
        again = (f"hubskills verify {check.skill_repo or 'NS/NAME'} --run {check.run_id} "
                 f"--revision refs/pr/{num}")
        why = {"mismatch": "is a mismatch", NOT_CHECKED: "could not be replayed",
               "not replayable": "is not replayable (hubskills admits only runs that replay "
                                 "clean)"}.get(check.status)
        if why is None and settings.review_spot_check and not _spot_checked(records, check):
            why, again = ("awaits a spot check (the owner's HUBSKILLS_REVIEW_SPOT_CHECK)",
                          f"{again} --resample 10")
        if why is not None:
            raise HubskillsError(f"pull request #{num} is not merged: run {check.run_id} {why} "
                                 f"({check.first_problem or 'no problem named'})", hint=again)


def _spot_checked(records: list[Record], check: SubmissionCheck) -> bool:
    """Whether a record that counts found ``check``'s rows consistent when re-asked."""
    rows = RunFile(check.run_id, check.path, check.rows_hash)
    spot = sorted((r for r in for_rows(records, rows) if r.get("kind") == SPOT_CHECK),
                  key=lambda r: str(r.get("verified_at")))
    return bool(spot) and spot[-1].get("status") == "consistent"


def verify_and_keep(store: SkillStore, repo: str, run_id: str, settings: Settings, *,
                    revision: str | None = None) -> tuple[Verification, str]:
    """Replay run ``run_id`` of ``repo`` as ``store``'s dataset holds it (at ``revision``) and
    record the result beside the runs, unless a conclusive record of these exact rows counts
    already; returns the replay and a line saying what was kept (a record that cannot be
    written, e.g. without write access, is said, never raised: the replay stands).

    Raises:
        RunNotFound: no such run (at ``revision``).
        HubskillsError: the dataset could not be read.
    """
    from registry.verify.pushed import verify_published
    from registry.verify.reading import read_pushed

    data = read_pushed(store, run_id, revision)
    report = verify_published(store, repo, run_id, settings, data=data,
                              limits=limits(settings))
    run = RunFile(run_id, "", rows_hash(data))
    try:
        record, kept = verify_and_record(store, run, lambda: report, skill_repo=repo,
                                         skill_revision=_named_skill(data)[1])
    except HubskillsError as err:
        return report, f"not recorded: {err}"
    return report, recorded_line(record, kept)


def _kept(records: list[Record], run: RunFile) -> Record | None:
    """The latest replay record of these rows that stands: a conclusive one, or one that found
    them not replayable with this very hubskills (a later one may replay them)."""
    mine = [r for r in for_rows(records, run) if r.get("kind", REPLAY) == REPLAY
            and (r.get("status") in CONCLUSIVE or r.get("hubskills_version") == __version__)]
    return max(mine, key=lambda r: str(r.get("verified_at"))) if mine else None


def _named_skill(data: bytes) -> tuple[str | None, str | None]:
    """The skill repo and revision the run's first row names (None when it names none)."""
    return named_skill(data)
