"""The start-up bench's reference: an A/B skill eval written all at once with the raw SDK.

    python bench/peers/all_at_once_eval.py SKILL_DIR BASE_URL MODEL

It does what `hubskills eval SKILL --runs 1` does at its core and nothing more: read SKILL.md
and evals/evals.json, send every case with and without the skill in one `asyncio.gather`
(no concurrency limit, no retries, no cache, no saved run), grade `contains` checks and print
the two pass rates and the lift (the reading, the requests and the grading: `ab_task.py`,
shared with the stdlib peer). `bench/startup.py` runs it as a subprocess beside `hubskills
eval`, so interpreter start-up and imports count for both.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import openai
from ab_task import load, messages, passes, print_rates


async def run(skill_dir: Path, base_url: str, model: str) -> dict[str, float]:
    """Every case in both arms at once; the pass rate per arm."""
    skill, cases = load(skill_dir)
    client = openai.AsyncOpenAI(base_url=base_url, api_key="sk-reference", max_retries=0)

    async def ask(case: dict, with_skill: bool) -> bool:
        reply = await client.chat.completions.create(
            model=model, messages=messages(case, skill if with_skill else None),
            max_tokens=512, temperature=0.7, seed=0)
        return passes(case, reply.choices[0].message.content or "")

    arms = {"baseline": False, "skill": True}
    results = await asyncio.gather(*(ask(case, flag) for flag in arms.values()
                                     for case in cases))
    await client.close()
    n = len(cases)
    return {arm: sum(results[i * n:(i + 1) * n]) / n for i, arm in enumerate(arms)}


def main() -> None:
    """Parse argv, run, print the pass rates and the lift."""
    skill_dir, base_url, model = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    rates = asyncio.run(run(skill_dir, base_url, model))
    print_rates(rates)


if __name__ == "__main__":
    main()
