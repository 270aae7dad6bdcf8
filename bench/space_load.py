"""Space load benchmark: bursts of visitors against `app.py` (run: `python bench/space_load.py`).

Starts `python app.py` on 127.0.0.1 over a generated local registry, then simulates visitors
with `gradio_client` (one client, i.e. one session, per visitor; created before the bursts):
100 of them making the page's first data call at once (`/page_load`), then bursts of
concurrent `/leaderboard` calls (default filters), of `/skill_page` calls (one skill) and, for
the record, of uncached searches. After those (and the memory they leave), 100 visitors
*arrive* at once as browsers do (`space_arrivals.py`: each a new connection and session that
gets the page, then joins the page's load events and reads their stream until the
leaderboard's data has come), and, on the small registry, 100 leaderboard reads beside two
evaluations on the embedded model, for the record. Two registries: `small`, the seeded one
(3 skills, the issue's baseline), and `large`, 10,000 skills x 10 models of results (10 cases
x 1 repeat x 2 arms: 2,000,000 rows, the shape of `bench/space.py`), generated once and cached
(`--data`). Goals, printed beside each measure with its ratio: 100 concurrent leaderboard reads
with 0 errors and p95 <= 1 s, 50 concurrent skill pages with p95 <= 1 s, the server under
600 MB resident (large), 100 arrivals with 0 errors and p95 <= 1.5 s to the leaderboard's data
(issue 38), the first page painted in under 2 s (Debian's chromium through playwright when
installed: until the leaderboard's first row shows; else the HTTP calls a browser makes).
Exits 1 when a goal is missed.

The visitors run on the same machine as the server; their own CPU time is printed, since on
a 2-core machine it competes with the server's. `ssl_verify=False` keeps gradio_client from
building a TLS context (loading the CA bundle, ~25 ms of CPU) for every plain-HTTP request.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from space_arrivals import arrivals  # noqa: E402  (bench/, beside this file)
from space_registry import large_registry  # noqa: E402

P95_GOAL_S = 1.0
ARRIVAL_GOAL_S = 1.5  # 100 visitors arriving at once, to a filled leaderboard (issue 38)
RSS_GOAL_MB = 600
FIRST_PAINT_GOAL_S = 2.0
SKILL = "hubskills/agent-skill-md"
FLOOR = "bench/peers/gradio_floor.py"  # the arrivals' floor: the smallest Gradio app
DEFAULT = ("", "All", "All", "All")


# --- the server and its visitors ------------------------------------------------------------

def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """`python app.py` (or `script`) in a subprocess, on a free port, over `home` (`env`:
    more variables, e.g. a Hub registry's)."""

    def __init__(self, home: Path, env: dict[str, str] | None = None,
                 script: str = "app.py") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = {**os.environ, "HUBSKILLS_HOME": str(home), "HF_HUB_OFFLINE": "1",
               "GRADIO_SERVER_PORT": str(self.port), "GRADIO_ANALYTICS_ENABLED": "False",
               "PYTHONPATH": str(ROOT), **(env or {})}
        self.log = tempfile.TemporaryFile()
        start = time.perf_counter()
        self.script = script
        self.proc = subprocess.Popen([sys.executable, script], cwd=ROOT, env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self._wait_ready()
        self.startup_s = time.perf_counter() - start

    def _wait_ready(self, timeout: float = 600.0) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"{self.script} exited:\n{self.log.read().decode()[-3000:]}")
            try:
                if httpx.get(self.url, timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.script} did not answer in time")

    def reset_peak(self) -> bool:
        """Start measuring the peak anew (Linux: `clear_refs`); whether that worked."""
        try:
            Path(f"/proc/{self.proc.pid}/clear_refs").write_text("5")
        except OSError:
            return False
        return True

    def memory_mb(self) -> tuple[float, float]:
        """(resident now, peak resident since start or `reset_peak`) in MB."""
        fields = dict(line.split(":", 1) for line in
                      Path(f"/proc/{self.proc.pid}/status").read_text().splitlines())
        return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)

    def cpu_s(self) -> float:
        """CPU seconds the server has used."""
        parts = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        """End the server."""
        self.proc.terminate()
        self.proc.wait(timeout=30)


