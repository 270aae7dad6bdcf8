"""The install marker (`.hubskills.json`) and the project lockfile (`skills.lock`).

The marker sits in every folder hubskills installed (and in copies placed for agents): it is
how we tell our folders from others. `hf skills` marks its own installs with
`.hf-skill-manifest.json`; we never write that file and never touch such a folder.

`skills.lock` is JSON with sorted keys, one field per line, so diffs read well:

    {"lockfile-version": 1, "skills": {"<name>": {"agents": [...], "content_hash": ...,
     "copy": false, "registry": "local", "repo": "ns/name", "sha": ..., "version": ...}}}

A skill pulled from a folder or a git source has `registry` "folder" or "git", its source's key
as `repo` (`github:owner/repo/path`, `URL//path`, `./path`) and a `source` block: the git
`url`, `subdir` and the `ref` asked (`sha` is the commit), or the folder's `path` (`sha` is the
first 40 hex digits of its content hash: a folder has no commits). An MCP skill's (`registry`
"mcp") names the `server`, the skill's `uri`, the `repo` that URI files it under and every
file's digest (`mcp_source.source_entry`).

A project's lock sits at its root; a `--global` install's at `~/.agents/skills.lock`.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from registry._io import atomic_write_text
from registry.errors import HubskillsError
from registry.format.skill import NAME_RE
from registry.install.agents import SKILLS_DIR
from registry.install.mcp_source import publisher

MARKER_FILE = ".hubskills.json"
HF_MARKER = ".hf-skill-manifest.json"
LOCK_FILE = "skills.lock"
LOCK_VERSION = 1
_SHA = re.compile(r"^[0-9a-f]{40}$")
_MARKER_MAX_BYTES = 1024 * 1024  # a marker lists each file's sha256 (up to 1000 files)


@dataclass(frozen=True)
class Scope:
    """Where a pull writes: a project (`root` = project) or the user's HOME (`--global`)."""

    root: Path
    global_: bool = False

    @classmethod
    def of(cls, project: Path, global_: bool = False) -> Scope:
        """The project scope, or HOME (from `Path.home()`) with `global_`.

        Raises:
            HubskillsError: the folder does not exist.
        """
        root = Path.home() if global_ else Path(project)
        if not root.is_dir():
            raise HubskillsError(f"{root} is not a folder",
                                 hint="run it in your project, or pass --project PATH")
        return cls(root, global_)

    @property
    def skills_dir(self) -> Path:
        """`<root>/.agents/skills`, where the real files go."""
        return self.root / SKILLS_DIR

    @property
    def lock_path(self) -> Path:
        """`<project>/skills.lock`, or `~/.agents/skills.lock` for the global scope."""
        return self.root / ".agents" / LOCK_FILE if self.global_ else self.root / LOCK_FILE


@dataclass(frozen=True)
class Marker:
    """What `.hubskills.json` records about an installed folder."""

    repo: str
    sha: str
    content_hash: str
    version: str | None = None
    ref: str = "latest"
    registry: str = "local"
    installed_at: str = ""
    files: dict[str, str] = field(default_factory=dict, compare=False)  # path -> sha256, to
    # name the files `verify-install` finds changed (the lock's content hash is the check)

    def to_text(self) -> str:
        """The marker file's JSON text."""
        return json.dumps({"installer": "hubskills", **asdict(self)}, indent=2,
                          sort_keys=True) + "\n"


def now_iso() -> str:
    """UTC now, to the second, ISO 8601."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def read_marker(folder: Path) -> Marker | None:
    """The folder's hubskills marker, or None when absent, unreadable or malformed."""
    path = folder / MARKER_FILE
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _MARKER_MAX_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        marker = Marker(repo=str(data["repo"]), sha=str(data["sha"]),
                        content_hash=str(data["content_hash"]),
                        version=None if data.get("version") is None else str(data["version"]),
                        ref=str(data.get("ref") or "latest"),
                        registry=str(data.get("registry") or "local"),
                        installed_at=str(data.get("installed_at") or ""),
                        files={str(k): str(v) for k, v in (data.get("files") or {}).items()})
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return marker if _SHA.match(marker.sha) else None


def is_hf_managed(folder: Path) -> bool:
    """Whether `hf skills` manages the folder (it holds `.hf-skill-manifest.json`)."""
    path = folder / HF_MARKER
    return path.exists() or path.is_symlink()


@dataclass(frozen=True)
class LockEntry:
    """One pinned skill: the folder `name` holds `repo` at `sha`."""

    name: str
    repo: str
    sha: str
    content_hash: str
    version: str | None = None
    registry: str = "local"
    agents: tuple[str, ...] = ()
    copy: bool = False
    source: dict[str, Any] | None = None  # a folder or git source: its path, or url/subdir/ref
    signer: str | None = None  # who signed skill.oms.sig: certificate subject; root, or key
    requires: tuple[str, ...] = ()  # its metadata.requires, as written (`ns/name@^1.2`)
    dependency: bool = False  # installed only because another skill requires it
    accepted_unsigned: bool = False  # unsigned in a namespace `signers` pins: accepted as such

    def to_json(self) -> dict[str, Any]:
        """The entry as written in the lock (without the name, which is its key)."""
        data = asdict(self)
        del data["name"]
        data["agents"] = sorted(self.agents)
        if self.source is None:  # a registry pull's entry reads as it always did
            del data["source"]
        if self.signer is None:  # an unsigned skill's entry reads as it always did
            del data["signer"]
        data["requires"] = list(self.requires)
        for key in ("requires", "dependency", "accepted_unsigned"):  # and so on
            if not data[key]:
                del data[key]
        return data


