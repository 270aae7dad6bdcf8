"""The answers of a blind review: `feedback.jsonl`, one line per answer, and the sides.

Each line says which run, case and sample it answers, which side (A or B) showed the skill's
answer, the choice (A, B, tie, both_bad), the comment, who answered and when. Which side shows
the skill is drawn per case and reviewer from a secret of the review (`skill_side`: an HMAC of
the run, the case, the sample and the reviewer), so a resumed review shows the same sides, yet
nobody can tell them from the case id, nor from another reviewer's published answers. A local
review keeps its secret beside the run (`review.key`) and seals each line with it (`seal`): a
line edited by hand, or copied from another run, no longer matches and is refused rather than
counted.

Parsing is strict (`parse_answers`): a line that does not validate, names another run, a case
with no pair, another sample or side than the review drew, or a reviewer's second answer to a
case is a `HubskillsError` naming the line, and nothing is rewritten. The lines are anyone's
text (a dataset's file, a hand-edited one), so they are bounded before they are parsed: a file
over `MAX_FILE_BYTES`, a line over `MAX_LINE_BYTES`, and a field over its length (a comment
over `MAX_COMMENT` characters, an id over `MAX_ID`, a time that is not an ISO 8601 time) are
refused. A comment is kept as written (its seal covers it) and shown or given to a model as
`comment_text`: without control, format or private-use characters (escape sequences, bidi
overrides), as the publisher's claims are (`format.claims.plain_text`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from registry.errors import HubskillsError
from registry.format.claims import plain_text

Side = Literal["A", "B"]
Choice = Literal["A", "B", "tie", "both_bad"]
CHOICES: tuple[str, ...] = ("A", "B", "tie", "both_bad")
MAX_COMMENT = 4000  # characters of one comment
MAX_ID = 1000  # characters of a run id, a case id or a sample ("<model>#<repeat>")
MAX_LINE_BYTES = 64 * 1024  # one answer: a longest comment in any script, with room to spare
MAX_FILE_BYTES = 16 * 1024 * 1024  # one feedback file
REVIEWER = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


class Answer(BaseModel):
    """One reviewer's answer to one case of a run."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(max_length=MAX_ID)
    case: str = Field(max_length=MAX_ID)
    sample: str = Field(max_length=MAX_ID)  # "<model>#<repeat>": which pair of answers was shown
    skill_side: Side  # where the skill's answer was shown
    choice: Choice
    comment: str = Field(default="", max_length=MAX_COMMENT)
    reviewer: str = Field(pattern=REVIEWER)  # a Hub user name: it names the pushed file
    time: str = Field(max_length=40)
    seal: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")  # HMAC (local reviews)

    @field_validator("time")
    @classmethod
    def _iso_time(cls, value: str) -> str:
        datetime.fromisoformat(value)  # a ValueError: not a time
        return value

    @property
    def comment_text(self) -> str:
        """The comment as it may be shown or given to a model: see the module docstring."""
        return plain_text(self.comment)

    @property
    def preferred(self) -> str:
        """"skill", "baseline", "tie" or "both_bad": the choice with the sides undone."""
        if self.choice in ("tie", "both_bad"):
            return self.choice
        return "skill" if self.choice == self.skill_side else "baseline"

    def line(self) -> str:
        """The answer as one JSON line (with its newline)."""
        return self.model_dump_json() + "\n"


def now() -> str:
    """ISO 8601 UTC time with seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_secret() -> str:
    """A fresh review secret (64 hex digits)."""
    return secrets.token_hex(32)


def _mac(secret: str, *parts: str) -> bytes:
    return hmac.new(secret.encode(), "\x1f".join(parts).encode(), hashlib.sha256).digest()


def skill_side(secret: str, run_id: str, case: str, sample: str, reviewer: str = "") -> Side:
    """The side showing the skill's answer for `case` to `reviewer`: fixed by the secret,
    unguessable without it, and drawn for each reviewer apart, so one reviewer's published
    answers tell nothing of the sides another is shown ("" draws the case's own side, as
    answers written before sides were drawn per reviewer have)."""
    parts = (run_id, case, sample, reviewer) if reviewer else (run_id, case, sample)
    return "A" if _mac(secret, "side", *parts)[0] & 1 == 0 else "B"


def seal(secret: str, answer: Answer) -> str:
    """The HMAC that ties `answer`'s fields to the review's secret."""
    body = answer.model_dump(exclude={"seal"})
    return _mac(secret, "seal", json.dumps(body, sort_keys=True)).hex()


def sealed(secret: str | None, answer: Answer) -> Answer:
    """`answer` with its seal (unchanged without a secret)."""
    return answer if secret is None else answer.model_copy(update={"seal": seal(secret, answer)})


def parse_answers(data: bytes | str, *, run_id: str, samples: Mapping[str, str],
                  source: str, secret: str | None = None, hint: str | None = None
                  ) -> list[Answer]:
    """The answers in a feedback file, checked against the review they claim to belong to.

    `samples` maps each case with a pair to the sample shown; with `secret`, each line's side
    must be the one the secret draws and its seal must match.

    Raises:
        HubskillsError: the first line that is not a valid answer of this review (naming
            `source` and the line), with `hint`.
    """
    data = data.encode("utf-8") if isinstance(data, str) else data
    if len(data) > MAX_FILE_BYTES:
        raise HubskillsError(f"{source} is larger than {MAX_FILE_BYTES // 2**20} MiB: not a "
                             "feedback file; nothing was changed", hint=hint)
    text = data.decode("utf-8", errors="replace")
    answers: list[Answer] = []
    seen: set[tuple[str, str]] = set()
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue

        def bad(why: str, number: int = number) -> HubskillsError:
            return HubskillsError(f"{source} line {number} {why}; nothing was changed",
                                  hint=hint)

        if len(raw.encode("utf-8", errors="replace")) > MAX_LINE_BYTES:
            raise bad(f"is longer than {MAX_LINE_BYTES // 1024} KiB: not a review answer")
        try:
            answer = Answer.model_validate_json(raw)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "the line"
            raise bad(f"is not a review answer ({where}: {first.get('msg')})") from None
        if answer.run_id != run_id:
            raise bad(f"answers run {answer.run_id}, not {run_id} (copied from another run?)")
        if answer.case not in samples:
            raise bad(f"answers case {answer.case!r}, which run {run_id} has no pair for")
        if answer.sample != samples[answer.case]:
            raise bad(f"answers sample {answer.sample!r} of case {answer.case!r}, but the "
                      f"review shows {samples[answer.case]!r}")
        if secret is not None:
            drawn = {skill_side(secret, run_id, answer.case, answer.sample, who)
                     for who in (answer.reviewer, "")}  # "": written before sides per reviewer
            if answer.skill_side not in drawn:
                raise bad(f"says the skill's answer of case {answer.case!r} was on side "
                          f"{answer.skill_side}, which is not the side shown (edited by hand?)")
            if answer.seal is None or not hmac.compare_digest(answer.seal, seal(secret, answer)):
                raise bad("does not match its seal: it was edited by hand or comes from "
                          "another review")
        key = (answer.reviewer, answer.case)
        if key in seen:
            raise bad(f"is {answer.reviewer}'s second answer to case {answer.case!r}")
        seen.add(key)
        answers.append(answer)
    return answers


def as_jsonl(answers: Iterable[Answer]) -> bytes:
    """Answers as a feedback file's bytes."""
    return "".join(a.line() for a in answers).encode("utf-8")
