"""A skill argument as users type it: a folder, a registry reference `ns/name[@version]`, or a
git source (`github:owner/repo/path@ref`, `URL//path@ref`: see `registry/install/sources.py`).

`eval`, `suite show`, `scan` and `info` take any of them (a git source is fetched like a
registry reference, into a temporary folder). A folder that exists wins; otherwise a
reference is fetched from the configured registry into a temporary folder (checked as a pull
checks it, with an install marker so it is placed as that version and never runs unsandboxed;
not counted as a download), and removed when the command ends. A name that is neither says
"no such folder" and hints at the registry reference when the registry holds a skill by that
name. A folder of your own given to a command that calls models (`eval`) is checked as
`publish` checks it first, and a warning says when publish would refuse it.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from registry.cli._path_arg import ExistingPath, closest_sibling
from registry.config import Settings
from registry.errors import HubskillsError, InvalidSkill, SkillNotFound, hint_command

if TYPE_CHECKING:
    from registry.stores.base import SkillInfo

#: `./x` and `../x` are folders: no registry namespace starts with a dot
_REPO = re.compile(r"^(?!\.)[\w.-]+/[\w.-]+(?:@[\w.-]*)?$")
#: temporary folder -> the reference it holds, so an error names what the user typed
FETCHED: dict[str, str] = {}
#: commands that call models: a folder of your own that `publish` would refuse is said first
SPENDING = frozenset({"eval"})


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
    from registry.install.sources import is_source

    text = str(target)
    path = Path(text).expanduser()
    git = is_source(text) and not text.startswith((".", "/", "~"))
    if path.exists() or path.is_symlink() or not (looks_like_reference(text) or git):
        if not (path.exists() or path.is_symlink()):
            raise no_such_folder(text, command)
        if command in SPENDING:
            say_if_unpublishable(path)
        yield path
        return
    try:
        with _fetched(text, command) as folder:
            if scan:
                _check_scan(folder, text, command)
            yield folder
    except SkillNotFound as missing:
        if text.partition("@")[0].count("/") == 1 and not text.startswith((".", "/")):
            raise no_such_folder(text, command, missing) from None
        raise


@contextlib.contextmanager
def _fetched(text: str, command: str) -> Iterator[Path]:
    """A registry reference or git source in a temp folder, removed on exit or on Ctrl-C."""
    from registry.cli._signals import ON_QUIT
    from registry.install.pull import fetched, fetched_source
    from registry.install.sources import is_source

    if is_source(text):
        fetching = fetched_source(text, command=command, mark=True)
    else:
        from registry.registries import get_store

        fetching = fetched(text, get_store(Settings.from_env(), offline_fallback=True),
                           mark=True)
    with fetching as folder:
        FETCHED[str(folder)] = text
        remove = functools.partial(shutil.rmtree, folder.parent, ignore_errors=True)
        ON_QUIT.append(remove)
        try:
            yield folder
        finally:
            ON_QUIT.remove(remove)


def folder_info(target: str, folder: Path) -> SkillInfo:
    """What `info` shows for a skill folder that is no registry entry (a git source's, or a
    folder that is no published version): its SKILL.md and install marker."""
    from registry.format.skill import load_skill
    from registry.install.lockfile import read_marker
    from registry.stores.base import SkillInfo

    skill, marker = load_skill(folder), read_marker(folder)
    license_ = skill.frontmatter.get("license")
    return SkillInfo(repo=marker.repo if marker else target, name=skill.name,
                     description=skill.description, version=None, tags=[], downloads=0,
                     likes=0, updated=None, license=str(license_) if license_ else None,
                     card=f"from {target} at sha {marker.sha if marker else '?'}")


class SkillSource(click.ParamType):
    """A folder that exists, or a git source (fetched by `skill_folder` when the command runs)."""

    name = "folder"

    def __init__(self, *, exists: bool = True) -> None:
        self.exists = exists

    @staticmethod
    def is_git(text: str) -> bool:
        """Whether `text` is a git source (not a folder, not a registry id)."""
        from registry.install.sources import is_source

        return is_source(text) and not text.startswith((".", "/", "~"))

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        """A git source as typed (a `Path` would fold its `//`); otherwise a `Path`, checked
        that exists when `exists` (a `HubskillsError` if not: `_path_arg.ExistingPath`)."""
        if isinstance(value, str) and self.is_git(value):
            return value
        if not self.exists:
            return Path(value)
        command = " ".join(_command_names(ctx)) if ctx else "publish"
        return ExistingPath("folder", retry=f"hubskills {command} {{path}}",
                            otherwise="{new}  # a new skill folder there").convert(value, param,
                                                                                   ctx)


def _command_names(ctx: click.Context) -> list[str]:
    """`["suite", "show"]`: the command's names after the program's (or its own, alone)."""
    names: list[str] = []
    while ctx.parent is not None:
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return names or [ctx.info_name or ""]


def say_if_unpublishable(folder: Path, so: str = "this run measures a draft") -> None:
    """Warn, before a command spends anything on a folder of your own (or `pull` hands it to
    your agents), when `publish` would refuse it as it is, saying what follows (`so`); a
    pulled folder was published already: it is left alone."""
    from registry.install.lockfile import read_marker
    from registry.publishing.checks import refusal

    if folder.is_dir() and read_marker(folder) is None and (why := refusal(folder)):
        from registry.cli import _output as out

        out.warn(f"publish would refuse this folder as it is ({why}), so {so}: "
                 f"hubskills validate {folder} lists what to fix")


def _check_scan(folder: Path, spec: str, command: str) -> None:
    """Refuse what `pull` would refuse: secrets, or a high-severity finding (listed first).

    The way on is the pull's own: `--allow-risky` once the findings are understood, then the
    command on the pulled folder (never `scan`, which refuses the same findings again)."""
    from registry.cli._pull_shared import show_findings
    from registry.install.mcp_source import shown
    from registry.scan import check_findings, scan_folder

    spec = shown(spec)  # an MCP URL's credential is kept for its server, never shown
    with show_findings(spec):
        check_findings(scan_folder(folder), "high", subject=spec, action="evaluated",
                       risky_hint=f"{hint_command('pull', spec, '--allow-risky')}  # once the "
                                  "findings above are what you expect; then: "
                                  + hint_command(command, f".agents/skills/{folder.name}"))


def no_such_folder(target: str, command: str,
                    missing: HubskillsError | None = None) -> InvalidSkill:
    """"no such folder", hinting at the registry reference of a skill with that name, else a
    skill folder beside it with a close name (a typo), else the registry's closest name."""
    name = Path(target.partition("@")[0]).name
    known = _registry_reference(name)
    beside = None if known or "@" in target else closest_sibling(Path(target), "folder")
    if beside is not None and not (beside / "SKILL.md").is_file():
        beside = None
    message = f"{target}: no such folder" + (
        f", and {missing.message}" if missing is not None and not (known or beside) else "")
    close = None if known or beside else closest_reference(target.partition("@")[0])
    hint = (f"hubskills {command} {known}  # the {name} skill in the registry" if known
            else f"hubskills {command} {shlex.quote(str(beside))}  # the closest skill folder "
                 "there" if beside
            else f"hubskills {command} {close}  # the closest name in the registry" if close
            else f"hubskills search {name}  # or: hubskills new {name}")
    return InvalidSkill(message, hint=hint)


def closest_reference(typed: str) -> str | None:
    """The registry's `ns/name` closest to a mistyped `typed` (`ns/name` or a name), if any."""
    import difflib

    from registry.registries import get_store

    try:
        repos = [info.repo for info in
                 get_store(Settings.from_env(), offline_fallback=True).search(limit=200)]
    except HubskillsError:
        return None
    if "/" in typed:
        return next(iter(difflib.get_close_matches(typed, repos, n=1, cutoff=0.85)), None)
    names = {repo.split("/")[-1]: repo for repo in repos}
    close = difflib.get_close_matches(Path(typed).name, list(names), n=1, cutoff=0.8)
    return names[close[0]] if close else None


def _registry_reference(name: str) -> str | None:
    """`ns/name` of a registry skill called `name` (the first the registry lists), if any."""
    from registry.registries import get_store

    if not name or not re.fullmatch(r"[\w.-]+", name):
        return None
    try:
        found = get_store(Settings.from_env(), offline_fallback=True).search(name, limit=20)
    except HubskillsError:  # no registry to ask: the plain "no such folder" stands
        return None
    return next((info.repo for info in found if info.repo.split("/")[-1] == name), None)