@dataclass
class Lockfile:
    """`skills.lock`: pinned skills by folder name. `exists` is False for a new lock."""

    path: Path
    entries: dict[str, LockEntry] = field(default_factory=dict)
    exists: bool = False
    signers: dict[str, str] = field(default_factory=dict)  # namespace -> first signer seen

    @classmethod
    def read(cls, path: Path) -> Lockfile:
        """Read and validate the lock (an absent file is an empty lock).

        Raises:
            HubskillsError: the file is not a valid lock.
        """
        if not path.is_file():
            return cls(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            skills = data["skills"]
            entries = {name: _entry(name, item) for name, item in skills.items()}
            signers = {str(k): str(v) for k, v in (data.get("signers") or {}).items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError, HubskillsError) as err:
            raise HubskillsError(f"{path} is not a valid skills.lock ({err})",
                                 hint=f"git checkout {path.name}, or delete it and pull "
                                      "the skills again") from err
        return cls(path, entries, exists=True, signers=signers)

    def render(self) -> str:
        """The lock's text: sorted keys, two-space indent, trailing newline."""
        skills = {name: self.entries[name].to_json() for name in sorted(self.entries)}
        data: dict[str, Any] = {"lockfile-version": LOCK_VERSION, "skills": skills}
        if self.signers:  # trust on first use: the signer first seen per namespace
            data["signers"] = dict(sorted(self.signers.items()))
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    def write(self) -> bool:
        """Write the lock atomically if its text changed; returns whether it wrote."""
        text = self.render()
        if self.path.is_file() and self.path.read_text(encoding="utf-8") == text:
            return False
        atomic_write_text(self.path, text)
        self.exists = True
        return True


def _entry(name: str, item: dict[str, Any]) -> LockEntry:
    if not NAME_RE.match(name) or len(name) > 64:
        raise ValueError(f"bad skill name {name!r}")
    entry = LockEntry(name=name, repo=str(item["repo"]), sha=str(item["sha"]),
                      content_hash=str(item["content_hash"]),
                      version=None if item.get("version") is None else str(item["version"]),
                      registry=str(item.get("registry") or "local"),
                      agents=tuple(str(a) for a in item.get("agents") or ()),
                      copy=bool(item.get("copy", False)), source=_source(item.get("source")),
                      signer=None if item.get("signer") is None else str(item["signer"]),
                      requires=tuple(str(r) for r in item.get("requires") or ()),
                      dependency=bool(item.get("dependency", False)),
                      accepted_unsigned=item.get("accepted_unsigned") is True)
    if entry.source is not None:  # `repo` is the source's key (`github:o/r/path`, `./path`)
        if not entry.repo.startswith((".", "/", "~", "github:", "git@", "git+", "mcp+")) \
                and "://" not in entry.repo:
            raise ValueError(f"{name}: {entry.repo!r} is no folder or git source")
        if not _SHA.match(entry.sha):
            raise ValueError(f"{name}: sha {entry.sha!r} is not a full commit sha")
        return _with_publisher(entry) if entry.repo.startswith("mcp+") else entry
    from registry.stores.refs import check_repo_id  # not at import: a marker read needs no store

    check_repo_id(entry.repo)
    if not _SHA.match(entry.sha):
        raise ValueError(f"{name}: sha {entry.sha!r} is not a full commit sha")
    return entry


def _with_publisher(entry: LockEntry) -> LockEntry:
    """An MCP skill's entry with the repo its URI files it under (`source.repo`, whose
    namespace its signer is pinned for): a lock written before that field gets it from the
    URI, written on the next write; one that names another repo than its URI is refused.

    Such an older entry installed unsigned was checked against its *server's* pin, not its
    publisher's, so it is marked `accepted_unsigned`, as the lock vouched for it then: a
    project that pinned `acme`'s signer from the registry and holds an unsigned skill an MCP
    server files under `acme/` keeps installing (a lock's committer could set the mark
    anyway: this gives nothing a lock edit could not)."""
    source = dict(entry.source or {})
    repo = publisher(str(source.get("uri") or ""))
    if "repo" in source and source["repo"] != repo:
        raise ValueError(f"{entry.name}: source repo {source['repo']!r} is not the one its "
                         f"uri names ({repo})")
    if repo is None:
        return entry
    older = "repo" not in source and entry.signer is None
    return replace(entry, source=source | {"repo": repo},
                   accepted_unsigned=entry.accepted_unsigned or older)


def _source(item: Any) -> dict[str, Any] | None:
    """A lock entry's `source` block: string fields, or maps of strings (an MCP source's
    `digests`, by path)."""
    if item is None:
        return None
    if not isinstance(item, dict) or not all(
            isinstance(v, str) or (isinstance(v, dict) and all(
                isinstance(k, str) and isinstance(d, str) for k, d in v.items()))
            for v in item.values()):
        raise ValueError(f"source {item!r} is not a map of strings")
    return {str(k): dict(v) if isinstance(v, dict) else v for k, v in item.items()}
