"""The start-up bench's floor: the A/B skill eval of `all_at_once_eval.py`, stdlib only.

    python bench/peers/stdlib_eval.py SKILL_DIR BASE_URL MODEL

No SDK and no third-party package: `http.client` on one thread per request, all started at
once. It reads SKILL.md and evals/evals.json, sends every case with and without the skill,
grades `contains` checks and prints the two pass rates and the lift, with the SDK peer's own
`ab_task.py`. What is left is interpreter start-up, JSON and the round trips: the floor
`bench/startup.py` measures `hubskills eval` against.
"""

from __future__ import annotations

import http.client
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

from ab_task import load, messages, passes, print_rates


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
    print_rates(rates)


if __name__ == "__main__":
    main()
