"""Pull benchmarks on the fake Hub; prints ratios (run: `python bench/pull.py`).

1. `hubskills pull ns/name@v1.0.0` (resolve, list, download through the HF cache, verify the
   content hash, scan, stage, swap, link, lock) vs `snapshot_download(revision="v1.0.0")` plus a
   copy of the snapshot, each with a cold cache. Median of per-pair ratios; goal <= 1.3.
2. An up-to-date re-pull: HTTP requests made (goal <= 1) and wall time.
3. `install` of a 50-skill skills.lock into a fresh project with a cold cache vs 50 sequential
   pulls of the same skills (cold cache too): median of per-pair ratios; goal <= 0.4. The fake
   Hub serves it from a process of its own, as the Hub is another machine. With answers at
   `--latency-ms` (0: no waiting) the pair measures CPU, so the ratio follows the machine's
   load; the Hub requests and the CPU time of this process per skill, printed for both sides,
   do not. A pinned skill costs a listing and a GET per file (`registry/hub/pinned.py`), a pull
   also resolves the ref and lets `snapshot_download` send a HEAD per file. The pair runs
   again with every answer `NETWORK_MS` late (a round trip to the Hub), where parallel
   downloads pay.

`--latency-ms N` delays every answer of the fake Hub, as a network would (the default, 0, is a
server in this process, where everything is CPU under one GIL).

Pairs alternate which side goes first, so load from other processes hits both alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ["HF_HUB_OFFLINE"] = "0"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fakes.hub_server import FakeHub  # noqa: E402
from huggingface_hub import snapshot_download  # noqa: E402
from huggingface_hub.utils import disable_progress_bars  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.install import install, pull  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402

SKILL = ROOT / "skills" / "kernel-builder-cuda-kernels"
NETWORK_MS = 20.0  # a round trip to the Hub, for the lockfile pair's goal line


def _store(hub: FakeHub, home: Path) -> HubStore:
    return HubStore(Settings(home=home, registry="hub", hf_endpoint=hub.url,
                             hf_token=hub.token, namespace="bench"))


def _project(tmp: Path, name: str) -> Path:
    folder = tmp / name
    (folder / ".claude").mkdir(parents=True)
    return folder


def _make_skill(root: Path, name: str) -> Path:
    folder = root / name
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f'---\nname: {name}\ndescription: "Benchmark skill {name}. Use when measuring."\n'
        f'metadata:\n  version: "1.0.0"\n---\n\n# {name}\n\n' + "Step by step.\n" * 40)
    (folder / "references/guide.md").write_text("# Guide\n\n" + "Detail line.\n" * 200)
    return folder


def bench_pull(hub: FakeHub, tmp: Path, rounds: int) -> None:
    """Pull vs snapshot_download + copy, cold caches, interleaved."""
    repo = "bench/kernel-builder-cuda-kernels"
    _store(hub, tmp / "publisher").publish(SKILL, repo=repo, version="1.0.0")
    mine, base, req_mine, req_base = [], [], [], []

    def ours(i: int) -> None:
        hub.reset_counts()
        started = time.perf_counter()
        pull(f"{repo}@v1.0.0", project=_project(tmp, f"p{i}"), store=_store(hub, tmp / f"h{i}"))
        mine.append(time.perf_counter() - started)
        req_mine.append(len(hub.requests))

    def theirs(i: int) -> None:
        hub.reset_counts()
        started = time.perf_counter()
        folder = snapshot_download(repo, revision="v1.0.0", cache_dir=tmp / f"c{i}",
                                   endpoint=hub.url, token=hub.token)
        shutil.copytree(folder, tmp / f"d{i}")
        base.append(time.perf_counter() - started)
        req_base.append(len(hub.requests))

    ours(-1), theirs(-1)  # warm imports and connections
    mine.clear(), base.clear()
    for i in range(rounds):
        for side in ((ours, theirs) if i % 2 else (theirs, ours)):
            side(i)
    ratio = statistics.median(a / b for a, b in zip(mine, base, strict=True))
    print(f"pull vs snapshot_download + copy (cold cache, median of {rounds}): "
          f"pull {statistics.median(mine) * 1000:.1f} ms ({req_mine[-1]} requests), "
          f"snapshot+copy {statistics.median(base) * 1000:.1f} ms ({req_base[-1]} requests)")
    print(f"  ratio pull/snapshot+copy = {ratio:.2f}  (goal <= 1.3)")
    bench_repull(hub, tmp, repo, rounds)


def bench_repull(hub: FakeHub, tmp: Path, repo: str, rounds: int) -> None:
    """An up-to-date re-pull: requests and time."""
    project, store = _project(tmp, "repull"), _store(hub, tmp / "h-repull")
    pull(repo, project=project, store=store)
    times, counts = [], []
    for _ in range(rounds):
        hub.reset_counts()
        started = time.perf_counter()
        result = pull(repo, project=project, store=store)
        times.append(time.perf_counter() - started)
        counts.append(len(hub.requests))
        assert result.status == "up-to-date"
    print(f"up-to-date re-pull (median of {rounds}): {statistics.median(times) * 1000:.1f} ms, "
          f"{max(counts)} request(s)  (goal <= 1)")


def bench_lockfile(hub: SimpleNamespace, tmp: Path, skills: int, pairs: int) -> None:
    """`install` of an N-skill lock (cold cache) vs N sequential pulls (cold cache), in pairs
    that alternate which side goes first; the median of the per-pair ratios is printed, and
    the Hub requests each side makes per skill."""
    publisher = _store(hub, tmp / "publisher")
    repos = []
    for i in range(skills):
        name = f"bench-skill-{i:02d}"
        publisher.publish(_make_skill(tmp / "src", name), repo=f"bench/{name}", version="1.0.0")
        repos.append(f"bench/{name}")
    lock = tmp / "skills.lock"
    sequential, locked, asked, cpu = [], [], {}, {}
    for n in range(pairs):
        def pulls(n: int = n) -> None:
            project, store = _project(tmp, f"seq-{n}"), _store(hub, tmp / f"h-seq-{n}")
            hub.count()
            started, cpu_started = time.perf_counter(), time.process_time()
            for repo in repos:
                pull(repo, project=project, store=store)
            sequential.append(time.perf_counter() - started)
            cpu["pull"] = (time.process_time() - cpu_started) / skills
            asked["pull"] = hub.count() / skills
            shutil.copy(project / "skills.lock", lock)

        def from_lock(n: int = n) -> None:
            fresh, cold = _project(tmp, f"lock-{n}"), _store(hub, tmp / f"h-lock-{n}")
            shutil.copy(lock, fresh / "skills.lock")
            hub.count()
            started, cpu_started = time.perf_counter(), time.process_time()
            results = install(fresh, stores=lambda _: cold, frozen=True)
            locked.append(time.perf_counter() - started)
            cpu["install"] = (time.process_time() - cpu_started) / skills
            asked["install"] = hub.count() / skills
            assert len(results) == skills and all(r.status == "installed" for r in results)

        if n == 0 or n % 2:
            pulls(), from_lock()
        else:
            from_lock(), pulls()
    warm = _warm_install(tmp, lock, _store(hub, tmp / f"h-lock-{pairs - 1}"))
    ratios = [a / b for a, b in zip(locked, sequential, strict=True)]
    print(f"{skills}-skill lockfile (median of {pairs} pairs): install "
          f"{statistics.median(locked):.2f} s (cold cache), {warm:.2f} s (warm cache); "
          f"{skills} sequential pulls {statistics.median(sequential):.2f} s")
    print(f"  ratio install/sequential pulls = {statistics.median(ratios):.2f}  (goal <= 0.4; "
          f"warm: {warm / statistics.median(sequential):.2f})")
    print(f"  per skill: install {asked['install']:g} Hub requests, {cpu['install'] * 1000:.1f} ms "
          f"CPU here; pull {asked['pull']:g} requests, {cpu['pull'] * 1000:.1f} ms CPU")


def _warm_install(tmp: Path, lock: Path, store: HubStore) -> float:
    """`install` into a fresh project whose skills are all in the HF cache already."""
    fresh = _project(tmp, "warm")
    shutil.copy(lock, fresh / "skills.lock")
    started = time.perf_counter()
    install(fresh, stores=lambda _: store, frozen=True)
    return time.perf_counter() - started


class DistantHub(FakeHub):
    """The fake Hub answering every request `latency_s` late, like a Hub across a network.

    The server runs in this process, so with no latency every request costs CPU under the same
    GIL as the client and parallel downloads can only overlap the little waiting there is.
    """

    def __init__(self, latency_s: float, **kwargs: str) -> None:
        super().__init__(**kwargs)
        self.latency_s = latency_s

    def _take_failure(self, path: str) -> tuple[int, str] | None:  # called once per request
        time.sleep(self.latency_s)
        return super()._take_failure(path)


def serve(latency_ms: float) -> None:
    """`--serve`: run a fake Hub, print its URL and token, answer each line read with the
    number of requests since the last one, and stop when stdin closes."""
    with DistantHub(latency_ms / 1000, user="bench") as hub:
        print(hub.url, hub.token, flush=True)
        for _ in sys.stdin:
            print(len(hub.requests), flush=True)
            hub.reset_counts()


def hub_process(latency_ms: float) -> tuple[subprocess.Popen, SimpleNamespace]:
    """A fake Hub in a process of its own (`serve`): its URL, token and request counter."""
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(latency_ms)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url, token = proc.stdout.readline().split()

    def count() -> int:  # requests served since the last call
        proc.stdin.write("count\n")
        proc.stdin.flush()
        return int(proc.stdout.readline())

    return proc, SimpleNamespace(url=url, token=token, count=count)


def main() -> None:
    """Run the three benchmarks and print their ratios."""
    if sys.argv[1:2] == ["--serve"]:
        serve(float(sys.argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--skills", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=3, help="install/sequential pairs")
    parser.add_argument("--latency-ms", type=float, default=0.0,
                        help="delay every fake Hub answer, like a network round trip")
    args = parser.parse_args()
    disable_progress_bars()  # the baseline prints none either
    if args.latency_ms:
        print(f"(every Hub answer delayed by {args.latency_ms:g} ms)")
    hub_server = DistantHub(args.latency_ms / 1000, user="bench")
    with hub_server as hub, tempfile.TemporaryDirectory(prefix="hubskills-bench-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        os.environ["HOME"] = str(home)  # --global is not used, but never touch the real HOME
        bench_pull(hub, Path(tmp), args.rounds)
        for latency in dict.fromkeys((args.latency_ms, NETWORK_MS)):
            print(f"(lockfile pair: the fake Hub in its own process, answers {latency:g} ms late)")
            server, remote = hub_process(latency)
            folder = Path(tmp) / f"lock-{latency:g}ms"
            folder.mkdir()
            try:
                bench_lockfile(remote, folder, args.skills, args.pairs)
            finally:
                server.stdin.close()
                server.wait(timeout=30)


if __name__ == "__main__":
    main()
