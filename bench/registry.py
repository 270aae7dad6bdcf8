"""Registry benchmarks; prints ratios against the goals (run: `python bench/registry.py`).

1. Leaderboard aggregation: `leaderboard.entries()` over 1,000,000 synthetic result rows,
   shaped like a busy public registry: 250 skills x 4 models x 2 runs (an older and a newer one;
   only the newer counts) x 50 cases x 2 arms x 5 repeats. The frame looks like the store's
   `results_frame()`: categorical strings, nullable booleans, UTC timestamps, ~1% error rows and
   one model without a known price. Goal: <= 2 s. Best wall time of 3 calls (with that call's
   CPU time); peak memory measured in a separate traced call (tracemalloc sees numpy's
   buffers) so tracing does not skew the time.
2. The leaderboard over 1,000 adaptive runs of 40 cases x 3 (each holding the samples its
   design asked before it stopped), against the same rows without their design (fixed runs:
   no replay). Every adaptive run's reporting level is recomputed from its rows
   (`grouping.designed`); also printed: that replay one run at a time (`sequential.reporting`
   in a loop, as the board did before). CPU times (the machine is shared). Goal: ratio <= 4
   (the replay computes the engine's table once per look: up to 3 more tables at 40 x 3).
3. Publish + resolve + fetch round trip through `HubStore` on the Hub-compatible test server,
   against the bare huggingface_hub calls doing the same (create_repo, upload_folder of the
   skill's files plus the same card README.md, create_tag, list_repo_refs, snapshot_download +
   copy of the skill's files). Median of paired trials; goal: ratio <= 1.2.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # ahead of bench/, whose registry.py would shadow the package

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from registry.results import leaderboard  # noqa: E402

LEADERBOARD_GOAL_S = 2.0
ROUND_TRIP_GOAL = 1.2
ADAPTIVE_BOARD_GOAL = 4.0  # adaptive runs' board against the same rows without designs: each
#                            look the replay makes is one engine table more (3 looks at 40 x 3)


def synthesize(*, skills: int, models: int, runs: int, cases: int, repeats: int,
               seed: int = 0) -> pd.DataFrame:
    """A results frame of ``skills*models*runs*cases*2*repeats`` rows, as the store returns.

    Every skill has its own true effect (from -0.2 to +0.4) on top of a per-case difficulty,
    so the lifts, intervals and verdicts are varied and realistic.
    """
    rng = np.random.default_rng(seed)
    shape = (skills, models, runs, cases, 2, repeats)
    idx = np.indices(shape, dtype=np.int32).reshape(len(shape), -1)
    s, m, r, c, arm, rep = idx
    difficulty = rng.uniform(0.1, 0.9, size=(skills, cases))[s, c]
    effect = rng.uniform(-0.2, 0.4, size=(skills, models))[s, m]
    p = np.clip(difficulty + arm * effect, 0.0, 1.0)
    passed = pd.array(rng.random(p.size) < p, dtype="boolean")
    is_error = rng.random(p.size) < 0.01
    passed[is_error] = pd.NA
    run_code = (s * models + m) * runs + r
    base_time = np.datetime64("2026-01-01T00:00:00", "us").astype(np.int64)
    minute, day = 60_000_000, 86_400_000_000
    created = base_time + run_code.astype(np.int64) * minute + r.astype(np.int64) * day

    def cat(codes: np.ndarray, labels: list[str]) -> pd.Categorical:
        return pd.Categorical.from_codes(codes, categories=labels)

    model_names = [f"org/model-{i}" for i in range(models)]
    input_tokens = 400 + arm * 900 + rng.integers(0, 200, p.size)
    cost = np.where(m == models - 1, np.nan, input_tokens * 3e-6)
    return pd.DataFrame({
        "run_id": cat(run_code, [f"2026{i:010d}-run" for i in range(skills * models * runs)]),
        "skill_name": cat(s, [f"skill-{i}" for i in range(skills)]),
        "skill_version": cat(np.zeros_like(s), ["1.0.0"]),
        "skill_repo": cat(s, [f"ns/skill-{i}" for i in range(skills)]),
        "model": cat(m, model_names),
        "mode": cat(np.zeros_like(s), ["inline"]),
        "arm": cat(arm, ["baseline", "skill"]),
        "case_id": cat(c, [f"case-{i}" for i in range(cases)]),
        "repeat": rep.astype(np.int64),
        "passed": passed,
        "input_tokens": input_tokens,
        "output_tokens": rng.integers(50, 400, p.size),
        "cost_usd": cost,
        "error": cat(np.where(is_error, 0, -1), ["timeout"]),
        "created_at": pd.to_datetime(created, unit="us", utc=True),
    })


def timed(fn: Callable[[], Any], *, repeat: int = 3) -> tuple[float, float, Any]:
    """Best wall time over ``repeat`` calls, the CPU time of that call, and the last result.

    The CPU time shows how much of the wall time was waiting for a core on a shared machine.
    """
    best, cpu, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        wall = time.perf_counter() - start
        if wall < best:
            best, cpu = wall, time.process_time() - start_cpu
    return best, cpu, result


def traced_peak_mib(fn: Callable[[], Any]) -> float:
    """Peak memory allocated while ``fn`` runs (numpy buffers included), in MiB."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def bench_leaderboard(repeat: int = 3) -> float:
    """Time `entries()` over 1,000,000 rows; returns the ratio to the goal."""
    frame = synthesize(skills=250, models=4, runs=2, cases=50, repeats=5)
    seconds, cpu, ranked = timed(lambda: leaderboard.entries(frame), repeat=repeat)
    ratio = seconds / LEADERBOARD_GOAL_S
    peak = traced_peak_mib(lambda: leaderboard.entries(frame))
    verdicts = pd.Series([e.verdict for e in ranked]).value_counts().to_dict()
    print(f"leaderboard over {len(frame):,} rows: {seconds:.2f} s "
          f"(goal ≤ {LEADERBOARD_GOAL_S:g} s, ratio {ratio:.2f}); CPU {cpu:.2f} s")
    print(f"  {len(ranked)} entries (250 skills × 4 models, latest of 2 runs, 50 cases × 5 "
          f"repeats); verdicts {verdicts}; peak memory in entries() {peak:.0f} MiB "
          f"(frame {frame.memory_usage(deep=True).sum() / 2**20:.0f} MiB)")
    return ratio


