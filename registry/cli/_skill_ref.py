"""A skill argument as users type it: a folder, or a registry reference `ns/name[@version]`.

`eval`, `suite show`, `scan` and `info` take either. A folder that exists wins; otherwise a
reference is fetched from the configured registry into a temporary folder (checked as a pull
checks it, with an install marker so it is placed as that version and never runs unsandboxed;
not counted as a download), and removed when the command ends. A name that is neither says
"no such folder" and hints at the registry reference when the registry holds a skill by that
name.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from registry.config import Settings
from registry.errors import HubskillsError, InvalidSkill, SkillNotFound

_REPO = re.compile(r"^[\w.-]+/[\w.-]+(?:@[\w.-]*)?$")
#: temporary folder -> the reference it holds, so an error names what the user typed
FETCHED: dict[str, str] = {}


def as_typed(text: str) -> str:
    """`text` with each fetched temporary folder replaced by the reference it holds."""
    for folder, reference in FETCHED.items():
        text = text.replace(folder, reference)
    return text


def looks_like_reference(target: str) -> bool:
    """Whether `target` has the shape `ns/name[@version]` (it may still be a folder)."""
    return bool(_REPO.match(target))


@contextlib.contextmanager
def skill_folder(target: str | Path, *, command: str, scan: bool = True) -> Iterator[Path]:
    """The folder `target` names, fetching a registry reference into a temporary one.

    Args:
        target: a path, or `ns/name[@version]`.
        command: the command line before the argument (`eval`, `suite show`), for hints.
        scan: refuse a fetched skill that a pull would refuse for its findings.

    Raises:
        InvalidSkill: no such folder, and no such skill in the registry.
        HubskillsError: the registry refused or failed (its own message and hint).
    """
    text = str(target)
    path = Path(text).expanduser()
    if path.exists() or path.is_symlink() or not looks_like_reference(text):
        if not (path.exists() or path.is_symlink()):
            raise no_such_folder(text, command)
        yield path
        return
    from registry.cli._signals import ON_QUIT
    from registry.install import fetched
    from registry.stores import get_store

    store = get_store(Settings.from_env(), offline_fallback=True)
    try:
        with fetched(text, store, mark=True) as folder:
            FETCHED[str(folder)] = text
            remove = functools.partial(shutil.rmtree, folder.parent, ignore_errors=True)
            ON_QUIT.append(remove)
            try:
                if scan:
                    _check_scan(folder, text)
                yield folder
            finally:
                ON_QUIT.remove(remove)
    except SkillNotFound as missing:
        if text.partition("@")[0].count("/") == 1 and not text.startswith((".", "/")):
            raise no_such_folder(text, command, missing) from None
        raise


def _check_scan(folder: Path, spec: str) -> None:
    """Refuse what `pull` would refuse: secrets, or a high-severity finding."""
    from registry.scan import check_findings, scan_folder

    check_findings(scan_folder(folder), "high", subject=spec, action="evaluated",
                   risky_hint=f"hubskills scan {spec}  # to see the findings")


def no_such_folder(target: str, command: str,
                    missing: HubskillsError | None = None) -> InvalidSkill:
    """"no such folder", hinting at the registry reference of a skill with that name."""
    name = Path(target.partition("@")[0]).name
    known = _registry_reference(name)
    message = f"{target}: no such folder" + (
        f", and {missing.message}" if missing is not None and known is None else "")
    hint = (f"hubskills {command} {known}  # the {name} skill in the registry" if known
            else f"hubskills search {name}  # or: hubskills new {name}")
    return InvalidSkill(message, hint=hint)


def _registry_reference(name: str) -> str | None:
    """`ns/name` of a registry skill called `name` (the first the registry lists), if any."""
    from registry.stores import get_store

    if not name or not re.fullmatch(r"[\w.-]+", name):
        return None
    try:
        found = get_store(Settings.from_env(), offline_fallback=True).search(name, limit=20)
    except HubskillsError:  # no registry to ask: the plain "no such folder" stands
        return None
    return next((info.repo for info in found if info.repo.split("/")[-1] == name), None)