def first_paint(url: str) -> tuple[float, str]:
    """Seconds until a fresh visitor sees the leaderboard's first row, and how it was told."""
    chromium = Path("/usr/bin/chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if sync_playwright is None or not chromium.is_file():
        return _first_paint_http(url), "HTTP: page, config, page_load"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        page = browser.new_page()
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_function("""() => [...document.querySelectorAll(
            '#leaderboard-table [role=row][data-index]')].some(r => r.innerText.includes('/'))""",
                               timeout=60_000)
        seconds = time.perf_counter() - start
        browser.close()
    return seconds, "chromium: until the first leaderboard row shows"


def _first_paint_http(url: str) -> float:
    import httpx
    from gradio_client import Client

    start = time.perf_counter()
    httpx.get(url, timeout=60)
    Client(url, verbose=False, ssl_verify=False).predict(*DEFAULT, api_name="/page_load")
    return time.perf_counter() - start


def burst(clients: list[Any], call: Callable[[Any, int], Any]) -> dict[str, Any]:
    """All `clients` call at once (after a barrier); latencies and errors."""
    barrier = threading.Barrier(len(clients))

    def visit(item: tuple[int, Any]) -> tuple[float, str | None]:
        number, client = item
        barrier.wait()
        start = time.perf_counter()
        try:
            call(client, number)
            error = None
        except Exception as err:  # noqa: BLE001 - every failure is counted, whatever it is
            error = str(err)[:120]
        return time.perf_counter() - start, error

    cpu = time.process_time()
    with ThreadPoolExecutor(len(clients)) as pool:
        results = list(pool.map(visit, enumerate(clients)))
    times = sorted(t for t, _ in results)
    errors = [e for _, e in results if e]
    return {"n": len(clients), "median": statistics.median(times),
            "p95": float(np.percentile(times, 95)), "max": times[-1], "errors": errors,
            "client_cpu": time.process_time() - cpu}


def make_clients(url: str, count: int) -> list[Any]:
    """`count` visitors, each its own gradio_client session."""
    from gradio_client import Client

    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda _: Client(url, verbose=False, ssl_verify=False),
                             range(count)))


def page_load(client: Any, _: int) -> Any:
    """What a browser asks for first: the page's data (this creates the visitor's session)."""
    return client.predict(*DEFAULT, api_name="/page_load")


def leaderboard(client: Any, _: int) -> Any:
    """The default leaderboard."""
    return client.predict(*DEFAULT, api_name="/leaderboard")


def skill_page(client: Any, _: int) -> Any:
    """One skill's page."""
    return client.predict(SKILL, api_name="/skill_page")


def search(client: Any, number: int) -> Any:
    """A search nobody asked for before (so not cached)."""
    return client.predict(f"skill-{number % 10}{number:03d}", "All", "All", "All",
                          api_name="/leaderboard")


BURSTS = (  # (visitors, call, label, p95 goal or None)
    (100, page_load, "/page_load (sessions made before)", None),
    (1, leaderboard, "/leaderboard", None),
    (20, leaderboard, "/leaderboard", None),
    (50, leaderboard, "/leaderboard", None),
    (100, leaderboard, "/leaderboard", P95_GOAL_S),
    (50, skill_page, "/skill_page", P95_GOAL_S),
    (20, search, "/leaderboard (new searches)", None),
)


def _print_burst(server: Server, clients: list[Any], call: Callable[[Any, int], Any],
                 label: str, goal: float | None) -> bool:
    """One burst as a table row; whether it met its goal."""
    cpu = server.cpu_s()
    result = burst(clients, call)
    errors = len(result["errors"])
    goal_text = f"0 errors, p95 ≤ {goal:g} s" if goal else "-"
    ratio = f"{result['p95'] / goal:.2f}" if goal else "-"
    first_error = f" ({result['errors'][0]})" if errors else ""
    print(f"| {len(clients)} | `{label}` | {result['median']:.2f} s | {result['p95']:.2f} s | "
          f"{result['max']:.2f} s | {errors}{first_error} | {goal_text} | {ratio} | "
          f"{server.cpu_s() - cpu:.2f} s | {result['client_cpu']:.2f} s |")
    return goal is None or (not errors and result["p95"] <= goal)


def _print_arrivals(server: Server, visitors: int = 100) -> bool:
    """`visitors` arriving at once as browsers do (`space_arrivals.py`), at the Space and, just
    before, at the floor (`peers/gradio_floor.py`: one table, one load event, on the same
    Gradio and machine); whether the Space's p95 to the leaderboard's data met its goal with no
    error. The ratio to the floor says what the Space adds to Gradio's own cost of a visitor,
    whatever the machine's load."""
    floor_server = Server(Path(tempfile.gettempdir()), script=FLOOR)  # reads nothing there
    try:
        load, floor_cpu = os.getloadavg()[0], floor_server.cpu_s()
        floor = arrivals(floor_server.url, visitors)
        floor_cpu = floor_server.cpu_s() - floor_cpu
    finally:
        floor_server.stop()
    cpu = server.cpu_s()
    found = arrivals(server.url, visitors)
    cpu = server.cpu_s() - cpu
    errors = found["errors"] + floor["errors"]
    print(f"{visitors} visitors arriving at once (page, then its load events "
          f"{', '.join(found['events'])} through the queue; load average {load:.1f}): page "
          f"p95 {found['page_p95']:.2f} s; leaderboard data median {found['median']:.2f} s, "
          f"p95 {found['p95']:.2f} s, slowest {found['max']:.2f} s (goal <= "
          f"{ARRIVAL_GOAL_S:g} s, ratio {found['p95'] / ARRIVAL_GOAL_S:.2f}); {len(errors)} "
          f"errors{f' ({errors[0]})' if errors else ''}; server CPU "
          f"{cpu:.2f} s, visitors' CPU {found['client_cpu']:.2f} s")
    print(f"the floor, {FLOOR} (same {visitors} arrivals, just before): page p95 "
          f"{floor['page_p95']:.2f} s; data median {floor['median']:.2f} s, p95 "
          f"{floor['p95']:.2f} s; server CPU {floor_cpu:.2f} s; the Space / the floor: p95 "
          f"{found['p95'] / floor['p95']:.2f}, server CPU {cpu / max(floor_cpu, 0.01):.2f}")
    return not errors and found["p95"] <= ARRIVAL_GOAL_S


