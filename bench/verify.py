"""`hubskills verify` on a 1,000-sample chat run with text checks, against reading its rows.

A genuine run is made first (250 cases x 2 arms x 2 repeats against a fake model with no
latency; not timed). Then, `ROUNDS` times each, we time reading the run's rows
(`results.read_rows`) and replaying the whole run (`verify_run`: the skill's content hash, the
suite, the sample plan, regrading all 1,000 outputs and recomputing the summary), and print the
medians and their ratio (goal <= 2: a replay costs about as much as reading what it replays).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

CASES, RUNS, ROUNDS = 250, 2, 7


def bench_skill(root: Path) -> Path:
    """`root/bench-skill`: `CASES` cases graded by four text checks each."""
    folder = root / "bench-skill"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        '---\nname: bench-skill\ndescription: "A benchmark skill. Use when benchmarking."\n'
        "---\n\nThe answer is 42.\n")
    checks = [{"type": "contains", "value": ["42"]}, {"type": "not_contains", "value": ["41"]},
              {"type": "regex", "pattern": r"answer is \d+"},
              {"type": "contains_any", "value": ["answer", "reply"]}]
    cases = [{"id": f"c{i:03d}", "prompt": f"Question {i}?", "checks": checks}
             for i in range(CASES)]
    (folder / "evals" / "evals.json").write_text(json.dumps({"cases": cases}))
    return folder


def answer(body: dict) -> str:
    """Right only with the skill in context, so both arms have passes and failures to regrade."""
    told = any("42" in json.dumps(m.get("content")) for m in body["messages"])
    return "The answer is 42." if told else "The answer is 41, I think."


def median_seconds(work) -> float:
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    from fakes.openai_server import FakeOpenAIServer

    from registry.config import Settings
    from registry.evaluation.engine import EvalConfig, run_evaluation
    from registry.evaluation.results import read_rows
    from registry.evaluation.verify import verify_run

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(responder=answer) as server:
        os.environ["HUBSKILLS_HOME"] = str(Path(tmp) / "home")
        settings = Settings.from_env({"HUBSKILLS_HOME": str(Path(tmp) / "home"),
                                      "HUBSKILLS_BASE_URL": server.url})
        run = run_evaluation(bench_skill(Path(tmp)), EvalConfig(
            models=["local/bench"], runs=RUNS, concurrency=16), settings)
        run_id = run.manifest.run_id
        assert len(run.rows) == CASES * 2 * RUNS, len(run.rows)
        report = verify_run(run_id, settings)  # warm-up, and the run must verify
        assert report.status == "verified", report.to_dict()
        read = median_seconds(lambda: read_rows(settings.runs_dir, run_id))
        replay = median_seconds(lambda: verify_run(run_id, settings))
    print(f"{len(run.rows)} samples, {report.checks_regraded} checks: read rows "
          f"{read * 1000:.0f} ms, verify {replay * 1000:.0f} ms (medians of {ROUNDS})")
    print(f"verify / read: {replay / read:.2f} (goal <= 2)")


if __name__ == "__main__":
    main()
