"""Blind review of a run's answers by people: the skill's answer and the baseline's side by
side, sides drawn per case and hidden until answered (`pairs`), the answers kept with the run
as `feedback.jsonl` and pushed beside it (`feedback`, `session`), and what they tell: the
preference rate for the skill with its interval over cases, and the cases where people and the
checks disagree (`summary`). Feedback is never a measured result: no badge or ranking reads it.
"""

from registry.review.feedback import CHOICES, Answer
from registry.review.pairs import ReviewCase, Shown
from registry.review.session import (
    Review,
    open_local_review,
    open_registry_review,
    push_feedback,
    runs_feedback,
)
from registry.review.summary import PreferenceSummary, summarize

__all__ = ["CHOICES", "Answer", "PreferenceSummary", "Review", "ReviewCase", "Shown",
           "open_local_review", "open_registry_review", "push_feedback", "runs_feedback",
           "summarize"]
