"""Packages whose public names load on first use (a chat eval imports only what it uses), and
modules imported while the process waits on the network (`import_during_first_wait`).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from typing import Any

from registry._gc import import_kept


def lazy_names(package: str, exports: Mapping[str, str], namespace: dict[str, Any]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's `__getattr__` and `__dir__`: ``exports`` maps each public name to the module
    that defines it (``"module:attribute"`` where the module names it otherwise); a name is
    imported on first use and then kept in ``namespace``."""

    def __getattr__(name: str) -> Any:
        source = exports.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = source.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__


_WAITING = threading.Event()


def import_during_first_wait(*modules: str) -> threading.Thread:
    """Import `modules` in a background thread once the process first waits on the network
    (`network_wait`; an endpoint probe's round trip). Imports are CPU work under one GIL:
    beside the start-up they would only delay the first request, during a round trip they
    cost nothing. A module that fails is left for the import where it is used to report."""

    def load() -> None:
        _WAITING.wait()
        for module in modules:
            try:
                import_kept(module)
            except Exception:  # imported again where it is used, and raised there
                return

    thread = threading.Thread(target=load, name="hubskills-import-during-wait", daemon=True)
    thread.start()
    return thread


def network_wait() -> None:
    """Say the process now waits on the network: `import_during_first_wait` may start."""
    _WAITING.set()
