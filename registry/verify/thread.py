"""What the verifier says on a pull request's thread, and how it knows it said it already.

One review of a pull request (`Review`: refused, or each run file's replay) is one comment,
ending with a hidden marker naming the commit reviewed and a digest of what was found, plus the
findings themselves (base64 of JSON, so nothing in them can close the HTML comment). Only the
verifier's own comments are read for markers (`settled`, `said`): anyone can post a marker's
text, and a submitter's fake "verified" comment must neither silence the real one nor settle
a pull request. Everything a submitter wrote (run ids, paths, problems that quote rows, the
author's name) is shown as code that nothing can close (`format.untrusted.code_span`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from registry._version import __version__
from registry.format.untrusted import code_span

if TYPE_CHECKING:
    from registry.hub import PullRequest

NOT_CHECKED = "not checked"  # could not be read or recorded, or waits: said nowhere
REFUSED = "refused"
_ICONS = {"verified": "✅", "mismatch": "❌", "not replayable": "⚠️", NOT_CHECKED: "⏳",
          REFUSED: "🚫"}
MARKER = "<!-- hubskills-review head={head} outcome={digest} data={data} -->"
_MARKER = re.compile(r"<!-- hubskills-review head=([0-9a-f]{7,64}) outcome=([0-9a-f]{16}) "
                     r"data=([A-Za-z0-9_=-]*) -->")
_KEPT = 400  # characters of a problem the marker keeps


@dataclass(frozen=True)
class SubmissionCheck:
    """What reviewing one run file of a pull request found (or, with no `run_id`, the pull
    request as a whole: refused, or not checked), and whether the thread was told now."""

    num: int
    url: str
    author: str
    run_id: str
    skill_repo: str | None
    rows_hash: str
    status: str  # verified, mismatch, not replayable, refused, not checked
    first_problem: str | None
    commented: bool = False
    path: str = ""

    def line(self) -> str:
        """One markdown line for a view; every submitter string as code."""
        why = f": {code_span(self.first_problem)}" if self.first_problem else ""
        told = " (commented on the pull request)" if self.commented else ""
        run = f", run {code_span(self.run_id)}" if self.run_id else ""
        return (f"{_ICONS.get(self.status, '')} [PR #{self.num}]({self.url}) by "
                f"{code_span(self.author)}{run}: **{self.status}**{why}{told}")


@dataclass(frozen=True)
class Review:
    """One pull request reviewed at commit `head`: `refused` (why), or `checks` (one per run
    file), or `waiting` (why it was not examined; nothing is said then)."""

    pr: PullRequest
    head: str
    checks: list[SubmissionCheck] = field(default_factory=list)
    refused: str | None = None
    waiting: str | None = None
    commented: bool = False

    def outcome(self) -> list[SubmissionCheck]:
        """The checks to list: the runs', or one for the pull request as a whole."""
        if self.refused is None and self.waiting is None:
            return self.checks
        status = REFUSED if self.waiting is None else NOT_CHECKED
        return [SubmissionCheck(self.pr.num, self.pr.url, self.pr.author, "", None, "", status,
                                self.refused or self.waiting, self.commented)]

    @property
    def is_complete(self) -> bool:
        """Whether there is something to say: refused, or every run replayed and recorded."""
        return self.waiting is None and all(c.status != NOT_CHECKED for c in self.checks)

    @property
    def is_admissible(self) -> bool:
        """Whether every run it adds replayed clean (and nothing refused it)."""
        return (self.is_complete and self.refused is None and bool(self.checks)
                and all(c.status == "verified" for c in self.checks))

    def told(self) -> Review:
        """This review, marked as commented on its pull request now."""
        return replace(self, checks=[replace(c, commented=True) for c in self.checks],
                       commented=True)


def marker(review: Review) -> str:
    """The hidden marker ending ``review``'s comment (module docstring)."""
    runs = [[c.run_id, c.rows_hash, c.status, c.skill_repo, (c.first_problem or "")[:_KEPT]]
            for c in review.checks]
    digest = hashlib.sha256(json.dumps([review.refused, [r[:3] for r in runs]]).encode())
    data = json.dumps({"v": __version__, "refused": (review.refused or "")[:_KEPT] or None,
                       "runs": runs})
    return MARKER.format(head=review.head, digest=digest.hexdigest()[:16],
                         data=base64.urlsafe_b64encode(data.encode()).decode())


def said(mine: list[str], review: Review) -> bool:
    """Whether the verifier's comments ``mine`` already say ``review``."""
    found = marker(review)
    return any(found in text for text in mine)


def settled(mine: list[str], pr: PullRequest, head: str) -> Review | None:
    """The review the verifier's comments ``mine`` already gave ``pr`` at commit ``head``
    (the latest), when nothing would change it (a `not replayable` run said by another
    hubskills may replay now); None when there is none."""
    for text in reversed(mine):
        for found in _MARKER.finditer(text):
            if found[1] == head and (review := _decoded(pr, head, found[3])) is not None:
                return review
    return None


def _decoded(pr: PullRequest, head: str, data: str) -> Review | None:
    try:
        said_: Any = json.loads(base64.urlsafe_b64decode(data.encode()))
        runs = [SubmissionCheck(pr.num, pr.url, pr.author, str(run), skill and str(skill),
                                str(rows), str(status), problem and str(problem))
                for run, rows, status, skill, problem in said_["runs"]]
        refused = said_["refused"]
    except (ValueError, TypeError, KeyError):
        return None
    if said_.get("v") != __version__ and any(c.status == "not replayable" for c in runs):
        return None
    return Review(pr, head, runs, refused=str(refused) if refused else None)


def comment_text(review: Review) -> str:
    """The comment for ``review`` (markdown, ending with its marker)."""
    if review.refused is not None:
        body = (f"🚫 **hubskills review: refused** pull request #{review.pr.num}\n\n"
                f"Why: {code_span(review.refused)}\n\nhubskills admits a pull request whole or "
                "not at all: one that only adds new run files (`data/evals/YYYY-MM/RUN_ID.jsonl`"
                "), each replaying clean. Nothing in this one was replayed or merged.")
    else:
        body = "\n\n".join(_run_text(check) for check in review.checks)
        body += (f"\n\nReplayed without calling any model by hubskills {__version__}. "
                 + ("Every run replays clean: the owner may admit this pull request as it "
                    "stands." if review.is_admissible else "hubskills admits only a pull "
                    "request whose every run replays clean: this one will not be merged as it "
                    "stands."))
    return f"{body}\n\n{marker(review)}"


def _run_text(check: SubmissionCheck) -> str:
    head = (f"{_ICONS.get(check.status, '')} **hubskills replay: {check.status}** for run "
            f"{code_span(check.run_id)}")
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
    return f"{head}\n\n{body}\n\nTo replay it yourself: {code_span(again)}"


def admitted_text(review: Review, commit: str) -> str:
    """The comment that closes an admitted pull request."""
    runs = ", ".join(code_span(c.run_id) for c in review.checks)
    return (f"✅ **hubskills review: admitted** pull request #{review.pr.num}: its run files "
            f"({runs}), as replayed, are on main in commit {code_span(commit)}; closed here "
            "rather than merged, so that nothing else in it could follow them.")
