"""A store over folders and git sources: what `pull` asks a registry, asked of a source.

`SourceStore.resolve(key, ref)` names a revision: a git source's commit sha (from the remote's
refs, or the sha given), a folder's content (the first 40 hex digits of its content hash: a
folder has no commits). `fetch(key, sha, dest)` writes exactly that revision's files into an
empty staging folder, refusing links, special files, unsafe paths and files over the caps
before a byte is written, and reports the content hash of what it wrote; the caller then stages
it exactly as a registry pull (`staging.prepare`: validation, scan, the lock's pin).
`skills(source, sha)` finds the skills in a source (a folder holding SKILL.md, at most three
levels down), so a repository holding several can be pulled by name.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from registry.errors import HubskillsError, UnsafeSkill, VersionNotFound, hint_command
from registry.format.skill import MARKER_FILES, NOISE_NAMES, NOISE_SUFFIXES, content_hash
from registry.install.git_fetch import HOSTILE_HINT, TIMEOUT_S, GitRepo
from registry.install.lockfile import LockEntry
from registry.install.mcp_source import McpSource, parse_mcp
from registry.install.mcp_store import McpStore
from registry.install.sources import GITHUB_URL, FolderSource, GitSource, Source, parse_source
from registry.scan import STORE_LIMITS, SizeLimits, check_relpath, write_file
from registry.stores.base import Fetched, Resolved

SOURCE_REGISTRIES = ("git", "folder", "mcp")  # mcp: `mcp+...`, one McpStore per server
MAX_DEPTH = 3  # SKILL.md at most this many folders below the source
_RESERVED = ".hubskills"


class SourceStore:
    """Resolve and fetch folder and git sources (one temp repository per URL, see `close`)."""

    kind = "git"

    def __init__(self, root: Path, *, github_url: str = GITHUB_URL,
                 timeout: float = TIMEOUT_S, typed: Source | None = None) -> None:
        """`typed`: the source as the user typed it, whose server is then asked with the
        credential its URL holds (`McpSource.typed`); a key names none."""
        self.root, self.github_url, self.timeout = Path(root), github_url, timeout
        self._typed = {typed.server: typed.typed} if isinstance(typed, McpSource) \
            and typed.typed else {}
        self._repos: dict[str, GitRepo] = {}
        self._mcp: dict[str, McpStore] = {}
        self._uris: dict[tuple[str, str], str] = {}  # (repo, sha) -> the URI a lock pins
        self._lock = threading.Lock()

    def __enter__(self) -> SourceStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Remove every temp repository."""
        for repo in self._repos.values():
            repo.close()
        self._repos.clear()
        for server in self._mcp.values():
            server.close()
        self._mcp.clear()

    def mcp(self, source: McpSource) -> McpStore:
        """The store of `source`'s MCP server (one session per server, made on first use,
        with the credential the user typed for it, if any)."""
        with self._lock:
            if source.server not in self._mcp:
                typed = source.typed or self._typed.get(source.server, "")
                self._mcp[source.server] = McpStore(source.server, typed=typed)
            return self._mcp[source.server]

    def pin_uri(self, repo: str, sha: str, uri: str) -> None:
        """Fetch the MCP skill `repo` at `sha` by the URI `skills.lock` pins (`skills/get`),
        not by what the server lists now."""
        with self._lock:
            self._uris[(repo, sha)] = uri

    def follow_pins(self, source: McpSource, entries: Iterable[LockEntry]) -> None:
        """Have `source`'s server give each skill a lock pinned from it by a name alone the
        repo its pinned URI names, should another repo serve that name since
        (`McpStore.follow`)."""
        for entry in entries:
            uri = (entry.source or {}).get("uri") if entry.registry == "mcp" else None
            if uri:
                pinned = parse_mcp(entry.repo)
                if pinned.server == source.server and pinned.skill:
                    self.mcp(pinned).follow(pinned.skill, str(uri))

    def repo(self, source: GitSource) -> GitRepo:
        """The temp repository of `source`'s URL (made on first use)."""
        url = source.clone_url(self.github_url)
        with self._lock:
            if url not in self._repos:
                self._repos[url] = GitRepo(url, allow_file=source.is_file, timeout=self.timeout)
            return self._repos[url]

    def resolve(self, repo: str, ref: str | None = None) -> Resolved:
        """The revision `ref` names in the source `repo` (a folder: its content now).

        Raises:
            VersionNotFound: no such ref; HubskillsError: no such folder.
            UnsafeSkill: a folder holding links, special files or too much.
            RegistryUnavailable: the remote cannot be read.
        """
        source = parse_source(repo)
        if isinstance(source, McpSource):
            return self.mcp(source).resolve(repo, ref)
        if isinstance(source, FolderSource):
            folder = self._folder(source)
            _folder_files(folder, STORE_LIMITS)
            return Resolved(repo, folder_revision(folder), None, "folder", registry="folder")
        sha = self.repo(source).resolve(ref)
        return Resolved(repo, sha, None, ref or "HEAD", registry="git")

    def fetch(self, repo: str, sha: str, dest: Path, *, limits: SizeLimits = STORE_LIMITS,
              pinned_hash: str | None = None, count: bool = True) -> Fetched:
        """Write the revision's files into the empty folder `dest` (see the module docstring).

        Raises:
            UnsafeSkill: a link, a special file, an unsafe path, a cap exceeded.
            VersionNotFound: the revision is not there (a folder changed since it was pinned).
        """
        source = parse_source(repo)
        if isinstance(source, McpSource):
            return self.mcp(source).fetch(repo, sha, dest, limits=limits,
                                          uri=self._uris.get((repo, sha)))
        if isinstance(source, FolderSource):
            folder = self._folder(source)
            files = _copy_folder(folder, dest, limits)
            if folder_revision(dest) != sha:
                raise VersionNotFound(f"{repo} changed since it was pinned at {sha[:12]}",
                                      hint=hint_command("pull", repo)
                                      + "  # pins it as it is now")
        else:
            git = self.repo(source)
            entries = git.listing(sha, source.subdir)
            for entry in entries:
                if entry.path.split("/")[0] == _RESERVED:
                    raise UnsafeSkill(f"unexpected file {entry.path!r}: the {_RESERVED}/ folder "
                                      "is reserved for hubskills' manifest", hint=HOSTILE_HINT)
            files = git.write(entries, dest, limits, tree=git.tree_id(sha, source.subdir),
                              subdir=source.subdir)
        return Fetched(dest, files, content_hash(dest))

    def skills(self, source: Source, sha: str) -> list[str]:
        """The folders below `source` (relative to it) holding a SKILL.md; `""` is itself
        (an MCP server's: the names of the skills it lists)."""
        if isinstance(source, McpSource):
            return self.mcp(source).skills(source, sha)
        if isinstance(source, FolderSource):
            paths = _folder_paths(self._folder(source))
        else:
            paths = [e.path for e in self.repo(source).listing(sha, source.subdir)]
        found = sorted({p.rpartition("/")[0] for p in paths if p.rsplit("/", 1)[-1] == "SKILL.md"
                        and p.count("/") <= MAX_DEPTH})
        return [f for f in found if not any(f.startswith(o + "/") or (o == "" and f)
                                            for o in found if o != f)]

    def _folder(self, source: FolderSource) -> Path:
        folder = source.resolved(self.root)
        if not folder.is_dir():
            raise HubskillsError(f"{source.key}: no such folder"
                                 + (f" (in {self.root})" if not folder.is_absolute() else ""),
                                 hint="a folder pull cannot be fetched again once the folder "
                                      "is gone: restore it, pull the skill from git (hubskills "
                                      "pull github:OWNER/REPO/PATH), or hubskills remove it")
        return folder


