"""`verify-install`: re-check every installed skill against what `skills.lock` pins.

For each entry: the folder is there and ours (its install marker names the pinned repo and
sha); its files hash to the pinned content hash (when not, the marker's per-file digests name
the files added, removed or changed; a marker edited as well is said so); a signed skill's
`skill.oms.sig` still verifies over the installed files against the trusted anchors and names
the pinned signer, and one the lock calls unsigned is not of a namespace it pins a signer for
(unless accepted unsigned); copies placed for agents hash as pinned too, and links lead to the
folder (one missing from an agent's folder the lock names, or a folder of other files in its
place, is a mismatch). An agent the lock names that this version does not know (a lock written
by a newer hubskills) is reported, `unknown agent`, and everything else is still checked.
Nothing is modified.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from registry.config import Settings
from registry.errors import HubskillsError, hint_command
from registry.format.skill import content_hash, hash_ignores
from registry.install.agent_table import Agent
from registry.install.agents import all_folders, link_folders, parse_agents
from registry.install.deps import unmet
from registry.install.lockfile import MARKER_FILE, LockEntry, Lockfile, Scope, read_marker
from registry.install.signers import SignerChanged, check_namespace_pin
from registry.install.staging import file_digests
from registry.install.transaction import points_to
from registry.signing import SIGNATURE_FILE, SignaturePolicy
from registry.signing.verify import SignatureRefused, same_signer

UNKNOWN_AGENT = "unknown agent"  # the one state that is no mismatch


@dataclass
class Audit:
    """One pinned skill as found: `state` is `ok`, `missing`, `not ours`, `modified`,
    `signature invalid`, `signer changed` or `dependency missing` (a skill it requires is not
    pinned at a version it accepts), or `unknown agent` when all that could be checked is as
    pinned but the lock names an agent this version does not know (`UNKNOWN_AGENT`: not a
    mismatch); `problems` say what, naming files."""

    name: str
    repo: str
    state: str = "ok"
    problems: list[str] = field(default_factory=list)
    unknown_agents: list[str] = field(default_factory=list)  # named by the lock, not known here

    def to_json(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"name": self.name, "repo": self.repo, "state": self.state,
                "problems": self.problems, "unknown_agents": self.unknown_agents}


def verify_installed(project: Path, *, global_: bool = False) -> list[Audit]:
    """Every skill `skills.lock` pins in this scope, checked (see the module docstring).

    Raises:
        HubskillsError: no skills.lock here.
    """
    scope = Scope.of(project, global_)
    lock = Lockfile.read(scope.lock_path)
    if not lock.exists:
        raise HubskillsError(f"no {scope.lock_path.name} in {scope.lock_path.parent.resolve()}",
                             hint="hubskills pull NS/NAME  # pins it in skills.lock")
    home = Settings.from_env().home
    audits = {entry.name: _audit(scope, entry, home, lock)
              for entry in sorted(lock.entries.values(), key=lambda e: e.name)}
    for entry, why in unmet(lock):  # what it needs is not pinned: `install` would refuse
        again = hint_command("pull", entry.repo)
        _fail(audits[entry.name], "dependency missing", f"{why} ({again} resolves it again)")
    for entry in lock.entries.values():  # said last: any mismatch found names the state
        audit = audits[entry.name]
        audit.unknown_agents = _agents(entry)[1]
        for name in audit.unknown_agents:
            audit.problems.append(f"skills.lock names the agent '{name}', which this hubskills "
                                  "does not know (written by a newer one?): its folder was "
                                  "not checked")
            audit.state = UNKNOWN_AGENT if audit.state == "ok" else audit.state
    return list(audits.values())


def _audit(scope: Scope, entry: LockEntry, home: Path, lock: Lockfile) -> Audit:
    audit, folder = Audit(entry.name, entry.repo), scope.skills_dir / entry.name
    if folder.is_symlink() or not folder.is_dir():
        return _fail(audit, "missing", f"{folder} is not there")
    marker = read_marker(folder)
    if marker is None or marker.repo != entry.repo or marker.sha != entry.sha:
        return _fail(audit, "not ours", f"{folder} holds no install of {entry.repo} at "
                                        f"{entry.sha[:12]}")
    if content_hash(folder) != entry.content_hash:
        changed = _changed(marker.files, file_digests(folder))
        return _fail(audit, "modified", changed or "the files no longer hash as skills.lock "
                                                   "pins, and the install marker was edited "
                                                   "too (which files is unknown)")
    _check_unhashed(audit, folder, marker.files, file_digests(folder, keep=hash_ignores))
    if entry.signer is not None:
        _check_signature(audit, folder, entry, home)
    else:
        try:  # the namespace pins a signer: the entry's "unsigned" is a lock edit's word
            check_namespace_pin(lock, entry)
        except SignerChanged as err:
            again = hint_command("pull", entry.repo, "--force")
            _fail(audit, "signer changed", f"{err.message} ({again} places it again)")
    for path in _placements(scope, entry):
        if not (path.exists() or path.is_symlink()):
            _fail(audit, "missing", f"{path} is not there (hubskills install puts it back)")
        elif path.is_symlink():
            if not points_to(path, folder):
                _fail(audit, "modified", f"{path} no longer links to {folder}")
        elif getattr(read_marker(path), "repo", None) != entry.repo:
            _fail(audit, "modified", f"{path} is not what hubskills placed there (a folder of "
                                     "other files)")
        elif content_hash(path) != entry.content_hash:
            _fail(audit, "modified", f"the copy at {path} changed: "
                                     + (_changed(marker.files, file_digests(path)) or "?"))
    return audit


def _check_unhashed(audit: Audit, folder: Path, pinned: dict[str, str],
                    now: dict[str, str]) -> None:
    """Files the content hash leaves out (editor and cache files) added or changed since the
    install, as the marker lists them: a team lead's walk planted `.vscode/tasks.json` and
    `SKILL.md~` and `verify-install` said ok; a hash-based .pyc so planted runs in place of
    its source, unchecked. A .pyc Python writes itself is no change."""
    def unhashed(files: dict[str, str]) -> dict[str, str]:
        return {p: d for p, d in files.items()
                if hash_ignores(p) and not _written_by_python(folder / p)}

    if pinned and (hidden := _diff(unhashed(pinned), unhashed(now))):
        _fail(audit, "modified", f"{hidden} (files the content hash leaves out, such as editor "
                                 "and cache files: a hash-based .pyc runs in place of its "
                                 "source, unchecked)")


def _written_by_python(path: Path) -> bool:
    """A `__pycache__/*.pyc` Python wrote for its source beside the folder, as it does when a
    skill's script is run: no change of the skill's. That is one Python itself would check
    against the source before using it (PEP 552 flags 0) and whose recorded time and size are
    the source's now. A hash-based one may run without a look at its source; one whose time
    and size are not the source's was not written for this checkout (a git checkout gives
    files the time it ran, which a pull request cannot know in advance). Whoever can write
    into the folder on this machine can forge either, and the marker's list too: these checks
    hold for what a repository brings, not against a local writer."""
    if path.parent.name != "__pycache__" or path.suffix != ".pyc":
        return False
    source = path.parent.parent / f"{path.name.split('.')[0]}.py"
    try:
        with path.open("rb") as handle:
            header = handle.read(16)
        stat = source.stat()
    except FileNotFoundError:
        return not path.exists()  # one Python wrote and removed (or a cache cleared)
    except OSError:
        return False
    if len(header) < 16 or int.from_bytes(header[4:8], "little") != 0:
        return False
    mtime, size = int.from_bytes(header[8:12], "little"), int.from_bytes(header[12:16], "little")
    return mtime == int(stat.st_mtime) & 0xFFFFFFFF and size == stat.st_size & 0xFFFFFFFF


def _fail(audit: Audit, state: str, problem: str) -> Audit:
    if audit.state == "ok":
        audit.state = state
    audit.problems.append(problem)
    return audit


def _changed(pinned: dict[str, str], now: dict[str, str]) -> str:
    """`changed: a; added: b; removed: c` (empty when the marker lists nothing)."""
    return _diff(pinned, now) if pinned else ""


def _diff(pinned: dict[str, str], now: dict[str, str]) -> str:
    """`changed: a; added: b; removed: c` between two sets of per-file digests."""
    parts = [("changed", sorted(p for p in pinned.keys() & now.keys() if pinned[p] != now[p])),
             ("added", sorted(now.keys() - pinned.keys())),
             ("removed", sorted(pinned.keys() - now.keys()))]
    return "; ".join(f"{label} {', '.join(paths[:5])}" + (f" (+{len(paths) - 5} more)"
                                                          if len(paths) > 5 else "")
                     for label, paths in parts if paths)


def _check_signature(audit: Audit, folder: Path, entry: LockEntry, home: Path) -> None:
    """The signature over the installed files (the marker set aside), by the pinned signer."""
    try:
        signed_as_pinned(folder, entry, home)
    except SignerMismatch as err:
        _fail(audit, "signer changed", err.message)
    except HubskillsError as err:
        _fail(audit, "signature invalid", err.message)


class SignerMismatch(SignatureRefused):
    """An installed folder's signature verifies, by someone other than skills.lock pins."""


