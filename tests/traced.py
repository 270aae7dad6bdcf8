"""The peak memory of a piece of code, traced by `tracemalloc` in an interpreter of its own.

No test starts or stops `tracemalloc` in the suite's process. Stopping it races with any thread
that allocates without holding the GIL, and the suite's process has such threads (the local
model's engine, pyarrow's pool, a Space's refresher): CPython gh-128679, a segmentation fault in
`tracemalloc.stop()`, fixed in 3.12.9 and 3.13.2 but never in 3.11, which takes security fixes
only. CI's Python 3.11 suite died of it once in `tests/test_skill.py`, in a thread that held a
thread state and ran no Python frame: a thread taking the GIL to trace an allocation while the
tracing stopped. Here the measured code runs alone, and tracing never stops before the
interpreter ends.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

from conftest import REPO_ROOT

_PRELUDE = f"""
import json, sys, tracemalloc
sys.path[:0] = [{str(REPO_ROOT)!r}, {str(REPO_ROOT / "tests")!r}]
"""


def traced_peak(setup: str, measured: str, **values: Any) -> tuple[int, Any]:
    """Run ``setup`` then, traced, ``measured`` in a new interpreter; return the peak bytes
    allocated while ``measured`` ran and the JSON value it left in ``result``.

    ``values`` reach both as the names they are given (JSON values: paths as strings).
    """
    script = "\n".join([
        _PRELUDE,
        *(f"{name} = json.loads({json.dumps(json.dumps(value))})" for name, value in
          values.items()),
        textwrap.dedent(setup),
        "result = None",
        "tracemalloc.start()",
        textwrap.dedent(measured),
        "peak = tracemalloc.get_traced_memory()[1]",
        "print(json.dumps([peak, result]))",  # tracing ends with the interpreter, never before
    ])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    peak, result = json.loads(done.stdout.strip().splitlines()[-1])
    return peak, result
