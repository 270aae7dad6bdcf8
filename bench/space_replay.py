"""The Space's p95 while a hostile replay runs (issue 37; run: `python bench/space_replay.py`).

A fake Hub (`tests/fakes/hub_server.py`, in a process of its own) holds a results dataset that
"boss" owns, with genuine runs of three skills x two models on `main` (the leaderboard), and one
open pull request by "alice" whose run is hostile: each of its 16 cases x 2 arms checks a
1,000,000-character answer (32 MB of rows, half the verifier's bound on a run file;
`--answer-chars N` for another length) with the catastrophic pattern `^(.+)+Q` (minutes in
Python's `re`, linear in RE2) and with a python check that sleeps to its limit, the
verifier's cap per check. `python app.py` serves that registry as boss, with the verifier's
caps set low (`HUBSKILLS_REPLAY_CHECK_TIMEOUT` 2 s, `HUBSKILLS_REPLAY_TIMEOUT` 12 s), so each
replay runs until the cap stops it and is not recorded.

100 visitors (`gradio_client` sessions, made once, as in `space_load.py`) read the default
leaderboard at once, in rounds of two kinds taken in turn (B A A B B A ...): *quiet*, nothing
else running (a burst during which a replay ran is done again); *hostile*, three bursts: the
owner asks for the pending view while its review is settled (*pending view only*: the view
lists the pull request's files, the 32 MB run file by its size, over the view's 8 MB
`pending.VIEW_BYTES`, unread; the worker replays nothing); alice pushes the run file to her
pull request again (its head moves) and the owner asks again (*replay asked*: the view, the
Space's background worker listing the pull request, the replay's child process
`registry.verify.bounded` starting, downloading the run file once, hashing and bounding it,
none of it in the Space's process); and once that child has run 3 s (*replay regrading*).
Each burst's p95 is printed with the load average and the child's CPU seconds during it, then
the medians of `ROUNDS` bursts of each kind and each over the quiet one (goal for the replay's
two: <= 1.2, the p95 unchanged within this machine's noise; the view alone is printed for the
record). Exits 1 when a goal is missed.

Measured 2026-12-06 (docs/benchmarks.md, 2 shared cores, load average 2.2-6.9), over the quiet
p95: before the run file's read and hash moved into the child and the view's read was bounded,
view only 1.13-1.29, replay asked 1.41-1.89, regrading 1.02-1.14; after, 0.98-1.17,
1.20-1.39 (the goal still missed in two runs of three) and 0.96-1.23; 0 errors. Then (load
average 4.6-13.4), with listings kept by commit (`registry/stores/listings.py`), the child at
nice 19 (`bounded.give_way`) and the fake Hub hashing a file once, not on every listing:
0.85-1.24, 1.03-1.15 (the goal met in four runs of four) and 0.87-1.06.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
sys.path.append(str(ROOT / "bench"))
# huggingface_hub reads these once, at import.
os.environ.update(HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_OFFLINE="0",
                  HF_HUB_DISABLE_PROGRESS_BARS="1")

from space_load import Server, burst, leaderboard, make_clients  # noqa: E402

DATASET, ALICE = "boss/hubskills-evals", "hf_alice_token"
HOSTILE = "boss/hostile-patterns"
ROUNDS, VISITORS, CASES, OUTPUT_CHARS = 8, 100, 16, 1_000_000
CHECK_S, REPLAY_CAP_S, SETTLED_S = 2.0, 12.0, 3.0
RATIO_GOAL = 1.2
PATTERN = "^(.+)+Q"
SLEEPER = (f"import time\n\ndef check(output, files):\n    time.sleep({CHECK_S * 0.75})\n"
           "    return True, 'slept'\n")
MARK = "Recite the long answer"


# --- the fake Hub and what it holds -----------------------------------------------------------

def serve_hub() -> None:
    """This file run with `--serve-hub`: the fake Hub until stdin closes (boss owns it)."""
    from fakes.hub_server import FakeHub

    with FakeHub(user="boss") as hub:
        hub.add_user("alice", ALICE)
        print(json.dumps({"url": hub.url, "token": hub.token}), flush=True)
        sys.stdin.read()


def answer(body: dict) -> str:
    """The fake model: a line of `OUTPUT_CHARS` without a Q for the hostile cases."""
    text = json.dumps(body["messages"])
    if MARK in text:
        return "a" * OUTPUT_CHARS
    return "Zorblax listens on port 4417." if "4417" in text else "Probably port 8080."


def skill(root: Path, name: str, checks: list[dict], prompt: str, cases: int) -> Path:
    """A skill folder `root/name` with `cases` cases graded by `checks`."""
    folder = root / name
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f'---\nname: {name}\ndescription: "Ports of the zorblax daemon. Use when configuring '
        'zorblax."\n---\n\nThe zorblax daemon listens on port 4417.\n')
    (folder / "evals" / "evals.json").write_text(json.dumps({"cases": [
        {"id": f"q{i}", "prompt": f"{prompt} ({i})", "checks": checks} for i in range(cases)]}))
    return folder


def seed(root: Path, hub_env: dict[str, str]) -> tuple[str, bytes]:
    """Boss's runs on `main` and alice's pull request #1 of the hostile run: the run file's
    path and bytes."""
    from fakes.openai_server import FakeOpenAIServer
    from huggingface_hub import HfApi

    from registry.config import Settings
    from registry.evaluation.config import EvalConfig
    from registry.evaluation.engine import run_evaluation
    from registry.format.version_ref import SkillVersionRef
    from registry.publishing.push import push_saved_run
    from registry.stores.hub import HubStore

    with FakeOpenAIServer(responder=answer) as model:
        settings = Settings.from_env({**os.environ, **hub_env, "HUBSKILLS_HOME": str(
            root / "boss"), "HUBSKILLS_BASE_URL": model.url})
        store = HubStore(settings)

        def evaluate(folder: Path, repo: str, models: list[str]) -> str:
            store.publish(folder, repo=repo, version="1.0.0")
            return run_evaluation(folder, EvalConfig(models=models, runs=1), settings,
                                  published=SkillVersionRef(repo, store.resolve(repo).sha)
                                  ).manifest.run_id

        for k in range(3):
            folder = skill(root, f"zorblax-{k}", [{"type": "contains", "value": ["4417"]}],
                           "Which port does zorblax use?", 10)
            run_id = evaluate(folder, f"boss/zorblax-{k}", ["local/model-a", "local/model-b"])
            push_saved_run(store, settings.runs_dir, run_id)
        hostile = skill(root, "hostile-patterns", [
            {"type": "regex", "pattern": PATTERN},
            {"type": "python", "code": SLEEPER, "timeout": CHECK_S}], MARK, CASES)
        run_id = evaluate(hostile, HOSTILE, ["local/model-a"])
        alice = HubStore(Settings.from_env({**os.environ, **hub_env, "HF_TOKEN": ALICE,
                                            "HUBSKILLS_HOME": str(root / "alice")}))
        assert push_saved_run(alice, settings.runs_dir, run_id).pending
    api = HfApi(endpoint=hub_env["HF_ENDPOINT"], token=hub_env["HF_TOKEN"])
    [path] = [p for p in api.list_repo_files(DATASET, repo_type="dataset",
                                             revision="refs/pr/1") if run_id in p]
    return path, Path(api.hf_hub_download(DATASET, path, repo_type="dataset",
                                          revision="refs/pr/1",
                                          cache_dir=root / "cache")).read_bytes()


def push_again(hub_env: dict[str, str], path: str, data: bytes, number: int) -> None:
    """Alice pushes the run file to her pull request again, its first two rows swapped on
    every other push (the Hub keeps no commit that changes nothing): its head moves."""
    from huggingface_hub import CommitOperationAdd, HfApi

    if number % 2:
        first, second, rest = data.split(b"\n", 2)
        data = b"\n".join([second, first, rest])
    HfApi(endpoint=hub_env["HF_ENDPOINT"], token=ALICE).create_commit(
        DATASET, [CommitOperationAdd(path, data)], commit_message="again",
        repo_type="dataset", revision="refs/pr/1")


def last_review(hub_env: dict[str, str]) -> str:
    """The first line of the verifier's latest comment on pull request #1, and its problem."""
    from huggingface_hub import HfApi

    details = HfApi(endpoint=hub_env["HF_ENDPOINT"], token=hub_env["HF_TOKEN"]
                    ).get_discussion_details(DATASET, 1, repo_type="dataset")
    said = [e.content for e in details.events if getattr(e, "content", None)]
    lines = said[-1].splitlines() if said else ["(no comment)"]
    return " / ".join(line for line in lines if line.strip() and not line.startswith("<!--"))[:400]


