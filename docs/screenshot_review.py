"""Take docs/images/review.png: the Space's *Review* tab on a seeded run, in chromium.

Run from the repository root with the dev extra installed (playwright) and Debian's chromium:
`.venv/bin/python docs/screenshot_review.py`. The registry lives in a temporary HUBSKILLS_HOME,
seeded from `skills/` as on first use, plus one synthetic run of `hubskills/agent-skill-md` (two
short answers per case); one case is answered so the summary has a line. Nothing leaves the
machine.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from docs.screenshot import space_page  # noqa: E402
from registry.config import Settings  # noqa: E402
from registry.format.suite import load_suite, suite_path  # noqa: E402
from registry.results.runs import ResultRow, RunManifest  # noqa: E402
from space import build_demo  # noqa: E402

REPO = "hubskills/agent-skill-md"
RUN_ID = "20261206-090000-a1b2c3"
MODEL = "anthropic/claude-sonnet-5-5"
ANSWERS = {
    "baseline": "The frontmatter can hold any keys you like; `name` and `description` are "
                "the usual ones, and most tools ignore the rest.",
    "skill": "Only these top-level keys are allowed in SKILL.md's frontmatter:\n\n"
             "- `name` (required)\n- `description` (required)\n- `license`\n"
             "- `allowed-tools`\n- `metadata`\n- `compatibility`\n\nAnything else fails "
             "validation; put custom fields under `metadata`.",
}


def seed(store) -> None:
    cases = [c.id for c in load_suite(suite_path(ROOT / "skills/agent-skill-md")).cases[:6]]
    sha = store.resolve(REPO).sha
    manifest = RunManifest(run_id=RUN_ID, skill_name="agent-skill-md", skill_repo=REPO,
                           skill_version="1.0.0", skill_revision=sha, content_hash="sha256:0",
                           suite_hash="sha256:0", models=[MODEL], case_ids=cases,
                           status="complete", partial=False)
    store.append_results(manifest, [
        ResultRow(run_id=RUN_ID, skill_name="agent-skill-md", skill_repo=REPO,
                  skill_version="1.0.0", skill_revision=sha, model=MODEL, arm=arm,
                  case_id=case, passed=arm == "skill", score=1.0, output=text)
        for case in cases for arm, text in ANSWERS.items()])


def main() -> None:
    home = tempfile.mkdtemp(prefix="hubskills-shot-")
    os.environ.setdefault("HUBSKILLS_REVIEW_SECRET", "7" * 64)
    demo = build_demo(Settings.from_env({"HUBSKILLS_HOME": home, "HF_HUB_OFFLINE": "1",
                                         "HUBSKILLS_REGISTRY": "local"}), on_space=False)
    seed(demo.hubskills_state.store)
    demo.hubskills_state.invalidate()
    with space_page(demo, 1100) as (page, url):
        page.goto(f"{url}work/?tab=review")  # the workbench's page
        page.wait_for_function("() => document.querySelector('#review-runs')"
                               "?.innerText.includes('in the registry: pick')")
        page.locator("#review-run input").fill(RUN_ID)
        page.locator("#review-run input").press("Enter")
        page.locator("#review-pair").first.wait_for(state="visible")
        page.locator("#review-progress").first.click()
        page.keyboard.press("t")
        page.wait_for_function("() => document.querySelector('#review-revealed')"
                               "?.innerText.includes(\"was the skill's\")")
        page.keyboard.press("n")
        page.wait_for_function("() => document.querySelector('#review-progress')"
                               "?.innerText.includes('Case 2 of')")
        page.wait_for_timeout(800)
        page.screenshot(path=str(ROOT / "docs" / "images" / "review.png"))


if __name__ == "__main__":
    main()
