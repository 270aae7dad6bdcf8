"""The A/B task both start-up peers do besides asking the model (`all_at_once_eval.py` with the
raw SDK, `stdlib_eval.py` with the standard library): read SKILL.md and evals/evals.json, build
one arm's request, grade `contains` checks, print the two pass rates and the lift. Shared, so the
peers differ only in how they send the requests; standard library only.
"""

from __future__ import annotations

import json
from pathlib import Path

SYSTEM = ("You are a helpful coding assistant. Answer the user's request accurately and "
          "concisely.")


def load(skill_dir: Path) -> tuple[str, list[dict]]:
    """SKILL.md's text and the suite's cases."""
    skill = (skill_dir / "SKILL.md").read_text(encoding="utf-8")
    suite = json.loads((skill_dir / "evals" / "evals.json").read_text(encoding="utf-8"))
    return skill, suite["cases"]


def messages(case: dict, skill: str | None) -> list[dict]:
    """One arm's request: the neutral system prompt, the skill (if any) before the prompt."""
    prompt = case["prompt"]
    if skill is not None:
        prompt = f"Use this skill when it applies:\n\n{skill}\n\n---\n\n{prompt}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]


def passes(case: dict, text: str) -> bool:
    """All `contains` values present, case-insensitively."""
    wanted = [v for check in case.get("checks", []) if check["type"] == "contains"
              for v in (check["value"] if isinstance(check["value"], list) else [check["value"]])]
    return all(v.casefold() in text.casefold() for v in wanted)


def print_rates(rates: dict[str, float]) -> None:
    """The two arms' pass rates and the lift, on one line."""
    lift = rates["skill"] - rates["baseline"]
    print(f"baseline {rates['baseline']:.0%}  with skill {rates['skill']:.0%}  "
          f"lift {lift * 100:+.0f} points")
