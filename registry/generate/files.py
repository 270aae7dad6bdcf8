"""Files for `generate`: where sources come from, versions, and the atomic save."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from registry.errors import HubskillsError
from registry.format.folder_names import folder_name
from registry.format.skill import SKILL_FILE, Skill, load_skill


def split_sources(sources: list[Path]) -> tuple[Skill | None, list[Path]]:
    """The skill folder to improve (at most one) and the trace files among `--from` paths.

    Raises:
        HubskillsError: two skill folders, or a path that is neither.
        InvalidSkill: the skill's name is no folder name (`folder_name`): its draft is
            written to `round-N/<name>`, and `../../home/me/.claude/skills/x` planted it
            there.
    """
    skills = [p for p in sources if (Path(p) / SKILL_FILE).is_file() or Path(p).name == SKILL_FILE]
    traces = [Path(p) for p in sources if p not in skills]
    if len(skills) > 1:
        raise HubskillsError("--from names more than one skill folder; improve one at a time",
                             hint="hubskills generate TASK --from ./my-skill")
    for path in traces:
        if not path.is_file():
            raise HubskillsError(f"--from {path}: not a trace file nor a skill folder",
                                 hint="give a session .jsonl, a transcript .md, or a folder "
                                 "holding SKILL.md")
    base = load_skill(skills[0]) if skills else None
    if base is not None:
        folder_name(base)
    return base, traces


def copy_without_links(src: Path, dest: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """Copy the folder `src` to `dest` (which must not exist), leaving out links and the names
    in `skip`; returns the links left out (relative paths).

    A link in a skill to improve points at something that is not the skill's (`scripts ->
    ~/.ssh`): copied as a link, a draft written into the copy would write through it (a
    red-team hole), so no copy `generate` makes holds one.
    """
    left: list[str] = []

    def ignore(folder: str, names: list[str]) -> list[str]:
        links = [n for n in names if os.path.islink(os.path.join(folder, n))]
        left.extend(Path(folder, n).relative_to(src).as_posix() for n in links)
        return links + [n for n in names if n in skip]

    shutil.copytree(src, dest, symlinks=True, ignore=ignore)
    return sorted(left)


def bump_patch(version: str | None) -> str:
    """`1.2.3` → `1.2.4`; `1.0` → `1.0.1`; no version → `0.1.0`."""
    if not version:
        return "0.1.0"
    match = re.fullmatch(r"(v?)(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)", version.strip())
    if not match:
        return f"{version}.1"
    prefix, major, minor, patch, _rest = match.groups()
    return f"{prefix}{major}.{minor or 0}.{int(patch or 0) + 1}"


def check_target(target: Path, force: bool, draft: Path | None = None) -> None:
    """Refuse an existing target folder unless `force` (the hint names the draft, if any).

    Raises:
        HubskillsError: the folder exists and `force` is not set.
    """
    if (target.exists() or target.is_symlink()) and not force:
        where = f"; the draft is in {draft}" if draft else ""
        raise HubskillsError(f"{target} already exists{where}",
                             hint="add --force to replace it, or choose --out DIR")


def install_folder(folder: Path, out_dir: Path, *, force: bool) -> Path:
    """Copy `folder` to `out_dir/<name>` via a sibling temp folder and a rename; an existing
    folder is replaced only with `force`, and restored if the swap fails."""
    target = out_dir / folder.name
    check_target(target, force)
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=out_dir))
    try:
        copy_without_links(folder, staging / folder.name)
        old = staging / "previous"
        if target.exists() or target.is_symlink():
            os.rename(target, old)
        try:
            os.rename(staging / folder.name, target)
        except OSError:
            if old.exists():
                os.rename(old, target)
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
