"""A blind review of one run: the cases, the answers so far, and where new answers go.

`open_local_review` reviews a run saved on this machine: its secret (`review.key`, made on the
first review) and answers (`feedback.jsonl`) live in the run's folder. `open_registry_review`
reviews a run in a registry's results dataset, as the Space does: answers go to the dataset as
one file per reviewer (`stores.feedback`), written with the store's own credentials and the
reviewer's name recorded in each line. Either way an answer is kept only once written, a
reviewer answers a case once, and a file that fails its checks is refused whole, never
rewritten.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from registry._io import atomic_write_bytes
from registry.errors import HubskillsError
from registry.format.claims import plain_text
from registry.results.runs import ResultRow, read_manifest, read_rows, run_dir
from registry.review.feedback import (
    CHOICES,
    MAX_COMMENT,
    MAX_FILE_BYTES,
    MAX_LINE_BYTES,
    REVIEWER,
    Answer,
    as_jsonl,
    new_secret,
    now,
    parse_answers,
    sealed,
    skill_side,
)
from registry.review.pairs import ReviewCase, folder_prompts, review_cases, suite_prompts
from registry.review.summary import PreferenceSummary, summarize
from registry.stores.base import SkillStore

FEEDBACK = "feedback.jsonl"
SECRET = "review.key"

Save = Callable[[str, list[Answer]], None]  # (reviewer, all of their answers) -> written


class Review:
    """One run's blind review (see the module docstring); thread-safe."""

    def __init__(self, run_id: str, cases: list[ReviewCase], answers: list[Answer], *,
                 save: Save, secret: str | None = None, sides: str | None = None) -> None:
        """`secret` seals each answer (a local review); `sides` draws each reviewer's sides
        (`case`)."""
        self.run_id, self.cases, self._save, self._secret = run_id, cases, save, secret
        self._sides = sides
        self._answers = list(answers)
        self._lock = threading.Lock()

    @property
    def answers(self) -> list[Answer]:
        """Every answer so far, of every reviewer."""
        with self._lock:
            return list(self._answers)

    def case(self, case: str, reviewer: str | None = None) -> ReviewCase:
        """The case `case` as shown to `reviewer`: the skill's answer on the side drawn for
        them (each reviewer has sides of their own: one reviewer's published answers, which
        say where the skill was, tell another nothing; a red-team note).

        Raises:
            HubskillsError: the run has no pair for it.
        """
        found = next((c for c in self.cases if c.case == case), None)
        if found is None:
            raise HubskillsError(f"run {self.run_id} has no case {case!r} to review",
                                 hint=f"hubskills review-outputs {self.run_id} --summary")
        if reviewer is None or self._sides is None:
            return found
        return replace(found, skill_side=skill_side(self._sides, self.run_id, found.case,
                                                    found.sample, reviewer))

    def answered(self, reviewer: str) -> dict[str, Answer]:
        """`reviewer`'s answers by case."""
        return {a.case: a for a in self.answers if a.reviewer == reviewer}

    def next_case(self, reviewer: str) -> ReviewCase | None:
        """The first case `reviewer` has not answered (None: all answered)."""
        done = self.answered(reviewer)
        found = next((c for c in self.cases if c.case not in done), None)
        return None if found is None else self.case(found.case, reviewer)

    def progress(self, reviewer: str) -> tuple[int, int]:
        """(cases answered by `reviewer`, cases to review)."""
        return len(self.answered(reviewer)), len(self.cases)

    def answer(self, reviewer: str, case: str, choice: str, comment: str = "") -> Answer:
        """Record `reviewer`'s `choice` on `case`; kept once written.

        Raises:
            HubskillsError: an unknown case or choice, a second answer to the case, or the
                write failed (then nothing is kept).
        """
        shown = self.case(case, reviewer)
        if choice not in CHOICES:
            raise HubskillsError(f"{choice!r} is not a choice: pick A, B, tie or both_bad",
                                 hint=f"hubskills review-outputs {self.run_id}")
        with self._lock:
            if any(a.reviewer == reviewer and a.case == case for a in self._answers):
                raise HubskillsError(f"{reviewer} already answered case {case!r} of run "
                                     f"{self.run_id}: one answer per reviewer and case",
                                     hint=f"hubskills review-outputs {self.run_id} --summary")
            if not re.match(REVIEWER, reviewer) or ".." in reviewer:
                raise HubskillsError(f"{reviewer!r} is not a reviewer name: letters, digits, "
                                     "'.', '_' and '-', as a Hub user name",
                                     hint=f"hubskills review-outputs {self.run_id} "
                                          "--reviewer NAME")
            new = sealed(self._secret, Answer.model_validate(dict(
                run_id=self.run_id, case=case, sample=shown.sample, skill_side=shown.skill_side,
                choice=choice, comment=plain_text(comment).strip()[:MAX_COMMENT],
                reviewer=reviewer, time=now())))
            self._save(reviewer, [*[a for a in self._answers if a.reviewer == reviewer], new])
            self._answers.append(new)
            return new

    def summary(self) -> PreferenceSummary:
        """The preference summary of every answer so far."""
        return summarize(self.answers, self.cases)