def synthesize_adaptive(*, runs: int = 1000, cases: int = 40, repeats: int = 3,
                        seed: int = 1) -> pd.DataFrame:
    """A results frame of ``runs`` adaptive runs (one model each, `Design(runs=repeats)`),
    each holding exactly the samples its design asked before it stopped: outcomes drawn per
    case (lifts from 0 to +40 points), the rounds played with the module's own rules."""
    import json

    from registry.results import sequential as seq

    design = seq.Design(runs=repeats)
    rng = np.random.default_rng(seed)
    shape = (runs, cases, 2, repeats)
    base = rng.uniform(0.1, 0.9, size=(runs, cases))
    skill = np.minimum(base + rng.choice([0.0, 0.1, 0.2, 0.4], size=(runs, 1)), 1.0)
    passed = rng.random(shape) < np.stack([base, skill], axis=2)[..., None]
    settled = seq.settled_cases(design, np.ones(shape, bool), np.ones(shape, bool), passed)
    asked = np.zeros((runs, cases), dtype=np.int64)
    active, spent = np.arange(runs), None
    for j in range(1, seq.n_rounds(design, cases) + 1):
        m = seq.asked_runs(design, cases, j, settled[active])
        codes, _, spent = seq.look(design, cases, j, m, np.ones_like(passed[active]),
                                   passed[active], spent)
        stops = codes > 0
        asked[active[stops]] = m[stops]
        active, spent = active[~stops], spent.take(np.flatnonzero(~stops))
    keep = np.arange(repeats) < asked[:, :, None, None]
    r, c, arm, rep = np.nonzero(np.broadcast_to(keep, shape))
    names = [f"case-{i:02d}" for i in range(cases)]
    spec = [json.dumps({**design.to_dict(), "stops": {}, "cases": names}, sort_keys=True)]
    cat = pd.Categorical.from_codes
    return pd.DataFrame({
        "run_id": cat(r, [f"2026{i:010d}-adaptive" for i in range(runs)]),
        "skill_name": cat(r // 4, [f"skill-{i}" for i in range(-(-runs // 4))]),
        "skill_version": cat(np.zeros_like(r), ["1.0.0"]),
        "skill_repo": cat(r // 4, [f"ns/skill-{i}" for i in range(-(-runs // 4))]),
        "model": cat(r % 4, [f"org/model-{i}" for i in range(4)]),
        "mode": cat(np.zeros_like(r), ["inline"]), "arm": cat(arm, ["baseline", "skill"]),
        "case_id": cat(c, names), "repeat": rep.astype(np.int64),
        "passed": pd.array(passed[r, c, arm, rep], dtype="boolean"),
        "input_tokens": np.full(len(r), 1000), "output_tokens": np.full(len(r), 200),
        "cost_usd": np.full(len(r), 0.003),
        "created_at": pd.to_datetime(1_767_225_600 + r.astype(np.int64) * 60, unit="s", utc=True),
        "suite_cases": np.full(len(r), cases), "run_cases": np.full(len(r), cases),
        "planned_runs": np.full(len(r), repeats),
        "design": cat(np.zeros_like(r), spec),
    })


def bench_adaptive_board(repeat: int = 3) -> float:
    """Time `entries()` over 1,000 adaptive runs (40 cases x 3) against the same rows as fixed
    runs (no design: no replay), and the per-run replay (`sequential.reporting`, one run at a
    time, as the board did before `reportings`); returns the ratio to the goal."""
    from registry.results import sequential as seq

    frame = synthesize_adaptive()
    fixed = frame.drop(columns="design")
    seconds, cpu, ranked = timed(lambda: leaderboard.entries(frame), repeat=repeat)
    plain, plain_cpu, _ = timed(lambda: leaderboard.entries(fixed), repeat=repeat)
    design, cases = seq.Design(runs=3), sorted(frame["case_id"].cat.categories)
    parts = [(seq.history_of(cases, zip(part["case_id"].astype(str), part["arm"].astype(str),
                                        part["repeat"].tolist(), part["passed"].tolist(),
                                        strict=True)))
             for _, part in frame.groupby("run_id", observed=True)]
    loop, loop_cpu, _ = timed(lambda: [seq.reporting(design, h) for h in parts], repeat=1)
    ratio = cpu / plain_cpu  # CPU time: the machine is shared, wall time waits for a core
    stopped = sum(e.status == "" for e in ranked)
    print(f"leaderboard over {frame['run_id'].nunique():,} adaptive runs (40 cases × 3, "
          f"{len(frame):,} rows, {stopped} whole): CPU {cpu:.3f} s (wall {seconds:.3f} s) vs "
          f"the same rows as fixed runs CPU {plain_cpu:.3f} s (wall {plain:.3f} s): ratio "
          f"{ratio:.2f} (goal ≤ {ADAPTIVE_BOARD_GOAL:g}); the replay one run at a time alone: "
          f"CPU {loop_cpu:.2f} s (wall {loop:.2f} s)")
    return ratio / ADAPTIVE_BOARD_GOAL


def _bare_round_trip(api: Any, skill: Path, repo: str, version: str, dest: Path,
                     cache: Path) -> None:
    import shutil

    api.create_repo(repo, exist_ok=True)
    head = api.list_repo_commits(repo)[0].commit_id
    commit = api.upload_folder(repo_id=repo, folder_path=str(skill), parent_commit=head,
                               commit_message=f"v{version}")
    api.create_tag(repo, tag=f"v{version}", revision=commit.oid)
    sha = next(t.target_commit for t in api.list_repo_refs(repo).tags if t.name == f"v{version}")
    snapshot = api.snapshot_download(repo, revision=sha, cache_dir=cache)
    shutil.copytree(snapshot, dest, ignore=shutil.ignore_patterns(".gitattributes", "README.md"))


def _trial_sources(source: Path, root: Path, version: str) -> tuple[Path, Path]:
    """The skill at `version` (new content: a real commit each trial), and a copy of it with
    the card README.md that publish writes, for the bare client to upload the same repo."""
    import shutil

    from registry.format.skill import content_hash, load_skill
    from registry.stores.card import render_card

    skill = root / "skill" / source.name
    shutil.copytree(source, skill)
    text = (skill / "SKILL.md").read_text().replace('"1.0.0"', f'"{version}"')
    (skill / "SKILL.md").write_text(text)
    with_card = root / "with-card" / source.name
    shutil.copytree(skill, with_card)
    card = render_card(load_skill(skill), repo="bench/bare", version=version,
                       content_hash=content_hash(skill), summary=[])
    (with_card / "README.md").write_text(card)
    return skill, with_card


def _our_round_trip(store: Any, skill: Path, version: str, dest: Path) -> None:
    published = store.publish(skill, repo="bench/ours", version=version)
    resolved = store.resolve("bench/ours", f"v{version}")
    store.fetch("bench/ours", resolved.sha, dest)
    assert resolved.sha == published.sha


def _timed(call: Callable[..., Any], *args: Any) -> float:
    start = time.perf_counter()
    call(*args)
    return time.perf_counter() - start


def bench_round_trip(trials: int = 15) -> float:
    """Median ratio of HubStore's publish+resolve+fetch to the bare client calls.

    Each trial publishes new content (a real commit), and the pairs alternate which side goes
    first, so load from other processes and warm connections favour neither.
    """
    import os
    import statistics
    import tempfile

    os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    sys.path.insert(0, str(ROOT / "tests"))
    from fakes.hub_server import FakeHub
    from huggingface_hub import HfApi

    from registry.config import Settings
    from registry.stores.hub import HubStore

    source = ROOT / "skills" / "kernel-builder-cuda-kernels"
    ratios, ours, bare = [], [], []
    with FakeHub() as hub, tempfile.TemporaryDirectory() as tmp:
        env = {"HUBSKILLS_HOME": tmp, "HF_ENDPOINT": hub.url, "HF_TOKEN": hub.token}
        store = HubStore(Settings.from_env(env))
        api = HfApi(endpoint=hub.url, token=hub.token, library_name="bench")
        for trial in range(trials + 1):  # the first pair warms imports and connections
            version, dest = f"1.0.{trial}", Path(tmp) / f"out-{trial}"
            skill, with_card = _trial_sources(source, Path(tmp) / f"src-{trial}", version)
            mine = partial(_timed, _our_round_trip, store, skill, version, dest / "ours")
            theirs = partial(_timed, _bare_round_trip, api, with_card, "bench/bare", version,
                             dest / "bare", Path(tmp) / "hf-cache")
            if trial % 2:
                a, b = mine(), theirs()
            else:
                b, a = theirs(), mine()
            if trial:
                ours.append(a)
                bare.append(b)
                ratios.append(a / b)
    ratio = statistics.median(ratios)
    print(f"publish+resolve+fetch round trip: hubskills {statistics.median(ours) * 1000:.0f} ms"
          f" vs bare huggingface_hub {statistics.median(bare) * 1000:.0f} ms: ratio {ratio:.2f}"
          f" (goal <= {ROUND_TRIP_GOAL})")
    return ratio / ROUND_TRIP_GOAL


def main(argv: list[str] | None = None) -> int:
    """Run every registry benchmark; exit 1 when one misses its goal."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed calls per benchmark")
    parser.add_argument("--trials", type=int, default=15, help="round-trip pairs")
    parser.add_argument("--only", choices=["leaderboard", "adaptive", "round-trip"],
                        default=None)
    args = parser.parse_args(argv)
    ratios = []
    if args.only in (None, "leaderboard"):
        ratios.append(bench_leaderboard(args.repeat))
    if args.only in (None, "adaptive"):
        ratios.append(bench_adaptive_board(args.repeat))
    if args.only in (None, "round-trip"):
        ratios.append(bench_round_trip(args.trials))
    return 0 if all(r <= 1 for r in ratios) else 1


if __name__ == "__main__":
    sys.exit(main())