def folder_revision(folder: Path) -> str:
    """A folder's revision id: the first 40 hex digits of its content hash."""
    return content_hash(folder).removeprefix("sha256:")[:40]


def _is_noise(name: str) -> bool:
    return name in MARKER_FILES or name in NOISE_NAMES or name.endswith(NOISE_SUFFIXES)


def _folder_files(root: Path, limits: SizeLimits) -> list[tuple[str, int]]:
    """(path, size) of a folder's files as a pull takes them, checked without following links.

    Raises:
        UnsafeSkill: a link, a special file, an unsafe path, the reserved folder, or a cap.
    """
    sizes: list[tuple[str, int]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not _is_noise(d))
        for name in [*dirnames, *filenames]:
            if _is_noise(name):
                continue
            full = Path(dirpath, name)
            rel = check_relpath(full.relative_to(root).as_posix())
            mode = full.lstat().st_mode
            if rel == _RESERVED:
                raise UnsafeSkill(f"{root}/{_RESERVED}: the folder name is reserved for "
                                  "hubskills' manifest", hint=f"rename {root}/{_RESERVED}")
            if stat.S_ISLNK(mode):
                raise UnsafeSkill(f"{rel} is a symlink ({root / rel} -> {os.readlink(full)}); "
                                  "links in skills are never followed or installed",
                                  hint=f"replace {root / rel} with the file it points to")
            if stat.S_ISREG(mode):
                sizes.append((rel, full.lstat().st_size))
            elif not stat.S_ISDIR(mode):
                raise UnsafeSkill(f"{rel} is not a regular file", hint=HOSTILE_HINT)
        if len(sizes) > limits.max_files:
            break
    limits.check(sizes, hint=HOSTILE_HINT)
    return sizes


def _copy_folder(root: Path, dest: Path, limits: SizeLimits) -> list[str]:
    """Copy a checked folder into `dest`, each file opened without following links."""
    sizes = _folder_files(root, limits)
    for rel, size in sizes:
        fd = os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            data = handle.read(size + 1) if stat.S_ISREG(info.st_mode) else b""
        if len(data) != size:
            raise UnsafeSkill(f"{rel} changed while it was copied", hint="pull it again")
        target = write_file(dest, rel, data)
        if info.st_mode & 0o111:
            target.chmod(0o755)
    return [rel for rel, _ in sizes]


def _folder_paths(root: Path) -> list[str]:
    """Relative paths under `root` down to `MAX_DEPTH` folders (noise and links skipped)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel = Path(dirpath).relative_to(root)
        depth = 0 if rel == Path(".") else len(rel.parts)
        dirnames[:] = [d for d in dirnames if not _is_noise(d) and depth < MAX_DEPTH]
        found += [(rel / name).as_posix() for name in filenames if not _is_noise(name)]
    return found