def check_still_allowed(folder: Path, entry: LockEntry | None,
                        signatures: SignaturePolicy | None, lock: Lockfile) -> None:
    """An install already in place (up to date, or a dependency a graph keeps) is what a pull
    would place, so it passes the same gate: one skills.lock says is signed must carry a
    signature that verifies, by the signer it pins (the lock's signer is only its author's
    word, a pull request's too); one it says is unsigned must not be of a namespace `lock`
    pins a signer for, unless accepted so; when `signatures` require one, an unsigned install
    is refused.

    Raises:
        SignatureRefused: the signature fails, or unsigned with `--require-signed` (or the
            variable) set; SignerChanged: unsigned where the namespace pins a signer.
    """
    name = folder.name
    if entry is not None:
        check_namespace_pin(lock, entry)
    if signatures is not None and signatures.require_signed and (
            entry is None or entry.signer is None):
        raise SignatureRefused(f"{name} is installed unsigned (skills.lock pins no signer for "
                               "it) and --require-signed is set; nothing was changed",
                               hint=f"hubskills remove {name}  # or pull it without "
                                    "--require-signed if you trust its source")
    if entry is not None and entry.signer is not None:
        home = signatures.home if signatures else Settings.from_env().home
        signed_as_pinned(folder, entry, home)


