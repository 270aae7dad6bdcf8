"""What a published revision ships besides its instructions, read once per revision and kept:
its signature status and its publisher's claims.

`info`, `search --json` and the Space's skill pages show whether a skill is signed, by whom,
or that its signature is invalid (`registry.signing.status`), and `info` and the skill page the
`skill-card.md` and `BENCHMARK.md` it ships (`registry.format.claims`). Checking means fetching
the revision's files and hashing them, so the answer is kept per (registry, skill, revision,
trust anchors): in memory for the process, and on disk under `<HUBSKILLS_HOME>/cache/
revision-facts/` (one JSON file each), so a board or a search over many skills pays it once per
revision.
A version tag is immutable (`publish` refuses to move one), so `repo@version` is a key too and
a cached version needs no `resolve`. The trust anchors are part of the key: adding one changes
what `trusted_by` says.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from registry._io import atomic_write_text
from registry.errors import HubskillsError
from registry.format.claims import publisher_claims
from registry.format.folder_names import folder_name
from registry.format.skill import load_skill
from registry.signing.status import NOT_INSTALLED, SignatureStatus, signature_status
from registry.signing.trust import Anchor, anchors
from registry.stores.base import SkillRepos

_MEMORY: dict[str, RevisionFacts] = {}
_MEMORY_MAX = 512  # revisions kept in memory (the oldest go first; the disk keeps them all)
_LOCK = threading.Lock()


@dataclass(frozen=True)
class RevisionFacts:
    """A revision's signature status and its publisher's claim files (`{name: text}`)."""

    signature: SignatureStatus
    claims: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (what the cache keeps)."""
        return {"signature": self.signature.to_dict(), "claims": self.claims}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RevisionFacts:
        """The facts `to_dict` wrote."""
        claims = data.get("claims") or {}
        if not isinstance(claims, dict):
            raise TypeError("claims")
        return cls(SignatureStatus.from_dict(data["signature"]),
                   {str(k): str(v) for k, v in claims.items()})


def cache_dir(home: Path) -> Path:
    """Where the facts are kept."""
    return home / "cache" / "revision-facts"


def _registry_id(store: SkillRepos) -> str:
    return str(getattr(store, "root", None) or getattr(store, "endpoint", None)
               or type(store).__name__)


def _anchors_digest(trusted: list[Anchor]) -> str:
    digest = hashlib.sha256()
    for anchor in trusted:
        try:
            digest.update(anchor.name.encode() + b"\0" + anchor.path.read_bytes() + b"\0")
        except OSError:
            continue
    return digest.hexdigest()[:16]


def _key(store: SkillRepos, repo: str, revision: str, trusted: list[Anchor]) -> str:
    text = f"{_registry_id(store)}\0{repo}\0{revision}\0{_anchors_digest(trusted)}"
    return hashlib.sha256(text.encode()).hexdigest()


def _cached(home: Path, key: str) -> RevisionFacts | None:
    if (hit := _MEMORY.get(key)) is not None:
        return hit
    try:
        facts = RevisionFacts.from_dict(json.loads(
            (cache_dir(home) / f"{key}.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, KeyError):
        return None
    _MEMORY[key] = facts
    return facts


def _keep(home: Path, keys: list[str], facts: RevisionFacts) -> None:
    if (facts.signature.reason or "").startswith(NOT_INSTALLED):
        return  # checked once the extra is installed
    with _LOCK:
        for key in keys:
            _MEMORY[key] = facts
            while len(_MEMORY) > _MEMORY_MAX:
                _MEMORY.pop(next(iter(_MEMORY)))
            try:
                atomic_write_text(cache_dir(home) / f"{key}.json",
                                  json.dumps(facts.to_dict(), sort_keys=True))
            except OSError:  # a read-only home: memory alone
                pass


def revision_facts(store: SkillRepos, repo: str, *, home: Path, sha: str | None = None,
                   version: str | None = None, folder: Path | None = None) -> RevisionFacts:
    """The facts of `repo` at `sha` (or at `version`, or the latest), the signature checked
    against the anchors trusted in `home`; `folder` is the revision's files when the caller
    has them already (the Space's cached copy), else they are fetched (not counted as a
    download).

    Raises:
        HubskillsError: the store cannot resolve or fetch the revision, or a signature is
            present and `model-signing` is not installed.
    """
    trusted = anchors(home)
    by_version = _key(store, repo, f"v{version}", trusted) if version and not sha else None
    if by_version and (hit := _cached(home, by_version)):
        return hit
    if sha is None:
        sha = store.resolve(repo, version).sha
    key = _key(store, repo, sha, trusted)
    if (hit := _cached(home, key)) is None:
        hit = _compute(store, repo, sha, trusted, folder)
        _keep(home, [key, *filter(None, [by_version])], hit)
    elif by_version:
        _keep(home, [by_version], hit)
    return hit


def _compute(store: SkillRepos, repo: str, sha: str, trusted: list[Anchor],
             folder: Path | None) -> RevisionFacts:
    if folder is not None:
        return _read(folder, repo, trusted)
    with tempfile.TemporaryDirectory(prefix="hubskills-facts-") as scratch:
        dest = Path(scratch) / repo.split("/")[-1]
        store.fetch(repo, sha, dest, count=False)
        return _read(dest, repo, trusted)


def _read(folder: Path, repo: str, trusted: list[Anchor]) -> RevisionFacts:
    return RevisionFacts(signature_status(folder, trusted, name=_name(folder, repo)),
                         publisher_claims(folder))


def folder_facts(folder: Path, *, home: Path | None = None,
                 trusted: list[Anchor] | None = None) -> RevisionFacts:
    """The facts of a skill folder that is not (or not known as) a published revision: a
    pulled folder, a git source, a folder about to be published. Only the skill's files are
    checked (`Skill.files()`: install markers such as `.hubskills.json` and editor noise left
    out, as a publish leaves them out), copied into a scratch folder named after the skill.
    `trusted` defaults to the anchors in `home` (none without it).

    Raises:
        InvalidSkill: `folder` is not a skill.
    """
    import shutil

    skill = load_skill(folder)
    trusted = trusted if trusted is not None else anchors(home) if home is not None else []
    with tempfile.TemporaryDirectory(prefix="hubskills-facts-") as scratch:
        staged = Path(scratch) / folder_name(skill)  # `../../home/me` copied out there
        for rel in skill.files():
            (staged / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(skill.path / rel, staged / rel,
                            follow_symlinks=False)  # a link is checked as a link, never read
        return RevisionFacts(signature_status(staged, trusted, name=skill.name),
                             publisher_claims(staged))


def _name(folder: Path, repo: str) -> str:
    try:
        return load_skill(folder).name
    except HubskillsError:
        return repo.split("/")[-1]
