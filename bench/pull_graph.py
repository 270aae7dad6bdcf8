"""Dependencies and signatures at pull time (issue 39): `python bench/pull_graph.py`.

1. A graph of `--skills` (200) skills in a local registry: the root requires 14 skills, each of
   those 14 more (shared ones among them), with version ranges. `pull ROOT` resolves, stages,
   verifies, scans and places all of them in one transaction. Its peer, measured in the same
   run on the same skills, is what the graph costs without resolving: staging each revision
   (`staging.prepare`: the download from the registry, the checks, the scan) one after another.
   The difference is what resolution and placement add; goal <= 1 s.
   With `--hub-latency-ms N` (default 20) the same graph is also pulled from the fake Hub (in
   this process) answering every request N ms late, as across a network, with a cold download
   cache on each side; the peer stages the same revisions from it one by one.
2. A 1 MB skill (SKILL.md and 1 MiB of reference files) pulled signed (key mode, verified
   through model_signing against a trusted key) vs the same files unsigned: median of per-pair
   ratios over `--rounds` interleaved pairs; goal <= 1.2. Then an up-to-date re-pull of each,
   whose signed install has its signature checked again (the lock's signer is no proof).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ["HF_HUB_OFFLINE"] = "0"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from registry.config import Settings  # noqa: E402
from registry.install import pull  # noqa: E402
from registry.install.lockfile import Scope  # noqa: E402
from registry.install.staging import discard, prepare  # noqa: E402
from registry.scan import STORE_LIMITS  # noqa: E402
from registry.stores import LocalStore  # noqa: E402

FAN = 14


def _skill(root: Path, name: str, version: str, requires: list[str], body: str = "") -> Path:
    folder = root / f"{name}-{version}" / name
    (folder / "references").mkdir(parents=True)
    needs = f'  requires: "{" ".join(requires)}"\n' if requires else ""
    (folder / "SKILL.md").write_text(
        f'---\nname: {name}\ndescription: "Benchmark skill {name}. Use when measuring."\n'
        f'metadata:\n  version: "{version}"\n{needs}---\n\n# {name}\n\n' + "Step.\n" * 40)
    (folder / "references/guide.md").write_text(body or "# Guide\n\n" + "Detail.\n" * 200)
    return folder


def _graph_store(tmp: Path, skills: int, store: Any = None) -> Any:
    """`bench/s0` requires s1..s14; s_k (k >= 1) requires up to 14 skills of the next layer."""
    store = store or LocalStore(tmp / "store")
    names = [f"s{i}" for i in range(skills)]
    for i, name in enumerate(names):
        first = 1 + i * FAN if i else 1
        needs = [f"bench/{n}@^1" for n in names[first:first + FAN]]
        if i > 1:  # a shared edge: each skill also needs its left neighbour's first child
            needs += [f"bench/{n}" for n in names[first - FAN:first - FAN + 1]
                      if f"bench/{n}@^1" not in needs and n != name][:1]
        store.publish(_skill(tmp / "src", name, "1.0.0", needs), repo=f"bench/{name}",
                      version="1.0.0")
    return store


def bench_graph(tmp: Path, skills: int, rounds: int, stores: Any = None,
                label: str = "local registry") -> None:
    """`stores(side, round)`: a fresh store per side and round (a cold download cache)."""
    shared = None if stores else _graph_store(tmp, skills)
    stores = stores or (lambda side, r: shared)
    wall: dict[str, list[float]] = {"graph": [], "stage": []}
    cpu: dict[str, list[float]] = {"graph": [], "stage": []}
    count = skills

    def graph(r: int) -> None:
        nonlocal count
        project = tmp / f"graph-{r}"
        (project / ".claude").mkdir(parents=True)
        store = stores("graph", r)
        count = 1 + len(pull("bench/s0", project=project, store=store).dependencies)

    def stage(r: int) -> None:
        scope, store = Scope(tmp / f"peer-{r}"), stores("stage", r)
        scope.root.mkdir()
        for i in range(count):
            repo = f"bench/s{i}"
            discard(prepare(store, repo, store.resolve(repo, "1.0.0"), scope,
                            limits=STORE_LIMITS))

    for r in range(rounds):  # pairs alternate which side goes first
        for name, side in [("graph", graph), ("stage", stage)][:: 1 if r % 2 else -1]:
            start, start_cpu = time.perf_counter(), time.process_time()
            side(r)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    extra = statistics.median(g - s for g, s in zip(wall["graph"], wall["stage"], strict=True))
    extra_cpu = statistics.median(g - s for g, s in zip(cpu["graph"], cpu["stage"], strict=True))
    print(f"graph of {count} skills, {label} (median of {rounds} pairs): pull with dependencies "
          f"{statistics.median(wall['graph']):.2f} s ({statistics.median(cpu['graph']):.2f} s "
          f"CPU), staging the same revisions one by one {statistics.median(wall['stage']):.2f} s "
          f"({statistics.median(cpu['stage']):.2f} s CPU)")
    print(f"  resolution and placement beyond the downloads = {extra:.2f} s wall, "
          f"{extra_cpu:.2f} s CPU  (goal <= 1 s)")


def bench_graph_hub(tmp: Path, skills: int, rounds: int, latency_ms: float) -> None:
    from fakes.hub_server import FakeHub
    from huggingface_hub.utils import disable_progress_bars

    from registry.stores.hub import HubStore

    class DistantHub(FakeHub):
        latency_s = 0.0

        def _take_failure(self, path: str) -> tuple[int, str] | None:  # once per request
            time.sleep(self.latency_s)
            return super()._take_failure(path)

    disable_progress_bars()
    with DistantHub(user="bench") as hub:
        def store(home: Path) -> HubStore:
            return HubStore(Settings(home=home, registry="hub", hf_endpoint=hub.url,
                                     hf_token=hub.token, namespace="bench"))

        _graph_store(tmp, skills, store(tmp / "publisher"))
        hub.latency_s = latency_ms / 1000
        bench_graph(tmp, skills, rounds, lambda side, r: store(tmp / f"home-{side}-{r}"),
                    f"fake Hub answering {latency_ms:g} ms late")


def bench_signature(tmp: Path, rounds: int) -> None:
    from registry.signing import add_anchor, new_key_pair, sign_folder

    key = tmp / "keys" / "bench.key"
    key.parent.mkdir(parents=True)
    new_key_pair(key)
    add_anchor(Settings.from_env().home, "bench", Path(f"{key}.pub"))
    plain = _skill(tmp / "plain", "big-skill", "1.0.0", [])
    signed = _skill(tmp / "signed", "big-skill", "1.0.0", [])
    for folder in (plain, signed):  # 1 MiB in four reference files (the scanner's text cap)
        for part in range(4):
            text = f"Reference part {part}, a line of some detail.\n" * 6000
            (folder / f"references/part-{part}.md").write_text(text[: 256 * 1024])
    sign_folder(signed, key=key)
    ratios, cpu_ratios = [], []
    times: dict[str, list[float]] = {"signed": [], "unsigned": []}
    cpu: dict[str, list[float]] = {"signed": [], "unsigned": []}
    pull(str(signed), project=_fresh(tmp / "warm"))  # imports model_signing once, as a CLI run
    for r in range(rounds):
        order = [("unsigned", plain), ("signed", signed)]
        for label, folder in order if r % 2 else order[::-1]:
            project = _fresh(tmp / f"sig-{label}-{r}")
            start, start_cpu = time.perf_counter(), time.process_time()
            pull(str(folder), project=project)
            times[label].append(time.perf_counter() - start)
            cpu[label].append(time.process_time() - start_cpu)
        ratios.append(times["signed"][-1] / times["unsigned"][-1])
        cpu_ratios.append(cpu["signed"][-1] / cpu["unsigned"][-1])
    print(f"1 MB skill pulled from a folder (median of {rounds} pairs): unsigned "
          f"{statistics.median(times['unsigned']) * 1000:.0f} ms "
          f"({statistics.median(cpu['unsigned']) * 1000:.0f} ms CPU), signed "
          f"{statistics.median(times['signed']) * 1000:.0f} ms "
          f"({statistics.median(cpu['signed']) * 1000:.0f} ms CPU)")
    print(f"  ratio signed/unsigned = {statistics.median(ratios):.2f} wall, "
          f"{statistics.median(cpu_ratios):.2f} CPU  (goal <= 1.2)")
    # An up-to-date pull of a signed install checks its signature again (the lock's signer is
    # only its author's word): what that costs over the same unsigned pull.
    again: dict[str, list[float]] = {"signed": [], "unsigned": []}
    placed = {label: _fresh(tmp / f"again-{label}") for label in again}
    for label, folder in (("unsigned", plain), ("signed", signed)):
        pull(str(folder), project=placed[label])
    for _ in range(5 * rounds):
        for label, folder in (("unsigned", plain), ("signed", signed)):
            start = time.process_time()
            pull(str(folder), project=placed[label])
            again[label].append(time.process_time() - start)
    up, sp = (statistics.median(again[k]) * 1000 for k in ("unsigned", "signed"))
    print(f"  an up-to-date re-pull (median of {5 * rounds}): unsigned {up:.1f} ms CPU, signed "
          f"{sp:.1f} ms CPU (its signature checked again: +{sp - up:.1f} ms)")


def _fresh(project: Path) -> Path:
    (project / ".claude").mkdir(parents=True)
    return project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hub-latency-ms", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hubskills-bench-graph-") as tmp:
        os.environ["HUBSKILLS_HOME"] = str(Path(tmp) / "home")
        os.environ["HOME"] = str(Path(tmp) / "user")
        (Path(tmp) / "user").mkdir()
        bench_graph(Path(tmp) / "graph", args.skills, args.rounds)
        bench_graph_hub(Path(tmp) / "hub", args.skills, args.rounds, args.hub_latency_ms)
        try:
            import model_signing  # noqa: F401
        except ImportError:
            print("signature: skipped (no sign extra: pip install -e '.[sign]')")
            return
        bench_signature(Path(tmp) / "sig", max(args.rounds, 7))


if __name__ == "__main__":
    main()
