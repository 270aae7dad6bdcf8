"""The adaptive design on the three example skills' recorded runs (issue 41's "done means").

Each example skill's fixed run recorded in the registry (`skills/.runs/`: the embedded model,
every case x 3 runs x both arms) is replayed through the adaptive design: round by round the
design (`results.sequential.plan_round`, `Design()`'s defaults, as `hubskills eval` runs it)
asks for samples and gets the recorded run's outcome for each (the same model, the same seeds:
the answers an adaptive run of it would be given, as the response cache keys them), until it
stops. No model is called. Printed per skill: the fixed run's answers and verdict (its stored
summary), the adaptive design's answers, their share of the fixed plan, where and why it
stopped, and its verdict. Goal: the same verdict with at most 60% of the answers.

The table goes to stdout and into docs/benchmarks.md between the `adaptive-examples` markers
(`--no-write` leaves the page alone).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from registry.results.runs import latest_rows, read_rows  # noqa: E402
from registry.results.sequential import ARMS, Design, plan_round  # noqa: E402

RUNS = ROOT / "skills" / ".runs"
PAGE = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- adaptive-examples:begin -->", "<!-- adaptive-examples:end -->"
GOAL = 0.60


def replay(run_dir: Path) -> dict[str, object]:
    """The adaptive design played on one recorded fixed run's outcomes."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    [model] = manifest["models"]
    rows = latest_rows(read_rows(run_dir.parent, run_dir.name))
    recorded = {(r.case_id, r.arm, r.repeat): None if r.is_error else r.passed
                for r in rows if r.model == model}
    design = Design(kind="adaptive", runs=manifest["runs"])
    history = {c: {a: [] for a in ARMS} for c in manifest["case_ids"]}
    while not (plan := plan_round(design, history)).stop:
        for case, run in plan.samples:
            for arm in ARMS:
                history[case][arm].append(recorded[(case, arm, run)])
    asked = sum(len(v) for arms in history.values() for v in arms.values())
    [summary] = [s for s in manifest["summaries"] if s["model"] == model]
    return {"skill": manifest["skill_name"], "model": model,
            "plan": f"{len(manifest['case_ids'])} x {manifest['runs']}", "fixed": len(rows),
            "fixed_verdict": summary["stats"]["verdict"], "adaptive": asked,
            "share": asked / len(rows), "stopped": f"round {plan.round}: {plan.reason}",
            "verdict": plan.verdict}


def table(results: list[dict[str, object]]) -> str:
    lines = ["| skill (embedded model) | cases x runs | fixed answers | fixed verdict | "
             "adaptive answers | share | stopped | adaptive verdict | goal |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        met = r["verdict"] == r["fixed_verdict"] and r["share"] <= GOAL  # type: ignore
        lines.append(f"| {r['skill']} | {r['plan']} | {r['fixed']} | {r['fixed_verdict']} | "
                     f"{r['adaptive']} | {r['share']:.0%} | {r['stopped']} | {r['verdict']} | "
                     f"{'met' if met else 'not met'} |")
    return "\n".join(lines)


def main() -> None:
    """Replay every recorded example run and print (and write) the table."""
    results = [replay(d) for d in sorted(RUNS.iterdir()) if (d / "manifest.json").is_file()]
    text = table(results)
    print(text)
    if "--no-write" not in sys.argv and PAGE.is_file():
        page = PAGE.read_text(encoding="utf-8")
        if BEGIN in page and END in page:
            page = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END),
                          lambda _: f"{BEGIN}\n{text}\n{END}", page, flags=re.S)
            PAGE.write_text(page, encoding="utf-8")


if __name__ == "__main__":
    main()
