"""`hubskills ci` on 20 unchanged skills (run: `python bench/ci_gate.py`).

Prints the model calls it made (goal: 0) and its wall time against `hubskills validate` on the
same 20 folders (both as the process a CI step starts, median of 5 alternating pairs): the gate
on an untouched checkout should cost about what validation costs, never an evaluation.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fakes.openai_server import FakeOpenAIServer  # noqa: E402

N_SKILLS, PAIRS = 20, 5
GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c",
       "commit.gpgsign=false"]


def _checkout(root: Path) -> list[str]:
    """A git repo of `N_SKILLS` committed skills with a 10-case suite each; their folders."""
    folders = []
    for i in range(N_SKILLS):
        name = f"bench-skill-{i:02d}"
        folder = root / "skills" / name
        (folder / "evals").mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f'---\nname: {name}\ndescription: "Benchmark skill {i}. Use when measuring."\n---'
            "\n\nAnswer with the word PASS.\n")
        cases = [{"id": f"c{k}", "prompt": f"Case {k}: say the word.",
                  "checks": [{"type": "contains", "value": ["PASS"]}]} for k in range(10)]
        (folder / "evals" / "evals.json").write_text(json.dumps({"skill_name": name,
                                                                 "cases": cases}))
        folders.append(f"skills/{name}")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "skills"],
                 ["commit", "-q", "--allow-empty", "-m", "nothing to do with skills"]):
        subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True)
    return folders


def _timed(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    begun = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "registry.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - begun
    if done.returncode != 0:
        raise SystemExit(f"hubskills {args[0]} failed: {done.stderr}")
    return elapsed


def main() -> None:
    """Time both commands, alternating which goes first; print calls and the ratio."""
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(responder=lambda b: "PASS") as srv:
        root = Path(tmp) / "checkout"
        root.mkdir()
        folders = _checkout(root)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HUBSKILLS_HOME": str(Path(tmp) / "home"),
               "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
        env.pop("GITHUB_STEP_SUMMARY", None)
        ci = ["ci", "-m", "local/fake", "--base-url", srv.url, "--junit", str(Path(tmp) / "j")]
        validate = ["validate", *folders]
        ratios, ci_walls = [], []
        for pair in range(PAIRS):
            order = [ci, validate] if pair % 2 else [validate, ci]
            walls = {tuple(args): _timed(args, root, env) for args in order}
            ci_walls.append(walls[tuple(ci)])
            ratios.append(walls[tuple(ci)] / walls[tuple(validate)])
        print(f"hubskills ci on {N_SKILLS} unchanged skills: {len(srv.bodies)} model calls "
              "(goal 0)")
        print(f"hubskills ci wall {statistics.median(ci_walls):.2f} s; vs hubskills validate "
              f"on the same {N_SKILLS}: {statistics.median(ratios):.2f}x (median of {PAIRS} "
              "pairs)")


if __name__ == "__main__":
    main()
