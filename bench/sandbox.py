"""The sandbox's added cost per `python` check (run: `python bench/sandbox.py`).

The same check (`return 'ok' in output`, graded through `run_checks`) runs in bubblewrap and
through the plain subprocess of before the sandbox (the `none` backend: rlimits, own session,
cleared environment), in alternating pairs so load from other processes hits both alike. We
print the median of each, their ratio and the added milliseconds (goal <= 15 ms added per
check), the same for the fastest of each (what an idle machine sees), and the same for an
empty `python3 -I -c pass`. Exits 1 when the median goal is missed or bubblewrap does not work
here.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from registry.evaluation.checks import run_checks  # noqa: E402
from registry.format.suite import Case  # noqa: E402
from registry.sandbox import BwrapSandbox, DirectSandbox, Sandbox  # noqa: E402

PAIRS, GOAL_MS = 40, 15.0
CASE = Case.model_validate({"id": "b", "prompt": "p", "checks": [
    {"type": "python", "code": "def check(output, files):\n    return 'ok' in output"}]})


def _check_once(sandbox: Sandbox) -> float:
    start = time.perf_counter()
    [verdict] = asyncio.run(run_checks(CASE, "ok", sandbox=sandbox))
    assert verdict.passed is True, verdict.reason
    return time.perf_counter() - start


def _empty_once(sandbox: Sandbox, workspace: Path) -> float:
    start = time.perf_counter()
    result = asyncio.run(sandbox.run([sys.executable, "-I", "-c", "pass"], workspace,
                                     timeout=30))
    assert result.exit_code == 0, result.stderr
    return time.perf_counter() - start


def _pairs(measure, bwrap: Sandbox, plain: Sandbox) -> tuple[list[float], list[float]]:
    boxed: list[float] = []
    direct: list[float] = []
    for i in range(PAIRS):
        order = [(bwrap, boxed), (plain, direct)]
        for sandbox, times in order if i % 2 else reversed(order):
            times.append(measure(sandbox) * 1000)
    return boxed, direct


def _line(name: str, boxed: float, direct: float, goal: str = "") -> str:
    return (f"  {name}: bwrap {boxed:.1f} ms / plain subprocess {direct:.1f} ms = ratio "
            f"{boxed / direct:.2f}, added {boxed - direct:.1f} ms{goal}")


def main() -> int:
    """Measure, print, and return the exit status."""
    bwrap, plain = BwrapSandbox(), DirectSandbox()
    works, why = bwrap.probe()
    if not works:
        print(f"sandbox bench: not measured: {why}")
        return 1
    _check_once(bwrap), _check_once(plain)  # warm-up: imports, the probe, page cache
    boxed, direct = _pairs(_check_once, bwrap, plain)
    with tempfile.TemporaryDirectory() as folder:
        empty = _pairs(lambda s: _empty_once(s, Path(folder)), bwrap, plain)
    median = statistics.median
    added = median(boxed) - median(direct)
    print(f"sandbox: {PAIRS} alternating pairs per measure")
    print(_line("python check, median", median(boxed), median(direct),
                f" per check (goal <= {GOAL_MS:.0f} ms)"))
    print(_line("python check, fastest", min(boxed), min(direct)))
    print(_line("empty python3 -I, median", median(empty[0]), median(empty[1])))
    return 0 if added <= GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
