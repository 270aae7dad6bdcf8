"""The Space's tables with long model ids, a pending submission and trigger evals, at common
window widths in a real browser (chromium, as `test_space_browser`).

The Space reads the fake Hub (`spot_setup`), where boss published a skill and alice proposed a
run of it as a pull request; boss's results hold runs and trigger evals of that skill on models
with long Hub ids. At 1024, 1280 and 1440 px, beside a classic scrollbar: the Pending table fits
at 1280 px and wider (at 1024 px it scrolls sideways with rank and skill pinned); no model id
or skill is split inside a word (`Instr/uct`, `kerne/l`) nor holds an invisible character a copy
would keep, and the table's filter still matches a whole id; the trigger evals show a row per
model, fit the window and cut no text; every header wraps only between words and is as wide as
its column. Full-page screenshots go to the test's tmp folder.
"""

from __future__ import annotations

import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import random  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from fakes.hub_server import FakeHub  # noqa: E402
from spot_setup import ALICE, SKILL, evaluate, fake_hub, propose_as_alice  # noqa: E402
from test_space import append_run, free_port  # noqa: E402
from test_space_browser import require_browser, wait_for_rows  # noqa: E402
from test_space_widths_browser import SCROLL, looked_at, table_problems  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.results.runs import ResultRow, RunManifest, new_run_id  # noqa: E402
from registry.stores.verifications import run_files  # noqa: E402
from registry.verify.records import append_record  # noqa: E402
from space import build_demo, launch  # noqa: E402

pytestmark = pytest.mark.slow

WIDTHS = (1024, 1280, 1440)
PENDING_MODEL = "local/Qwen/Qwen2.5-Coder-32B-Instruct"
LONG_SKILL = "huggingface/kernel-builder-cuda-kernels"
MODELS = ("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen2.5-Coder-32B-Instruct",
          "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B")


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    yield from fake_hub(monkeypatch, users={"alice": ALICE})


def proposed_run(tmp_path: Path) -> None:
    """Boss publishes the skill and runs it on `PENDING_MODEL`; alice proposes the run."""
    propose_as_alice(tmp_path, evaluate(tmp_path, PENDING_MODEL))


def append_triggers(store, model: str, seed: int) -> None:
    """A synthetic trigger eval of the skill on `model`: five should-trigger queries and four
    others, two repeats each, one session failed."""
    rnd, name = random.Random(seed), SKILL.split("/")[1]
    cases = [(f"s{i}", True) for i in range(5)] + [(f"n{i}", False) for i in range(4)]
    manifest = RunManifest(run_id=f"{new_run_id()}-t{seed}", skill_name=name,
                           skill_repo=SKILL, skill_version="1.0.0", content_hash="sha256:0",
                           suite_hash="sha256:t", models=[model], mode="trigger", runs=2,
                           case_ids=[c for c, _ in cases], status="complete", partial=False)
    rows = []
    for case, should in cases:
        for repeat in range(2):
            opened = rnd.random() < (0.8 if should else 0.2)
            rows.append(ResultRow(
                run_id=manifest.run_id, skill_name=name, skill_version="1.0.0",
                skill_repo=SKILL, model=model, mode="trigger", arm="skill", case_id=case,
                repeat=repeat, expect_skill=should, activated=opened, passed=opened == should,
                error="timeout" if (case, repeat) == ("n3", 1) else None, cost_usd=0.0,
                input_tokens=900, output_tokens=30))
    store.append_results(manifest, rows)
    # synthetic rows cannot be replayed: a stand-in record lets them show as replayed ones do
    run = run_files(store)[manifest.run_id]
    append_record(store, {"kind": "replay", "run_id": run.run_id, "rows_hash": run.rows_hash,
                          "status": "verified", "verified_by": store.results.producer(),
                          "verified_at": "2026-01-01T00:00:00+00:00"})


@pytest.fixture
def space_url(hub, tmp_path) -> Iterator[str]:  # noqa: F811
    proposed_run(tmp_path)
    settings = Settings.from_env({**os.environ, "HUBSKILLS_HOME": str(tmp_path / "space")})
    demo = build_demo(settings, on_space=False)
    store = demo.hubskills_state.store
    for j, model in enumerate(MODELS):
        append_run(store, SKILL, model, 0.2 + 0.1 * j, 0.7, seed=j)
        append_triggers(store, model, seed=j)
    append_run(store, LONG_SKILL, MODELS[0], 0.3, 0.6, seed=9)  # a long id in the pinned column
    demo.hubskills_state.invalidate()
    _, url, _ = launch(demo, server_name="127.0.0.1", server_port=free_port(),
                       prevent_thread_lock=True, quiet=True)
    yield url
    demo.close()


