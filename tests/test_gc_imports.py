"""`import_kept`: the command line imports with the cyclic collector paused (on any thread, one
shared pause), leaves the collector as it found it and what it imported out of later
collections; anywhere else it is a plain import.

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
seen["frozen"] = not any(o is main.KEPT for o in gc.get_objects())  # left out of collections
print(json.dumps(seen))
"""


def imported(tmp_path: Path, setup: str = "") -> dict[str, bool]:
    for name in ("on_main", "on_worker"):
        (tmp_path / f"{name}.py").write_text(
            "import gc\nCOLLECTING = gc.isenabled()\nKEPT = [[]]\n")
    script = SCRIPT.format(folder=str(tmp_path), setup=setup)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def test_the_command_line_imports_with_the_collector_paused(tmp_path):
    seen = imported(tmp_path, "pause_for_imports()")
    assert seen == {"main": False, "worker": False, "after": True, "again": True,
                    "frozen": True}


def test_imports_on_two_threads_share_one_pause(tmp_path):
    """The first to start pauses, the last to end resumes, whatever the order they end in."""
    (tmp_path / "slow.py").write_text(
        "import gc, threading\nSTARTED = threading.Event(); GO = threading.Event()\n")
    (tmp_path / "outer.py").write_text(
        "import gc, slow\nslow.STARTED.set(); slow.GO.wait()\nCOLLECTING = gc.isenabled()\n")
    (tmp_path / "inner.py").write_text("import gc\nCOLLECTING = gc.isenabled()\n")
    script = f"""
import gc, json, sys, threading
sys.path.insert(0, {str(tmp_path)!r})
from registry._gc import import_kept, pause_for_imports
import slow
pause_for_imports()
box = {{}}
worker = threading.Thread(target=lambda: box.update(outer=import_kept("outer")))
worker.start(); slow.STARTED.wait()
inner = import_kept("inner")  # starts after the worker's and ends before it
during = gc.isenabled()
slow.GO.set(); worker.join()
print(json.dumps([inner.COLLECTING, during, box["outer"].COLLECTING, gc.isenabled()]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert json.loads(done.stdout) == [False, False, False, True]


def test_elsewhere_an_import_is_a_plain_one(tmp_path):
    assert imported(tmp_path) == {"main": True, "worker": True, "after": True, "again": True,
                                  "frozen": False}


def test_a_paused_collector_stays_paused(tmp_path):
    seen = imported(tmp_path, "pause_for_imports(); gc.disable()")
    assert seen["main"] is False and seen["after"] is False


def test_pauses_ended_out_of_order_leave_the_collector_running():
    """Two threads' pauses (visitors building boards at once) end in the other order than
    they began: the last to end resumes the collector, the first does not."""
    import gc

    from registry._gc import collector

    assert gc.isenabled()
    first, second = collector(paused=True), collector(paused=True)
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert not gc.isenabled()  # the second pause still holds
    second.__exit__(None, None, None)
    assert gc.isenabled()


def test_running_inside_a_pause_pauses_again_after():
    import gc

    from registry._gc import collector

    with collector(paused=True):
        with collector(paused=False):
            assert gc.isenabled()  # an event loop's cycles are collected
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_module_another_thread_is_still_importing_is_waited_for(tmp_path, monkeypatch):
    """`import_kept` never hands out a module half imported by another thread (the Space's
    concurrent evaluations once got an `openai` without `AsyncOpenAI`): it waits for it."""
    import builtins
    import threading

    from registry._gc import import_kept

    name = f"hs_slow_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(
        "import builtins\nbuiltins.hs_started.set()\nbuiltins.hs_release.wait(60)\nDONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    started, release, got = threading.Event(), threading.Event(), {}
    monkeypatch.setattr(builtins, "hs_started", started, raising=False)
    monkeypatch.setattr(builtins, "hs_release", release, raising=False)
    first = threading.Thread(target=lambda: import_kept(name))
    first.start()
    assert started.wait(60)  # the first import is under way, stopped half-way
    second = threading.Thread(target=lambda: got.update(  # whole when handed out?
        done=getattr(import_kept(name), "DONE", False)))
    second.start()
    second.join(5)  # a half-imported module would come back at once, without DONE
    release.set()
    first.join(60)
    second.join(60)
    assert got["done"] is True
