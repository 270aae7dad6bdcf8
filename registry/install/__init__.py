"""Skills in your agents' folders: pull, install from `skills.lock`, update, list, remove.

`pull` is store-agnostic: it asks any `SkillStore` to resolve and fetch, then stages, verifies,
scans and places (see `pull.py`, `staging.py`, `place.py`); `install` and `update` (in
`restore.py`) work from the lockfile; `installed.py` lists and removes.

Each name is imported from its module on first use (PEP 562 `__getattr__`), so `eval` reading a
pulled folder's marker (`identity.py`) does not load the pull machinery and every store.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from registry._lazy import lazy_names

if TYPE_CHECKING:
    from registry.install.installed import (
        Installed,
        Removed,
        latest_checker,
        list_installed,
        remove,
    )
    from registry.install.place import PullResult
    from registry.install.pull import fetched, parse_spec, pull
    from registry.install.restore import install, update

#: public name -> the module that defines it
_EXPORTS: dict[str, str] = {
    "Installed": "registry.install.installed",
    "Removed": "registry.install.installed",
    "latest_checker": "registry.install.installed",
    "list_installed": "registry.install.installed",
    "remove": "registry.install.installed",
    "PullResult": "registry.install.place",
    "fetched": "registry.install.pull",
    "parse_spec": "registry.install.pull",
    "pull": "registry.install.pull",
    "install": "registry.install.restore",
    "update": "registry.install.restore",
}

__all__ = [
    "Installed", "PullResult", "Removed", "fetched", "install", "latest_checker",
    "list_installed", "parse_spec", "pull", "remove", "update",
]


__getattr__, __dir__ = lazy_names("registry.install", _EXPORTS, globals())


class _Package(ModuleType):
    """This package, whose `pull` stays the function when the submodule `pull` loads (the
    import system then sets the submodule on its package), as an eager import left it."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, ModuleType) and _EXPORTS.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


