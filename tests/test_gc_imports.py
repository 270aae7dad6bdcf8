"""`import_kept`: the command line imports with the cyclic collector paused, on its main thread
only, and leaves the collector as it found it; anywhere else it is a plain import.

Each case runs in a fresh interpreter (the switch is process-wide), importing throwaway modules
that record whether the collector ran while they were imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = """
import gc, json, sys, threading
sys.path.insert(0, {folder!r})
from registry._gc import import_kept, pause_for_imports
{setup}
seen = {{}}
main = import_kept("on_main")
seen["main"] = main.COLLECTING
box = {{}}
worker = threading.Thread(target=lambda: box.update(mod=import_kept("on_worker")))
worker.start(); worker.join()
seen["worker"] = box["mod"].COLLECTING
seen["after"] = gc.isenabled()
seen["again"] = import_kept("on_main") is main
print(json.dumps(seen))
"""


def imported(tmp_path: Path, setup: str = "") -> dict[str, bool]:
    for name in ("on_main", "on_worker"):
        (tmp_path / f"{name}.py").write_text("import gc\nCOLLECTING = gc.isenabled()\n")
    script = SCRIPT.format(folder=str(tmp_path), setup=setup)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def test_the_command_line_imports_on_its_main_thread_with_the_collector_paused(tmp_path):
    seen = imported(tmp_path, "pause_for_imports()")
    assert seen == {"main": False, "worker": True, "after": True, "again": True}


def test_elsewhere_an_import_is_a_plain_one(tmp_path):
    assert imported(tmp_path) == {"main": True, "worker": True, "after": True, "again": True}


def test_a_paused_collector_stays_paused(tmp_path):
    seen = imported(tmp_path, "pause_for_imports(); gc.disable()")
    assert seen["main"] is False and seen["after"] is False