def signed_as_pinned(folder: Path, entry: LockEntry, home: Path) -> None:
    """Check that an installed `folder`'s `skill.oms.sig` verifies over its files (the marker
    set aside) against the trusted anchors in `home`, by the signer `entry` pins: the lock's
    word alone is not proof (a pull request can write any signer into skills.lock, and a
    committed install folder with it).

    Raises:
        SignatureRefused: no signature, one that does not verify, or another signer's
            (`SignerMismatch`).
    """
    with tempfile.TemporaryDirectory(prefix=".hubskills-verify-") as tmp:
        copy = Path(tmp) / entry.name
        shutil.copytree(folder, copy, symlinks=True,
                        ignore=lambda where, names: [MARKER_FILE] if Path(where) == folder
                        else [])
        signed = SignaturePolicy(home).check(copy, name=entry.name,
                                             where=f"{entry.name} (installed)")
    if signed is None:  # the lock's word, no signature: nothing to do with --require-signed
        raise SignatureRefused(f"skills.lock says {entry.name} is signed by {entry.signer}, "
                               f"but its folder has no {SIGNATURE_FILE}",
                               hint=f"hubskills pull {entry.repo} --force  # places the signed "
                                    "files again, or correct its signer in skills.lock")
    if same_signer(signed.signer, str(entry.signer)) is None:  # "subject": an older lock's pin
        raise SignerMismatch(f"signed by {signed.signer}; skills.lock pins {entry.signer}",
                             hint=hint_command("pull", entry.repo, "--force")
                             + "  # fetches it again")


def _agents(entry: LockEntry) -> tuple[list[Agent], list[str]]:
    """The agents `entry` names that this version knows, and the names of those it does not."""
    known: list[Agent] = []
    unknown: list[str] = []
    for name in entry.agents:
        try:
            known += [agent for agent in parse_agents([name]) if agent not in known]
        except HubskillsError:
            unknown.append(name)
    return known, unknown


def _placements(scope: Scope, entry: LockEntry) -> list[Path]:
    """Where the skill's links and copies should be (in the folders of the agents the lock
    names and this version knows, there or not), and the links and copies of it found in other
    agents' folders."""
    known = _agents(entry)[0]
    expected = [folder / entry.name for folder in link_folders(
        known, scope.root, global_=scope.global_)] if known else []
    found = []
    for folder in all_folders(scope.root, global_=scope.global_):
        path = folder / entry.name
        if path.parent == scope.skills_dir or path in expected or \
                not (path.exists() or path.is_symlink()):
            continue
        if path.is_symlink() or getattr(read_marker(path), "repo", None) == entry.repo:
            found.append(path)
    return expected + found
