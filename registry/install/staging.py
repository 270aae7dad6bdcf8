"""Stage one skill revision: fetch it into a temp folder, re-check it, verify it, scan it.

`prepare` is the gate every pull goes through before anything is placed. The staging folder
(`.agents/skills/.hubskills-staging-*`, or a system temp folder for a dry run) is checked again
whatever store filled it: no links or special files, safe relative paths, size and count caps,
no installer marker files. A `skill.oms.sig` must verify over exactly these files, signed by an
anchor the user trusts (`registry/signing`). Then the skill must pass the validator as `publish`
requires, but for the deviations agents load anyway (`at_pull`: shown as warnings); its `name`
equal to the repository's name, and never a Windows device name; the content hash must equal
what the registry reports (and what skills.lock pins, if it does); and the scan must find no
secrets and, unless the caller accepts risk, nothing of high severity.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from registry._io import make_temp_dir
from registry.config import Settings
from registry.errors import InvalidSkill, UnsafeSkill, hint_command
from registry.format.requires import requirements
from registry.format.skill import (
    NAME_RE,
    Problem,
    Skill,
    SkillFormatError,
    content_hash,
    load_skill,
)
from registry.format.validate import TOLERATED_AT_PULL, at_pull, validate_skill
from registry.install.lockfile import HF_MARKER, MARKER_FILE, Scope
from registry.install.sources import folder_name, is_folder
from registry.install.transaction import STAGING_PREFIX, make_dirs, remove_empty
from registry.scan import Finding, SizeLimits, check_findings, check_relpath, scan_folder
from registry.scan.paths import WINDOWS_DEVICES
from registry.signing import SignaturePolicy
from registry.stores import Resolved, SkillStore

HOSTILE_HINT = "the repository is malformed or hostile; nothing was installed"


def check_staged(root: Path, limits: SizeLimits) -> int:
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
                raise UnsafeSkill(f"{rel} is a symlink (to {os.readlink(full)}); links in skills "
                                  "are never followed or installed", hint=HOSTILE_HINT)
            if stat.S_ISREG(mode):
                sizes.append((rel, full.lstat().st_size))
            elif not stat.S_ISDIR(mode):
                raise UnsafeSkill(f"{rel} is not a regular file", hint=HOSTILE_HINT)
        if len(sizes) > limits.max_files:
            break
    limits.check(sizes, hint=HOSTILE_HINT)
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
    signer: str | None = None  # certificate subject and root, or key fingerprint (signed)
    requires: tuple[str, ...] = ()  # its metadata.requires references, as written


def prepare(store: SkillStore, repo: str, resolved: Resolved, scope: Scope, *,
            limits: SizeLimits, allow_risky: bool = False, dry_run: bool = False,
            expected_hash: str | None = None,
            signatures: SignaturePolicy | None = None) -> Staged:
    """Fetch `resolved` into a fresh staging folder, then verify and scan it.

    The staging folder sits in `.agents/skills` (a system temp folder with `dry_run`) and is
    removed again when anything is refused. With `expected_hash` (a pin from skills.lock) the
    store need not report a hash: the pin is the check. `signatures` (default: the configured
    trust store, unsigned allowed) decides what a present or missing `skill.oms.sig` does.

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
        fetched = store.fetch(repo, resolved.sha, folder, limits=limits,
                              pinned_hash=expected_hash)
        policy = signatures or SignaturePolicy(Settings.from_env().home)
        staged = _verify(folder, repo, resolved, fetched.reported_hash, expected_hash, limits,
                         policy)
        staged.notes[:0] = list(dict.fromkeys([*resolved.notes, *fetched.notes]))
        staged.findings = _scan(folder, repo, resolved, allow_risky, dry_run)
        staged.created = created
        return staged
    except BaseException:
        _cleanup_staging(folder)
        remove_empty(created)
        raise


