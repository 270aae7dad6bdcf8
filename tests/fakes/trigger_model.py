"""A scripted tool-calling model for trigger evals: it opens the listed skill whose description
shares the most words with the query, when it shares at least `threshold`.

    model = TriggerModel(threshold=2)
    with FakeOpenAIServer(responder=model) as server: ...

Words are lowercase runs of letters and digits of 3 or more characters, minus a few stop words;
the score is the number of distinct query words in the description. Ties go to the skill listed
first. Deterministic, so recall and false triggers are computable by hand. Scripted extras:

- a query with `look around` first calls `list_files` (a second call then decides);
- a query with `explode`, or one where `fails(system prompt, query)` is true, gets an HTTP 400
  (a session error, not retried);
- `teacher` (a callable on the prompt text) answers requests that offer no tools (the tune
  teacher), default: an empty answer.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

STOP = frozenset({"the", "and", "for", "with", "use", "when", "this", "that", "from", "into",
                  "your", "what", "how", "are", "can", "you", "please", "about"})
_LISTED = re.compile(r"^- ([a-z0-9-]+): (.*) \(file: (\S+)/SKILL\.md\)$", re.M)


@functools.lru_cache(maxsize=1024)
def words(text: str) -> frozenset[str]:
    """The fake's vocabulary of a text (cached: every request lists the same descriptions)."""
    return frozenset(w for w in re.findall(r"[a-z0-9]+", text.lower())
                     if len(w) >= 3 and w not in STOP)


def choose(query: str, listed: Sequence[tuple[str, str, str]], threshold: int) -> str | None:
    """The folder of the skill the fake opens for `query`, or None."""
    asked = words(query)
    best, best_score = None, 0
    for _name, description, folder in listed:
        score = len(asked & words(description))
        if score > best_score:
            best, best_score = folder, score
    return best if best_score >= threshold else None


@functools.lru_cache(maxsize=256)
def listed_skills(system: str) -> tuple[tuple[str, str, str], ...]:
    """The (name, description, folder) of every skill a system prompt lists (cached: a run
    repeats each prompt once per model)."""
    return tuple(_LISTED.findall(system))


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


class TriggerModel:
    """A responder for `FakeOpenAIServer`; `requests` counts the tool-offering requests."""

    def __init__(self, threshold: int = 2, teacher: Callable[[str], str] | None = None,
                 fails: Callable[[str, str], bool] | None = None) -> None:
        self.threshold, self.teacher, self.fails = threshold, teacher, fails
        self.requests = 0
        self.teacher_prompts: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Any:
        messages = body.get("messages", [])
        if not body.get("tools"):
            prompt = "\n".join(_text(m.get("content")) for m in messages)
            self.teacher_prompts.append(prompt)
            return self.teacher(prompt) if self.teacher else ""
        self.requests += 1
        system = " ".join(_text(m.get("content")) for m in messages if m["role"] == "system")
        query = next(_text(m.get("content")) for m in messages if m["role"] == "user")
        if "explode" in query or (self.fails and self.fails(system, query)):
            return {"status": 400, "error": {"message": "bad request: exploded",
                                             "type": "invalid_request_error"}}
        looked = any(m["role"] == "tool" for m in messages)
        if "look around" in query and not looked:
            return {"text": "", "tool_calls": [{"name": "list_files", "arguments": {}}]}
        folder = choose(query, listed_skills(system), self.threshold)
        if folder is None:
            return "I can answer that directly."
        return {"text": "", "tool_calls": [{"name": "read_file",
                                            "arguments": {"path": f"{folder}/SKILL.md"}}]}