def _samples(cases: list[ReviewCase]) -> dict[str, str]:
    return {c.case: c.sample for c in cases}


def _local_secret(folder: Path) -> str:
    """The run's review secret, made (0600, never overwritten) on first use."""
    path = folder / SECRET
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        secret = path.read_text(encoding="ascii").strip()
        if len(secret) != 64:
            raise HubskillsError(f"{path} is not a review secret (edited by hand?)",
                                 hint=f"hubskills runs show {folder.name}") from None
        return secret
    secret = new_secret()
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(secret + "\n")
    return secret


def local_feedback(runs_dir: Path, run_id: str) -> Path:
    """Where a local review keeps its answers."""
    return run_dir(runs_dir, run_id) / FEEDBACK


def open_local_review(runs_dir: Path, run_id: str, *, skill_dir: Path | None = None
                      ) -> Review:
    """The review of run `run_id` saved under `runs_dir` (prompts from its suite).

    Raises:
        RunNotFound: no such run.
        HubskillsError: no pairs to review, or `feedback.jsonl` fails its checks (nothing is
            changed: move it aside to start again).
    """
    manifest = read_manifest(runs_dir, run_id)
    rows = read_rows(runs_dir, run_id)
    folder = run_dir(runs_dir, run_id)
    probe = review_cases(run_id, rows, "0" * 64)  # refuses a run with no pair, writing nothing
    del probe
    secret = _local_secret(folder)
    cases = review_cases(run_id, rows, secret, suite_prompts(manifest, skill_dir))
    path = folder / FEEDBACK
    answers = []
    if path.is_file():
        answers = parse_answers(path.read_bytes(), run_id=run_id, samples=_samples(cases),
                                source=str(path), secret=secret,
                                hint=f"mv {path} {path}.bad  # then: hubskills "
                                     f"review-outputs {run_id}")

    def save(reviewer: str, mine: list[Answer]) -> None:
        others = [a for a in parse_answers(path.read_bytes(), run_id=run_id,
                                           samples=_samples(cases), source=str(path),
                                           secret=secret) if a.reviewer != reviewer] \
            if path.is_file() else []
        atomic_write_bytes(path, as_jsonl([*others, *mine]))

    return Review(run_id, cases, answers, save=save, secret=secret, sides=secret)


def parse_run_rows(data: bytes) -> list[ResultRow]:
    """The rows of a pushed run's file (lines that do not validate are skipped)."""
    rows = []
    for line in data.decode("utf-8", errors="replace").splitlines():
        if line.strip():
            try:
                rows.append(ResultRow.model_validate_json(line))
            except ValueError:
                continue
    return rows


def registry_answers(store: SkillStore, run_id: str, cases: list[ReviewCase]) -> list[Answer]:
    """Every reviewer's answers on `run_id` in `store`'s results dataset, each file checked
    (its lines are its reviewer's, of this run, once per case).

    Raises:
        HubskillsError: a file fails its checks.
    """
    from registry.stores.feedback import read_feedback

    answers = []
    for path, data in read_feedback(store, run_id).items():
        owner = path.rsplit("/", 1)[-1].removesuffix(".jsonl")
        found = parse_answers(data, run_id=run_id, samples=_samples(cases), source=path,
                              hint=f"hubskills review-outputs {run_id} --summary")
        if any(a.reviewer != owner for a in found):
            raise HubskillsError(f"{path} holds answers of another reviewer than {owner} "
                                 "(edited by hand?)", hint=f"hubskills runs show {run_id}")
        answers += found
    return answers


