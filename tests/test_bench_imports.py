"""Every bench loads (`make bench` runs them all, CI does not): a bench that imports a name
the code has since moved failed only when someone ran `make bench` (bench/space.py imported the
leaderboard from `registry.evaluation` long after it moved to `registry.results`). Each file is
loaded as its script would be, with its folder first on the path, without running its main."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"

_LOAD = """
import runpy, sys
failed = []
for path in sys.argv[1:]:
    sys.path.insert(0, path.rsplit("/", 1)[0])
    try:
        runpy.run_path(path, run_name="bench_import")
    except Exception as err:
        failed.append(f"{path}: {type(err).__name__}: {err}")
    finally:
        sys.path.pop(0)
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def test_every_bench_and_peer_loads():
    files = sorted(str(p) for p in [*BENCH.glob("*.py"), *(BENCH / "peers").glob("*.py")])
    assert len(files) > 20
    done = subprocess.run([sys.executable, "-c", _LOAD, *files], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