# Each word (a run of letters and digits) of each visible table's model and skill cells that
# lies on more than one line: "Llam/a" in "meta-llama/Llam/a-3.1-8B-Instruct", "kerne/l" in
# "hubskills/kerne/l-builder-cuda-kernels@1.1.0".
SPLIT_ID_WORDS = r"""() => {
  const split = [];
  for (const table of document.querySelectorAll('.hs-table')) {
    const ths = [...table.querySelectorAll('th[data-heading]')]
      .filter(th => ['model', 'skill@version'].includes(th.innerText.trim())
                    && th.getClientRects().length);
    const cells = ths.flatMap(th => [...table.querySelectorAll(
      `[role=gridcell][data-col="${th.dataset.heading}"]`)]);
    for (const cell of cells) {
      if (cell.innerText.includes('\u200b')) split.push(`${table.id}: an invisible character `
        + `in '${cell.innerText.replace(/\u200b/g, '').trim()}' (copied, it breaks the id)`);
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of node.data.matchAll(/[\p{L}\p{N}]+/gu)) {
          const range = document.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          const tops = [...range.getClientRects()].filter(r => r.width > 0)
            .map(r => Math.round(r.top));
          if (new Set(tops).size > 1) split.push(`${table.id}: '${match[0]}' of `
            + `'${cell.innerText.replace(/\u200b/g, '').trim()}'`);
        }
      }
    }
  }
  return split;
}"""


def pending_problems(page, width: int) -> list[str]:
    """At 1280 px and wider the pending table fits; narrower, it scrolls with rank and skill
    pinned."""
    moved = page.evaluate(SCROLL, "pending-table")
    if width >= 1280:
        return [f"the pending table scrolls sideways at {width} px"] if moved["scrolls"] else []
    if moved["scrolls"] and moved["before"] != moved["after"]:
        return [f"the pending table's rank and skill moved as it scrolled at {width} px: "
                f"{moved['before']} -> {moved['after']}"]
    return []


def trigger_problems(page, width: int) -> list[str]:
    """The trigger evals show a row per model, fit the window and cut no cell's text."""
    rows = page.locator("#skill-triggers [role=row][data-index]").all_inner_texts()
    problems = [] if len(rows) == len(MODELS) else [f"{len(rows)} trigger rows at {width} px"]
    if page.evaluate(SCROLL, "skill-triggers")["scrolls"]:
        problems.append(f"the trigger evals scroll sideways at {width} px")
    cut = page.evaluate("""() => [...document.querySelectorAll('#skill-triggers [role=gridcell]')]
        .filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.innerText)""")
    return problems + [f"trigger cell '{text}' cut at {width} px" for text in cut]


def filter_finds_a_model_id(page) -> list[str]:
    """The table's filter still matches a whole model id (the breaks are only in what it
    shows), and the row it leaves, ranked last, shows its own model."""
    page.locator("#leaderboard-table input[placeholder^='Filter']").fill("ai/DeepSeek-R1")
    wait_for_rows(page, "leaderboard-table", "text.includes('DeepSeek-')")
    rows = page.locator("#leaderboard-table [role=row][data-index]").all_inner_texts()
    return [] if len(rows) == 1 else [f"filtering by a model id leaves {len(rows)} rows"]


def views(page, url: str):
    """The leaderboard with its pending submissions shown, then the skill's page."""
    page.goto(url)
    wait_for_rows(page, "leaderboard-table", "/zorblax|kernel/.test(text)")
    page.get_by_text("Pending submissions (unreviewed)").click()
    page.locator("#pending-show").click()
    wait_for_rows(page, "pending-table", "text.includes('alice')")
    yield "the leaderboard"
    page.goto(f"{url}?skill={SKILL}")
    wait_for_rows(page, "skill-triggers", "text.includes('5+4×2')")
    yield "the skill page"


def test_pending_model_ids_and_trigger_evals_at_common_widths(space_url, tmp_path):
    require_browser()
    broken: list[str] = []
    # with classic scrollbars, which take room
    for page, view, width in looked_at(space_url, views, WIDTHS, tmp_path,
                                       ignore_default_args=["--hide-scrollbars"]):
        broken += table_problems(page, view, width)
        broken += [f"{view} at {width} px: {word}" for word in page.evaluate(SPLIT_ID_WORDS)]
        broken += (pending_problems(page, width) if view == "the leaderboard"
                   else trigger_problems(page, width))
        if view == "the leaderboard" and width == WIDTHS[-1]:
            broken += filter_finds_a_model_id(page)
    assert not broken, "\n".join(broken)
