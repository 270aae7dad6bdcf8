"""Imported by every Python a code check starts (hubskills puts this folder on PYTHONPATH and
sets PYTHONSAFEPATH, so Python no longer searches the working folder or a script's folder
first): those folders are searched last instead, so the files an agent left are importable as
its project's modules but can never stand in for the interpreter's own (a `pytest.py`, a
`tomllib.py`, a `sitecustomize.py`)."""

import os
import sys


def _search_last() -> None:
    folders = [os.getcwd()]
    script = sys.argv[0] if sys.argv else ""
    if script and script not in ("-c", "-m") and os.path.isfile(script):
        folders.insert(0, os.path.dirname(os.path.abspath(script)))
    for folder in folders:
        if folder not in sys.path:
            sys.path.append(folder)


_search_last()
del _search_last
