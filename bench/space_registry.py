"""The large registry of `bench/space_load.py`: 10,000 skills x 10 models of results.

10 cases x 1 repeat x 2 arms per skill and model: 2,000,000 result rows, the shape of
`bench/space.py`. Skills are published through the store (four processes); results are written
as one file per skill into the results dataset's layout. Generated once under `--data` (about
7 minutes) and reused while its marker file is there.
"""

from __future__ import annotations

import json
import tempfile
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np

LARGE = {"skills": 10_000, "models": 10, "cases": 10}


def _settings(home: Path):
    from registry.config import Settings

    return Settings.from_env({"HUBSKILLS_HOME": str(home), "HF_HUB_OFFLINE": "1"})


def _publish(job: tuple[str, list[int]]) -> None:
    """Publish synthetic skills (a worker of the pool: each opens the store itself)."""
    from registry.registries import local_store

    home, numbers = job
    store = local_store(_settings(Path(home)))
    with tempfile.TemporaryDirectory() as tmp:
        for i in numbers:
            folder = Path(tmp) / f"skill-{i:05d}"
            folder.mkdir()
            (folder / "SKILL.md").write_text(
                f"---\nname: skill-{i:05d}\ndescription: \"Synthetic skill {i} for the load "
                "benchmark. Use when measuring the Space.\"\nmetadata:\n  version: \"1.0.0\"\n"
                f"---\n\n# Skill {i}\n\nStep one. Step two.\n")
            store.publish(folder, repo=f"bench/skill-{i:05d}", version="1.0.0")


def _write_results(store: Any, skills: int, models: int, cases: int) -> None:
    """One results file per skill (a run on every model), written straight into the results
    dataset's layout: appending 10,000 runs one by one through the store takes ten minutes,
    and its per-append work (card check, scrubbing, one cache shard each) is not measured
    here. Rows are a stamped `ResultRow` with the varying fields replaced."""
    from registry.results.runs import ResultRow, RunManifest
    from registry.stores.dataset import results_path, stamp_rows

    rng = np.random.default_rng(0)
    effect = rng.uniform(-0.2, 0.4, size=(skills, models))
    difficulty = rng.uniform(0.1, 0.9, size=(skills, cases))
    names = [f"org/model-{m}" for m in range(models)]
    for s in range(skills):
        name, repo = f"skill-{s:05d}", f"bench/skill-{s:05d}"
        manifest = RunManifest(run_id=f"20260101T{s:06d}Z-bench", skill_name=name,
                               skill_repo=repo, skill_version="1.0.0",
                               content_hash="sha256:0", suite_hash="sha256:0", models=names,
                               case_ids=[f"case-{c}" for c in range(cases)],
                               started_at="2026-01-01T00:00:00Z", status="complete")
        template = json.loads(stamp_rows(manifest, [ResultRow(
            run_id=manifest.run_id, skill_name=name, model=names[0], arm="baseline",
            case_id="case-0", repeat=0, passed=True)])[0].model_dump_json())
        lines = []
        for m, model in enumerate(names):
            for c in range(cases):
                for arm in (0, 1):
                    p = difficulty[s, c] + arm * effect[s, m]
                    tokens = int(400 + 900 * arm + rng.integers(0, 200))
                    lines.append(json.dumps({
                        **template, "model": model, "arm": ("baseline", "skill")[arm],
                        "case_id": f"case-{c}", "passed": bool(rng.random() < p),
                        "input_tokens": tokens, "output_tokens": int(rng.integers(50, 400)),
                        "cost_usd": tokens * 3e-6}))
        target = store.dataset_dir / results_path(manifest)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines) + "\n")


def large_registry(data: Path) -> Path:
    """The 10k x 10 registry's HUBSKILLS_HOME under `data`, generated on first use."""
    home = data / f"space-{LARGE['skills']}x{LARGE['models']}"
    done = home / ".bench-complete"
    if done.exists():
        return home
    from registry.registries import local_store

    print(f"generating the large registry in {home} (once; about 7 minutes)", flush=True)
    start = time.perf_counter()
    store = local_store(_settings(home))
    store.search("")  # seeds the example skills before the workers publish beside them
    chunks = np.array_split(np.arange(LARGE["skills"]), 40)
    with Pool(4) as pool:
        pool.map(_publish, [(str(home), [int(i) for i in chunk]) for chunk in chunks])
    _write_results(store, **LARGE)
    rows = len(store.results_frame())  # parses the files once into the frame cache
    done.write_text(json.dumps({**LARGE, "rows": rows}))
    print(f"  {LARGE['skills']:,} skills, {rows:,} result rows in "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    return home