def open_registry_review(store: SkillStore, run_id: str, secret: str, *,
                         prompts: Mapping[str, str] | None = None,
                         skill_folder: Callable[[str, str], Path] | None = None) -> Review:
    """The review of run `run_id` in `store`'s results dataset; sides drawn from `secret`.
    The prompts are `prompts`, else read from the suite of the skill folder that
    `skill_folder(repo, revision)` gives for the revision the rows name (when they name one).

    Raises:
        RunNotFound: the dataset holds no such run.
        HubskillsError: no pairs to review, or a feedback file fails its checks.
    """
    from registry.errors import RunNotFound
    from registry.stores.feedback import feedback_path, put_feedback

    feedback_path(run_id, "reviewer")  # a run id that could name another path is refused
    data = store.results.read_run(run_id)
    if data is None:
        raise RunNotFound(f"the results dataset holds no run {run_id}",
                          hint="hubskills leaderboard")
    rows = parse_run_rows(data)
    if prompts is None and skill_folder is not None and rows and rows[0].skill_repo \
            and rows[0].skill_revision:
        try:
            prompts = folder_prompts(skill_folder(rows[0].skill_repo, rows[0].skill_revision),
                                     rows[0].mode)
        except HubskillsError:
            prompts = None  # the skill cannot be fetched: the answers are shown without
    cases = review_cases(run_id, rows, secret, prompts)
    answers = registry_answers(store, run_id, cases)

    def save(reviewer: str, mine: list[Answer]) -> None:
        put_feedback(store, run_id, reviewer, as_jsonl(mine))

    return Review(run_id, cases, answers, save=save, sides=secret)


def push_feedback(store: SkillStore, runs_dir: Path, run_id: str) -> list[str]:
    """Push a local review's answers (one file per reviewer) to `store`'s results dataset,
    beside the run; returns the paths written ([] when the run has no answers).

    Raises:
        HubskillsError: the dataset does not hold the run, or the local answers fail their
            checks.
    """
    from registry.stores.feedback import put_feedback

    if not local_feedback(runs_dir, run_id).is_file():
        return []
    if store.results.read_run(run_id) is None:
        raise HubskillsError(f"the results dataset does not hold run {run_id}: its answers "
                             "are pushed beside it",
                             hint=f"hubskills runs show {run_id}  # then push the run")
    review = open_local_review(runs_dir, run_id)
    by_reviewer: dict[str, list[Answer]] = {}
    for answer in review.answers:
        by_reviewer.setdefault(answer.reviewer, []).append(answer)
    return [put_feedback(store, run_id, name, as_jsonl(mine))
            for name, mine in sorted(by_reviewer.items())]


def runs_feedback(store: SkillStore, run_ids: set[str]) -> PreferenceSummary:
    """The summary of every answer on the runs `run_ids` in `store`'s results dataset (a
    skill page's line); lines that do not parse, a reviewer's later answers to a case already
    answered, and lines in one reviewer's file that name another (one file counted as many
    people; a red-team note) are left out."""
    from registry.stores.feedback import read_feedback

    kept: dict[tuple[str, str, str], Answer] = {}
    for path, data in read_feedback(store, runs=run_ids).items():
        run_id = path.split("/")[1] if path.count("/") == 2 else ""
        owner = path.rsplit("/", 1)[-1].removesuffix(".jsonl")  # whose file: their lines only
        if run_id not in run_ids or len(data) > MAX_FILE_BYTES:
            continue
        for line in data.decode("utf-8", errors="replace").splitlines():
            if len(line) > MAX_LINE_BYTES:  # characters: a bound as good as bytes here
                continue
            try:
                answer = Answer.model_validate_json(line)
            except ValueError:
                continue
            if answer.run_id == run_id and answer.reviewer == owner:  # one file, one person
                kept.setdefault((run_id, answer.reviewer, answer.case), answer)
    return summarize(list(kept.values()))
