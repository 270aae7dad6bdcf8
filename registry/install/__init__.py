"""Skills in your agents' folders: pull, install from `skills.lock`, update, list, remove.

`pull` is store-agnostic: it asks any `SkillStore` to resolve and fetch, then stages, verifies,
scans and places (see `pull.py`, `staging.py`, `place.py`); `install` and `update` (in
`restore.py`) work from the lockfile; `installed.py` lists and removes.
"""

from registry.install.installed import Installed, Removed, latest_checker, list_installed, remove
from registry.install.place import PullResult
from registry.install.pull import fetched, parse_spec, pull
from registry.install.restore import install, update

__all__ = [
    "Installed", "PullResult", "Removed", "fetched", "install", "latest_checker",
    "list_installed", "parse_spec", "pull", "remove", "update",
]
