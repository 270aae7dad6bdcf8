"""The start-up bench's floor: the A/B skill eval of `all_at_once_eval.py`, stdlib only.

    python bench/peers/stdlib_eval.py SKILL_DIR BASE_URL MODEL

No SDK and no third-party package: `http.client` on one thread per request, all started at
once. It reads SKILL.md and evals/evals.json, sends every case with and without the skill,
grades `contains` checks and prints the two pass rates and the lift, as the SDK peer does.
What is left is interpreter start-up, JSON and the round trips: the floor `bench/startup.py`
measures `hubskills eval` against.
"""

from __future__ import annotations

import http.client
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

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


def ask(base_url: str, model: str, chat: list[dict]) -> str:
    """One chat completion over a fresh connection; the answer's text."""
    url = urlsplit(base_url)
    kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    connection = kind(url.netloc, timeout=120)
    body = json.dumps({"model": model, "messages": chat, "max_tokens": 512,
                       "temperature": 0.7, "seed": 0})
    try:
        connection.request("POST", url.path.rstrip("/") + "/chat/completions", body=body,
                           headers={"Content-Type": "application/json",
                                    "Authorization": "Bearer sk-reference"})
        response = connection.getresponse()
        reply = json.loads(response.read())
        if response.status != 200:
            raise SystemExit(f"HTTP {response.status}: {reply}")
    finally:
        connection.close()
    return reply["choices"][0]["message"]["content"] or ""


def main() -> None:
    """Parse argv, send every request at once, print the pass rates and the lift."""
    skill_dir, base_url, model = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    skill, cases = load(skill_dir)
    arms = {"baseline": None, "skill": skill}
    work = [(case, text) for text in arms.values() for case in cases]
    with ThreadPoolExecutor(max_workers=len(work)) as pool:
        answers = list(pool.map(lambda item: ask(base_url, model, messages(*item)), work))
    n = len(cases)
    rates = {arm: sum(passes(case, answer) for case, answer in
                      zip(cases, answers[i * n:(i + 1) * n], strict=True)) / n
             for i, arm in enumerate(arms)}
    lift = rates["skill"] - rates["baseline"]
    print(f"baseline {rates['baseline']:.0%}  with skill {rates['skill']:.0%}  "
          f"lift {lift * 100:+.0f} points")


if __name__ == "__main__":
    main()
