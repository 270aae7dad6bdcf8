"""Shard fan-out overhead on the fake Jobs runner; prints ratios (run: `python bench/jobs.py`).

A run of 9 cases x 3 repeats on one model, split into 3 shards (3 Jobs, each: download and
pip-install the client's wheel, run its 18 answers, append its rows; then the client reads them
back and merges), against the slowest shard alone (its cases as a 1-shard run, the same
overheads once). Goal: wall(3 shards) / wall(slowest shard alone) <= 1.2.

The model server answers after `--latency-ms` (default 300), as a remote API does, and each
shard asks one question at a time, so a shard's wall is mostly waiting on the model, as on
real Jobs. Pairs alternate which side goes first; the median of per-pair ratios is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ["HF_HUB_OFFLINE"] = "0"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fakes.hub_server import FakeHub  # noqa: E402
from fakes.openai_server import FakeOpenAIServer  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.evaluation.config import EvalConfig  # noqa: E402
from registry.jobs import run_on_jobs  # noqa: E402
from registry.jobs.plan import split_units  # noqa: E402

KEY = "sk-bench-0123456789abcdef"
MODEL = "openai/gpt-4o-mini"
CASES, RUNS, SHARDS = 9, 3, 3


def _skill(root: Path) -> Path:
    folder = root / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        '---\nname: zorblax-ports\ndescription: "Ports of zorblax. Use when configuring it."\n'
        "---\n\nZorblax listens on port 4417.\n")
    cases = [{"id": f"q{i}", "prompt": f"Question {i}: which port does zorblax use?",
              "checks": [{"type": "contains", "value": ["4417"]}]} for i in range(CASES)]
    (folder / "evals" / "evals.json").write_text(json.dumps({"cases": cases}))
    return folder


def _answer(body: dict) -> str:
    told = any("4417" in json.dumps(m.get("content")) for m in body["messages"])
    return "port 4417" if told else "port 8080"


def _timed(skill: Path, hub: FakeHub, server: FakeOpenAIServer, home: Path, *, shards: int,
           cases: list[str]) -> float:
    settings = Settings.from_env({"HUBSKILLS_HOME": str(home), "HF_ENDPOINT": hub.url,
                                  "HF_TOKEN": hub.token, "OPENAI_API_KEY": KEY,
                                  "OPENAI_BASE_URL": server.url})
    config = EvalConfig(models=[MODEL], runs=RUNS, concurrency=1, case_ids=cases)
    begun = time.perf_counter()
    run = run_on_jobs(skill, config, settings, shards=shards, poll_s=0.1)
    wall = time.perf_counter() - begun
    assert run.manifest.status == "complete", run.manifest.note
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--latency-ms", type=float, default=300.0)
    args = parser.parse_args()
    all_cases = [f"q{i}" for i in range(CASES)]
    slowest = max(split_units([(MODEL, c) for c in all_cases], SHARDS), key=len)
    alone_cases = [case for _, case in slowest]
    ratios, walls = [], []
    with tempfile.TemporaryDirectory() as tmp, FakeHub() as hub, FakeOpenAIServer(
            responder=_answer, api_key=KEY, latency=args.latency_ms / 1000) as server:
        hub.jobs.image_env = {"PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1"}
        skill = _skill(Path(tmp))
        for pair in range(args.pairs):
            order = [("sharded", SHARDS, all_cases), ("alone", 1, alone_cases)]
            timings = {}
            for name, shards, cases in order if pair % 2 == 0 else order[::-1]:
                timings[name] = _timed(skill, hub, server, Path(tmp) / f"{name}{pair}",
                                       shards=shards, cases=cases)
            walls.append(timings)
            ratios.append(timings["sharded"] / timings["alone"])
    for pair, timings in enumerate(walls):
        print(f"pair {pair}: {SHARDS} shards ({CASES * RUNS * 2} answers) "
              f"{timings['sharded']:.2f} s; slowest shard alone ({len(alone_cases) * RUNS * 2} "
              f"answers) {timings['alone']:.2f} s")
    median = statistics.median(ratios)
    print(f"shard fan-out: wall(3 shards) / wall(slowest shard alone) = {median:.2f}x "
          f"(goal <= 1.2; {args.latency_ms:.0f} ms per model answer)")


if __name__ == "__main__":
    main()
