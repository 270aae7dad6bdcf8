"""Stage one skill revision: fetch it into a temp folder, re-check it, verify it, scan it.

`prepare` is the gate every pull goes through before anything is placed. The staging folder
(`.agents/skills/.hubskills-staging-*`, or a system temp folder for a dry run) is checked again
whatever store filled it: no links or special files, safe relative paths, size and count caps,
no installer marker files. Then SKILL.md must load and its `name` follow the format's rule; the
content hash must equal what the registry reports (and what skills.lock pins, if it does); and
the scan must find no secrets and, unless the caller accepts risk, nothing of high severity.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from registry._io import make_temp_dir
from registry.errors import InvalidSkill, UnsafeSkill
from registry.format.skill import NAME_RE, SkillFormatError, content_hash, load_skill
from registry.install.agents import STAGING_PREFIX, make_dirs, remove_empty
from registry.install.lockfile import HF_MARKER, MARKER_FILE, Scope
from registry.scan.scanner import Finding, ScanFailed, has_secrets, scan_folder
from registry.stores.base import MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES, Resolved, check_relpath

if TYPE_CHECKING:
    from registry.install.download import Source

HOSTILE_HINT = "the repository is malformed or hostile; nothing was installed"


@dataclass(frozen=True)
class Limits:
    """Hard caps on what a pull accepts, checked before download and again on disk."""

    max_file_bytes: int = MAX_FILE_BYTES
    max_total_bytes: int = MAX_TOTAL_BYTES
    max_files: int = MAX_FILES

    def check(self, sizes: list[tuple[str, int]]) -> None:
        """Refuse a file list over the caps.

        Raises:
            UnsafeSkill: too many files, a file too large, or too many bytes in total.
        """
        if len(sizes) > self.max_files:
            raise UnsafeSkill(f"the skill has {len(sizes)} files (max {self.max_files})",
                              hint=HOSTILE_HINT)
        total = 0
        for rel, size in sizes:
            total += size
            if size > self.max_file_bytes:
                raise UnsafeSkill(f"{rel} is {size} bytes (max {self.max_file_bytes} per file)",
                                  hint=HOSTILE_HINT)
        if total > self.max_total_bytes:
            raise UnsafeSkill(f"the skill is {total} bytes (max {self.max_total_bytes})",
                              hint=HOSTILE_HINT)


def check_staged(root: Path, limits: Limits) -> int:
    """Re-check a staged folder without following links; returns its number of files.

    Raises:
        UnsafeSkill: a link or special file, an unsafe path, or a cap exceeded.
    """
    sizes: list[tuple[str, int]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [*dirnames, *filenames]:
            full = Path(dirpath, name)
            rel = full.relative_to(root).as_posix()
            check_relpath(rel)
            mode = full.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise UnsafeSkill(f"{rel} is a link; links in skills are never followed or "
                                  "installed", hint=HOSTILE_HINT)
            if stat.S_ISREG(mode):
                sizes.append((rel, full.lstat().st_size))
            elif not stat.S_ISDIR(mode):
                raise UnsafeSkill(f"{rel} is not a regular file", hint=HOSTILE_HINT)
        if len(sizes) > limits.max_files:
            break
    limits.check(sizes)
    return len(sizes)


@dataclass
class Staged:
    """A fetched and verified revision waiting in its staging folder."""

    repo: str
    resolved: Resolved
    folder: Path
    name: str
    content_hash: str
    findings: list[Finding]
    notes: list[str]
    created: list[Path] = field(default_factory=list)


def prepare(source: Source, repo: str, resolved: Resolved, scope: Scope, *, limits: Limits,
            allow_risky: bool = False, dry_run: bool = False,
            expected_hash: str | None = None) -> Staged:
    """Fetch `resolved` into a fresh staging folder, then verify and scan it.

    The staging folder sits in `.agents/skills` (a system temp folder with `dry_run`) and is
    removed again when anything is refused.

    Raises:
        UnsafeSkill, InvalidSkill, ScanFailed: the revision is refused.
    """
    created: list[Path] = []
    if dry_run:
        folder = make_temp_dir(STAGING_PREFIX)
    else:
        make_dirs(scope.skills_dir, created)
        folder = make_temp_dir(STAGING_PREFIX, scope.skills_dir)
    try:
        reported = source.fetch(repo, resolved.sha, folder, limits, expected_hash)
        staged = _verify(folder, repo, resolved, reported, expected_hash, limits)
        staged.notes[:0] = source.notes
        staged.findings = _scan(folder, repo, resolved.sha, allow_risky)
        staged.created = created
        return staged
    except BaseException:
        _cleanup_staging(folder)
        remove_empty(created)
        raise


def _verify(folder: Path, repo: str, resolved: Resolved, reported: str | None,
            expected: str | None, limits: Limits) -> Staged:
    where = f"{repo}@{resolved.sha[:12]}"
    check_staged(folder, limits)
    for forged in (MARKER_FILE, HF_MARKER):
        if (folder / forged).exists():
            raise UnsafeSkill(f"{where} ships {forged}, an installer's marker file; refusing "
                              "a forged install marker", hint=HOSTILE_HINT)
    try:
        skill = load_skill(folder)
    except InvalidSkill as err:
        line = getattr(err, "line", None)
        message = (f"SKILL.md{f':{line}' if line else ''}: {err.detail}"
                   if isinstance(err, SkillFormatError) else err.message)
        raise InvalidSkill(f"{where} is not a valid skill: {message.replace(str(folder), '.')}",
                           hint=f"hubskills versions {repo}  # pick another version") from err
    name, notes = skill.name, []
    if not isinstance(skill.frontmatter.get("name"), str) or not NAME_RE.match(name) \
            or len(name) > 64:
        raise UnsafeSkill(f"{where} declares the skill name {name!r}, which breaks the naming "
                          "rule (lowercase letters, digits, single hyphens, at most 64)",
                          hint=HOSTILE_HINT)
    if name != repo.split("/")[1]:
        notes.append(f"the skill is named '{name}', not '{repo.split('/')[1]}' like its "
                     "repository: check it is the skill you meant")
    computed = content_hash(folder)
    if reported and reported != computed:
        raise UnsafeSkill(f"{where}: the files hash to {computed[:19]}, the registry reports "
                          f"{reported[:19]}; refusing a tampered or damaged download",
                          hint="retry; report the repository if it persists")
    if expected and expected != computed:
        raise UnsafeSkill(f"{where}: the files hash to {computed[:19]}, skills.lock pins "
                          f"{expected[:19]}", hint="check skills.lock; never edit it by hand")
    if not reported:
        notes.append(f"{where}: the registry reports no content hash; computed {computed[:19]}")
    return Staged(repo, resolved, folder, name, computed, [], notes)


def _scan(folder: Path, repo: str, sha: str, allow_risky: bool) -> list[Finding]:
    findings = scan_folder(folder)
    where = f"{repo}@{sha[:12]}"
    if has_secrets(findings):
        secrets = [f for f in findings if f.code.startswith("secret-")]
        raise ScanFailed(f"{where} contains secrets ({_describe(secrets)}); secrets are never "
                         "installed", findings=secrets, threshold="high",
                         hint="tell the publisher to revoke the token and republish")
    high = [f for f in findings if f.severity == "high"]
    if high and not allow_risky:
        raise ScanFailed(f"{where} has {len(high)} high-severity finding(s): {_describe(high)}",
                         findings=high, threshold="high",
                         hint=f"review them (hubskills pull {repo}@{sha[:12]} --dry-run), then "
                              "add --allow-risky to install anyway")
    return findings


def _describe(findings: list[Finding], limit: int = 3) -> str:
    shown = [f"{f.path}{':' + str(f.line) if f.line else ''} {f.code}" for f in findings[:limit]]
    more = f" and {len(findings) - limit} more" if len(findings) > limit else ""
    return "; ".join(shown) + more


def _cleanup_staging(folder: Path) -> None:
    if folder.name.startswith(STAGING_PREFIX) and (folder.exists() or folder.is_symlink()):
        shutil.rmtree(folder, ignore_errors=True)


def discard(staged: Staged) -> None:
    """Remove what is left of a staging folder (and folders made for it, if still empty)."""
    _cleanup_staging(staged.folder)
    remove_empty(staged.created)


def changes(old: Path, new: Path) -> list[str]:
    """`+ path`, `- path`, `~ path` between two folders (markers ignored)."""
    before, after = _digests(old), _digests(new)
    return sorted([f"+ {p}" for p in after.keys() - before.keys()]
                  + [f"- {p}" for p in before.keys() - after.keys()]
                  + [f"~ {p}" for p in after.keys() & before.keys() if after[p] != before[p]],
                  key=lambda line: line[2:])


def _digests(root: Path) -> dict[str, str]:
    found = {}
    for dirpath, _, filenames in os.walk(root, followlinks=False):
        for name in filenames:
            full = Path(dirpath, name)
            if name != MARKER_FILE and full.is_file() and not full.is_symlink():
                found[full.relative_to(root).as_posix()] = hashlib.sha256(
                    full.read_bytes()).hexdigest()
    return found