# --- the replay's child, seen from outside --------------------------------------------------

def replay_child(server_pid: int) -> int | None:
    """The Space's bounded replay child (`python -m registry.verify.bounded`), if one runs."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid == server_pid and b"registry.verify.bounded" in (
                    entry / "cmdline").read_bytes():
                return int(entry.name)
        except (OSError, ValueError, IndexError):
            continue
    return None


def cpu_s(pid: int | None) -> float:
    """CPU seconds of `pid` and its reaped children (0 once it has ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def wait_for(test: Callable[[], Any], timeout: float) -> Any:
    """`test()`'s first true value within `timeout` seconds (None after)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := test():
            return found
        time.sleep(0.05)
    return None


# --- the rounds -------------------------------------------------------------------------------

def measured(server: Server, clients: list[Any], kind: str) -> dict:
    """One burst of leaderboard reads, with the load average, whether a replay's child ran
    at its start and end, and the CPU that child used meanwhile (all of it for one that
    started during the burst)."""
    load = os.getloadavg()[0]
    before = replay_child(server.proc.pid)
    cpu = cpu_s(before)
    result = burst(clients, leaderboard)
    after = replay_child(server.proc.pid)
    used = cpu_s(after) - (cpu if after == before else 0.0) if after else 0.0
    return {**result, "kind": kind, "load": load, "replay": (before, after), "child_cpu": used}


def quiet(server: Server, clients: list[Any]) -> dict:
    """A burst with no replay running (again when one ran meanwhile)."""
    for _ in range(3):
        wait_for(lambda: replay_child(server.proc.pid) is None, REPLAY_CAP_S + 30)
        found = measured(server, clients, "quiet")
        if found["replay"] == (None, None):
            return found
    return found


def view_only(server: Server, clients: list[Any], owner: Any) -> dict:
    """The owner asks for the pending view while nothing changed: a burst meanwhile (the view
    lists the pull request's files; the worker finds its review settled and replays nothing)."""
    wait_for(lambda: replay_child(server.proc.pid) is None, REPLAY_CAP_S + 30)
    view = owner.submit(api_name="/pending")
    found = measured(server, clients, "pending view only")
    view.result(timeout=120)
    return found


def hostile(server: Server, clients: list[Any], owner: Any, hub_env: dict[str, str],
            path: str, data: bytes, number: int) -> list[dict]:
    """Alice pushes again and the owner asks for the pending view: a burst at once (the view,
    the worker's listing and the child's start, read and hash), and one once the child has
    run `SETTLED_S` (regrading); then waits for the child to end."""
    wait_for(lambda: replay_child(server.proc.pid) is None, REPLAY_CAP_S + 30)
    push_again(hub_env, path, data, number)
    view = owner.submit(api_name="/pending")  # asks the worker, which never waits on it
    found = [measured(server, clients, "replay asked (and the view)")]
    view.result(timeout=120)
    child = wait_for(lambda: replay_child(server.proc.pid), 30)
    time.sleep(max(0.0, SETTLED_S - (time.monotonic() - _started(child))))
    found.append(measured(server, clients, "replay regrading"))
    return found


def _started(pid: int | None) -> float:
    """When `pid` started, on the `time.monotonic` clock (now when unknown)."""
    try:
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, TypeError, ValueError):
        return time.monotonic()
    return time.monotonic() - (uptime - ticks / os.sysconf("SC_CLK_TCK"))


def report(results: list[dict]) -> bool:
    """The table, the medians and the ratios; whether the goal was met."""
    print("| round | condition | load | median | p95 | slowest | errors | replay child "
          "(start, end) | child CPU during |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        alive = ", ".join("yes" if pid else "no" for pid in r["replay"])
        print(f"| {r['round']} | {r['kind']} | {r['load']:.1f} | {r['median']:.2f} s | "
              f"{r['p95']:.2f} s | {r['max']:.2f} s | {len(r['errors'])} | {alive} | "
              f"{r['child_cpu']:.2f} s |")
    p95 = {kind: statistics.median(r["p95"] for r in results if r["kind"] == kind)
           for kind in dict.fromkeys(r["kind"] for r in results)}
    loads = [r["load"] for r in results]
    print(f"\nmedian p95 of {ROUNDS} bursts each (load average {min(loads):.1f}-"
          f"{max(loads):.1f}): " + "; ".join(f"{k} {v:.2f} s" for k, v in p95.items()))
    met = True
    for kind, value in p95.items():
        if kind != "quiet":
            ratio = value / p95["quiet"]
            counted = kind.startswith("replay")
            met &= ratio <= RATIO_GOAL or not counted
            goal = f"goal <= {RATIO_GOAL:g}" if counted else "for the record"
            print(f"{kind} / quiet: {ratio:.2f} ({goal})")
    errors = sum(len(r["errors"]) for r in results)
    print(f"errors: {errors} (goal 0)")
    return met and errors == 0


def main() -> int:
    """Seed the fake Hub, serve it, run the rounds; exit 1 when the goal is missed."""
    from registry.sandbox import BwrapSandbox

    works, why = BwrapSandbox().probe()
    if not works:
        print(f"not measured: the replay's python checks need the sandbox ({why})")
        return 0
    hub = subprocess.Popen([sys.executable, __file__, "--serve-hub"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    server = None
    try:
        said = json.loads(hub.stdout.readline())  # type: ignore[union-attr]
        hub_env = {"HUBSKILLS_REGISTRY": "hub", "HF_ENDPOINT": said["url"],
                   "HF_TOKEN": said["token"], "HUBSKILLS_RESULTS_REPO": DATASET}
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            path, data = seed(Path(tmp), hub_env)
            print(f"seeded the fake Hub in {time.perf_counter() - started:.0f} s: 3 skills x 2 "
                  f"models on main; pull request #1: {CASES} cases x 2 arms, answers of "
                  f"{OUTPUT_CHARS:,} characters checked by /{PATTERN}/ and a python check "
                  f"sleeping to its {CHECK_S:g} s cap; {len(data) / 1e6:.1f} MB of rows")
            server = Server(Path(tmp) / "space", {
                **hub_env, "HF_HUB_OFFLINE": "0", "HF_HUB_DISABLE_XET": "1",
                "HUBSKILLS_REPLAY_CHECK_TIMEOUT": str(CHECK_S),
                "HUBSKILLS_REPLAY_TIMEOUT": str(REPLAY_CAP_S)})
            owner, *clients = make_clients(server.url, VISITORS + 1)
            burst(clients, leaderboard)  # warm-up: every session has read once
            owner.predict(api_name="/pending")  # the first review, not measured: settled
            wait_for(lambda: replay_child(server.proc.pid), 30)
            results = []
            for number in range(ROUNDS * 2):
                round_ = number // 2 + 1
                if number % 4 in (0, 3):
                    found = [view_only(server, clients, owner),
                             *hostile(server, clients, owner, hub_env, path, data, round_)]
                else:
                    found = [quiet(server, clients)]
                results += [{**r, "round": round_} for r in found]
            wait_for(lambda: replay_child(server.proc.pid) is None, REPLAY_CAP_S + 30)
            time.sleep(1)  # the worker's comment
            print(f"the last review of pull request #1: {last_review(hub_env)}")
            return 0 if report(results) else 1
    finally:
        if server is not None:
            server.stop()
        hub.stdin.close()  # type: ignore[union-attr]
        hub.wait(timeout=30)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve-hub"]:
        serve_hub()
    else:
        if sys.argv[1:2] == ["--answer-chars"]:  # e.g. 200000: how the rows' size weighs
            OUTPUT_CHARS = int(sys.argv[2])
        sys.exit(main())