def _verify(folder: Path, repo: str, resolved: Resolved, reported: str | None,
            expected: str | None, limits: SizeLimits, policy: SignaturePolicy) -> Staged:
    where = f"{repo}@{resolved.sha[:12]}"
    check_staged(folder, limits)
    for forged in (MARKER_FILE, HF_MARKER):
        if (folder / forged).exists():
            raise UnsafeSkill(f"{where} ships {forged}, an installer's marker file; refusing "
                              "a forged install marker", hint=HOSTILE_HINT)
    computed = content_hash(folder)  # first: a tampered download says so, whatever else fails
    if reported and reported != computed:
        raise UnsafeSkill(f"{where}: the files hash to {computed[:19]}, the registry reports "
                          f"{reported[:19]}; refusing a tampered or damaged download",
                          hint="retry; report the repository if it persists")
    if expected and expected != computed:
        pinned = folder_name(repo)  # the lock's name for it (the skill must be named so)
        raise UnsafeSkill(f"{pinned} ({where}): the files hash to {computed[:19]}, skills.lock "
                          f"pins {expected[:19]}; nothing of it was installed",
                          hint=f"{hint_command('update', pinned)}  # or "
                               f"{hint_command('pull', f'{repo}@{resolved.sha[:12]}')}: both "
                               "re-pin what the registry reports")
    signed = policy.check(folder, name=folder_name(repo), where=where,  # before any parse
                          source_folder=repo if is_folder(repo) else None)
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
    if name in WINDOWS_DEVICES:
        raise UnsafeSkill(f"{where} declares the skill name {name!r}, a Windows device name "
                          "no folder can have there", hint=HOSTILE_HINT)
    notes.extend(_validate(skill, repo, where))
    if not reported:
        notes.append(f"{where}: the registry reports no content hash; computed {computed[:19]}")
    notes += [f"{path} is not covered by the signature (its signer excluded it)"
              for path in (signed.unsigned if signed else ())]
    return Staged(repo, resolved, folder, name, computed, [], notes,
                  signer=signed.signer if signed else None,
                  requires=tuple(str(r) for r in requirements(skill.frontmatter)))


def _validate(skill: Skill, repo: str, where: str) -> list[str]:
    """Block on validation errors as publish does, but for those agents load anyway
    (`at_pull`), with the validator's messages; returns those as warnings to show.

    The staging folder's own name means nothing, so the name is checked against the folder
    the skill comes from: its repository's name.
    """
    repo_name, name = folder_name(repo), skill.name
    found = at_pull([p for p in validate_skill(skill) if p.code != "name-mismatch"])
    errors = [p for p in found if p.severity == "error"]
    if name != repo_name:
        errors.insert(0, Problem("name-mismatch", "error", f"name '{name[:80]}' does not match "
                                 f"the folder name '{repo_name}'"))
    if errors:
        first = "; ".join(f"{p.location()}: {p.message}" for p in errors[:3])
        raise InvalidSkill(f"{where} has {len(errors)} validation error"
                           f"{'s' * (len(errors) != 1)}: {first}",
                           hint=f"hubskills versions {repo}  # pick another version, or ask "
                                "the publisher to run hubskills validate")
    return [f"{p.location()}: {p.message}" for p in found
            if p.code in TOLERATED_AT_PULL]


def _scan(folder: Path, repo: str, resolved: Resolved, allow_risky: bool,
          dry_run: bool) -> list[Finding]:
    findings = scan_folder(folder)
    pinned = f"{repo}@{resolved.sha[:12]}"  # a folder has no revisions to name: it is as it is
    source = repo if resolved.registry in ("folder", "mcp") else pinned  # no revision to name
    again = (f"hubskills pull {shlex.quote(source)}"
             f"{' --dry-run' if dry_run else ''} --allow-risky")
    check_findings(findings, subject=pinned, action="installed",
                   allow_risky=allow_risky,
                   secret_hint="tell the publisher to revoke the token and republish",
                   risky_hint=f"{again}  # once the findings above are what you expect")
    return findings


def _cleanup_staging(folder: Path) -> None:
    if folder.name.startswith(STAGING_PREFIX) and (folder.exists() or folder.is_symlink()):
        shutil.rmtree(folder, ignore_errors=True)


def discard(staged: Staged) -> None:
    """Remove what is left of a staging folder (and folders made for it, if still empty)."""
    _cleanup_staging(staged.folder)
    remove_empty(staged.created)


def changes(old: Path, new: Path) -> list[str]:
    """`+ path`, `- path`, `~ path` between two folders (markers ignored)."""
    before, after = file_digests(old), file_digests(new)
    return sorted([f"+ {p}" for p in after.keys() - before.keys()]
                  + [f"- {p}" for p in before.keys() - after.keys()]
                  + [f"~ {p}" for p in after.keys() & before.keys() if after[p] != before[p]],
                  key=lambda line: line[2:])


def file_digests(root: Path, keep: Callable[[str], bool] | None = None) -> dict[str, str]:
    """Each file's sha256 by relative path (links and the install marker left out); with
    `keep`, only the files whose relative path it keeps are read."""
    found = {}
    for dirpath, _, filenames in os.walk(root, followlinks=False):
        for name in filenames:
            full = Path(dirpath, name)
            if keep is not None and not keep(full.relative_to(root).as_posix()):
                continue
            if name != MARKER_FILE and full.is_file() and not full.is_symlink():
                found[full.relative_to(root).as_posix()] = hashlib.sha256(
                    full.read_bytes()).hexdigest()
    return found