def _burst_beside_evaluations(server: Server, clients: list[Any]) -> None:
    """100 leaderboard reads while two evaluations on the embedded model hold both slots of
    model work (printed for the record: the model's threads take the cores)."""
    from gradio_client.utils import Status

    from registry.providers.embedded import availability

    if not availability()[0]:
        print(f"(no burst beside evaluations: {availability()[1]})")
        return
    from gradio_client import Client

    work = [Client(server.url.rstrip("/") + "/work/", verbose=False, ssl_verify=False)
            for _ in range(2)]  # the workbench's page (`space.workbench`)
    runs = [client.submit(SKILL, [], ["embedded/smollm2-135m"], "", 2, "inline", "user", 3,
                          64, 0, "", "", "", api_name="/evaluate") for client in work]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not all(
            r.status().code in (Status.PROCESSING, Status.PROGRESS) for r in runs):
        time.sleep(0.1)
    _print_burst(server, clients, leaderboard, "/leaderboard (2 evaluations running)", None)
    for run in runs:
        run.cancel()


def _print_memory(server: Server, checked: bool, serving: bool) -> list[bool]:
    """Resident memory after the bursts and its peak while serving; the goals when
    `checked` (the large registry)."""
    rss, peak = server.memory_mb()
    if not checked:
        print(f"server memory: {rss:.0f} MB resident after the bursts, peak {peak:.0f} MB")
        return []
    which = "while serving" if serving else "since the start"
    print(f"server memory: {rss:.0f} MB resident after the bursts (goal < {RSS_GOAL_MB} MB, "
          f"ratio {rss / RSS_GOAL_MB:.2f}); peak {which} {peak:.0f} MB (goal < {RSS_GOAL_MB} "
          f"MB, ratio {peak / RSS_GOAL_MB:.2f})")
    return [rss <= RSS_GOAL_MB, peak <= RSS_GOAL_MB]


def run_registry(name: str, home: Path, arrivals_only: bool = False) -> list[bool]:
    """Every measure over one registry (`arrivals_only`: the arrivals and their floor alone);
    returns whether each goal was met."""
    server = Server(home)
    met = []
    try:
        if arrivals_only:
            print(f"\n## {name} registry")
            return [_print_arrivals(server)]
        startup_peak = server.memory_mb()[1]
        print(f"\n## {name} registry: app.py answered after {server.startup_s:.1f} s; "
              f"{server.memory_mb()[0]:.0f} MB resident (peak while starting "
              f"{startup_peak:.0f} MB: the results loaded and the default view built)")
        paint, how = first_paint(server.url)
        met.append(paint <= FIRST_PAINT_GOAL_S)
        print(f"first page painted in {paint:.2f} s ({how}); goal < {FIRST_PAINT_GOAL_S:g} s, "
              f"ratio {paint / FIRST_PAINT_GOAL_S:.2f}")
        serving = server.reset_peak()
        clients = make_clients(server.url, max(n for n, *_ in BURSTS))
        print("| concurrent visitors | call | median | p95 | slowest | errors | goal | ratio |"
              " server CPU | visitors' CPU |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for n, call, label, goal in BURSTS:
            met.append(_print_burst(server, clients[:n], call, label, goal))
        met += _print_memory(server, name == "large", serving)
        met.append(_print_arrivals(server))  # after the memory goals: 100 sessions more
        rss, peak = server.memory_mb()
        print(f"server memory after the arrivals' 100 new sessions: {rss:.0f} MB resident, "
              f"peak {peak:.0f} MB")
        if name == "small":
            _burst_beside_evaluations(server, clients)
    finally:
        server.stop()
    return met


def main(argv: list[str] | None = None) -> int:
    """Run the load benchmark; exit 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--registry", choices=["small", "large", "both"], default="both")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) /
                        "hubskills-bench", help="where the large registry is kept")
    parser.add_argument("--arrivals-only", action="store_true",
                        help="only the 100 arrivals and their floor (issue 38)")
    args = parser.parse_args(argv)
    met = []
    if args.registry in ("small", "both"):
        with tempfile.TemporaryDirectory() as home:
            met += run_registry("small", Path(home), args.arrivals_only)
    if args.registry in ("large", "both"):
        met += run_registry("large", large_registry(args.data), args.arrivals_only)
    print(f"\n{sum(met)}/{len(met)} goals met")
    return 0 if all(met) else 1


if __name__ == "__main__":
    sys.exit(main())
