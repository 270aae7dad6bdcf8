"""Read a skill's folder from a git repository, fetching that folder's files and no other.

A `GitRepo` is a private bare repository in a temp folder (0700), removed by `close`; every git
call goes through a `GitRunner` (clean environment, overriding settings, no protocol at all for
a command that reads only the local repository, a time limit). It asks the remote for its refs
(`git ls-remote`), then fetches one commit with its folders but no file (`--depth 1
--filter=blob:none`; every branch's and tag's history, still without files, only when the
server refuses a sha) and lists a folder of it (`git ls-tree`). Paths, kinds and the file count
are checked on that listing before any file is fetched. Then the folder alone is fetched by its
tree id into a repository of its own with `--filter=blob:limit=` one byte over the per-file
cap, so a blob outside the folder is never sent and one over the cap inside it neither (it is
refused by name); exact sizes are checked before a byte is written, and the files are written
from git's objects (`git cat-file --batch`). Nothing is ever checked out, so no hook, filter,
attribute, LFS smudge or submodule runs or is followed; a link or a submodule entry is refused.

A server without partial clone ignores `--filter` and sends the whole commit. Every fetch is
watched as it lands: git is stopped shortly after more than the skill's total cap has arrived
(`UnsafeSkill` with `PARTIAL_HINT`), so such a server still serves a repository under the cap,
with the same checks on the files it sent, and a bigger one is refused after about the cap.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from registry.errors import RegistryUnavailable, UnsafeSkill, VersionNotFound
from registry.install.git_runner import TIMEOUT_S, GitRunner
from registry.scan import STORE_LIMITS, SizeLimits, check_relpath, write_file

__all__ = ["HOSTILE_HINT", "LARGE_HINT", "LINK_HINT", "PARTIAL_HINT", "TIMEOUT_S", "Entry",
           "GitRepo"]

HOSTILE_HINT = "the repository is malformed or hostile; nothing was installed"
LINK_HINT = ("nothing was installed; ask the publisher to replace the link with the file it "
             "points to, or pull a copy of the folder that has the file in its place")
LARGE_HINT = ("nothing was installed; a skill keeps large files out of its folder (link to them "
              "instead)")
PARTIAL_HINT = ("the server seems not to support partial clone (git fetch --filter), so git had "
                "to download the whole commit: pull from a server that does (GitHub and GitLab "
                "do), or clone the repository yourself and hubskills pull ./PATH/TO/SKILL")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_PREFIX = re.compile(r"^[0-9a-f]{7,39}$")


@dataclass(frozen=True)
class Entry:
    """One path of a listed folder: git's mode and type, the object id."""

    path: str
    mode: str
    kind: str
    oid: str


class GitRepo:
    """Objects fetched from one remote `url` into a private bare repository.

    `limits.max_total_bytes` also caps what may arrive for a commit's folders (the listing).
    """

    def __init__(self, url: str, *, allow_file: bool = False, timeout: float = TIMEOUT_S,
                 limits: SizeLimits = STORE_LIMITS) -> None:
        self.url, self.limits = url, limits
        self._git = GitRunner(url, allow_file=allow_file, timeout=timeout)
        self.dir = Path(tempfile.mkdtemp(prefix="hubskills-git-"))
        self._refs: dict[str, str] | None = None
        self._names: dict[str, str] = {}
        self._fetching = threading.RLock()  # one fetch at a time: its bytes are counted on disk
        self._init(self.dir)

    def close(self) -> None:
        """Remove the temp repository."""
        shutil.rmtree(self.dir, ignore_errors=True)

    def _init(self, path: Path) -> None:
        self._git.run(None, "init", "--quiet", "--bare", "--template=", str(path))

    def _run(self, *args: str, git_dir: Path | None = None, remote: bool = False,
             check: bool = True, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return self._git.run(git_dir or self.dir, *args, remote=remote, check=check, data=data)

    def refs(self) -> dict[str, str]:
        """The remote's refs (`HEAD`, `refs/heads/...`, `refs/tags/...`, peeled `^{}`)."""
        if self._refs is None:
            out = self._git.run(None, "ls-remote", self.url, remote=True).stdout.decode()
            self._refs = {}
            for line in out.splitlines():
                sha, _, name = line.partition("\t")
                if _SHA.match(sha):
                    self._refs[name] = sha
        return self._refs

    def resolve(self, ref: str | None) -> str:
        """The commit sha `ref` names (None or `HEAD`: the default branch).

        Raises:
            VersionNotFound: no such branch, tag or commit.
            RegistryUnavailable: the remote cannot be read.
        """
        refs, wanted = self.refs(), ref or "HEAD"
        names = [wanted] if wanted == "HEAD" or wanted.startswith("refs/") else \
            [f"refs/tags/{wanted}", f"refs/heads/{wanted}"]
        for name in names:
            sha = refs.get(f"{name}^{{}}") or refs.get(name)
            if sha:
                self._names[sha] = name
                return sha
        if _SHA.match(wanted):
            return wanted
        if _PREFIX.match(wanted):
            found = {sha for sha in refs.values() if sha.startswith(wanted)}
            if len(found) == 1:
                return found.pop()
            self._fetch_all()
            done = self._run("rev-parse", "--verify", "--quiet", f"{wanted}^{{commit}}",
                             check=False)
            if done.returncode == 0:
                return done.stdout.decode().strip()
        raise self._missing(wanted)

    def _missing(self, wanted: str) -> VersionNotFound:
        refs = self.refs()
        known = sorted({n.split("/", 2)[-1].removesuffix("^{}") for n in refs
                        if n.startswith(("refs/heads/", "refs/tags/"))})
        shown = ", ".join(known[:8]) + (f" (+{len(known) - 8} more)" if len(known) > 8 else "")
        return VersionNotFound(f"{self.url} has no branch, tag or commit '{wanted}'"
                               + (f"; it has {shown}" if shown else ""),
                               hint="pull one of those after @, or leave @REF out for the "
                                    f"default branch (git ls-remote {self.url} lists them)")

    def fetch(self, sha: str) -> None:
        """Bring commit `sha` and its folders here, no file: one commit deep, or every ref's.

        Raises:
            VersionNotFound: the remote does not hold it.
            UnsafeSkill: more than the total cap arrived (a server that sends files anyway).
        """
        if self._has(sha):
            return
        for want in [sha, self._names.get(sha)]:
            if want and self._fetch_folders("--depth", "1", self.url, want).returncode == 0 \
                    and self._has(sha):
                return
        self._fetch_all()
        if not self._has(sha):
            raise self._missing(sha)

    def _fetch_folders(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        cap = self.limits.max_total_bytes
        refuse = UnsafeSkill(f"git stopped fetching {self.url}: over {cap} bytes arrived before "
                             "the skill's folder could be listed", hint=PARTIAL_HINT)
        with self._fetching:
            return self._git.fetch(self.dir, cap, refuse, "--filter=blob:none", *args)

    def _fetch_all(self) -> None:
        shallow = (self.dir / "shallow").exists()
        done = self._fetch_folders(*(["--unshallow"] if shallow else []), self.url,
                                   "+refs/heads/*:refs/remotes/o/heads/*",
                                   "+refs/tags/*:refs/remotes/o/tags/*")
        if done.returncode != 0:
            raise self._git.failed("fetch", done, remote=True)

    def _has(self, sha: str, git_dir: Path | None = None, kind: str = "commit") -> bool:
        return self._run("cat-file", "-e", f"{sha}^{{{kind}}}", git_dir=git_dir,
                         check=False).returncode == 0

    def tree_id(self, sha: str, subdir: str = "") -> str:
        """The id of the folder `subdir` at commit `sha`, fetching the commit first.

        Raises:
            VersionNotFound: no such folder at that commit.
        """
        self.fetch(sha)
        found = self._run("rev-parse", "--verify", "--quiet", f"{sha}:{subdir}", check=False)
        tree = found.stdout.decode().strip()
        if found.returncode != 0 or not self._has(tree, kind="tree"):
            raise VersionNotFound(f"{self.url} has no folder '{subdir}' at {sha[:12]}",
                                  hint="check the path after the repository (git ls-tree -r "
                                       f"{sha[:12]} in a clone lists its files)")
        return tree

    def listing(self, sha: str, subdir: str = "") -> list[Entry]:
        """Every path under `subdir` at `sha` (relative to `subdir`), fetching it first.

        Only folders are read: no file is fetched for a listing.

        Raises:
            VersionNotFound: no such folder at that commit.
            UnsafeSkill: a path that is not UTF-8.
        """
        out = self._run("ls-tree", "-r", "-z", self.tree_id(sha, subdir)).stdout
        entries = []
        for record in filter(None, out.split(b"\0")):
            meta, _, raw = record.partition(b"\t")
            mode, kind, oid = meta.decode().split()
            try:
                path = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise UnsafeSkill(f"refusing a file name that is not UTF-8: {raw[:80]!r}",
                                  hint=HOSTILE_HINT) from err
            entries.append(Entry(path, mode, kind, oid))
        return entries

    def write(self, entries: list[Entry], dest: Path, limits: SizeLimits, *,
              tree: str, subdir: str = "") -> list[str]:
        """Write `entries`, the listing of the folder `tree` (`subdir` of the repository, for
        messages), into the empty folder `dest`.

        Paths, kinds and the file count are checked before any file is fetched, a file over
        `limits.max_file_bytes` is never fetched, and the exact sizes are checked before a byte
        is written.

        Raises:
            UnsafeSkill: an unsafe path, a link, a submodule, or a cap exceeded (nothing
                written then).
            RegistryUnavailable: the server would not send the folder.
        """
        for entry in entries:
            check_relpath(entry.path)
            named = f"{subdir.strip('/')}/{entry.path}" if subdir.strip("/") else entry.path
            if entry.mode == "120000":
                raise UnsafeSkill(f"{entry.path} is a symlink ({named} in {self.url}); links "
                                  "in skills are never followed or installed", hint=LINK_HINT)
            if entry.kind != "blob":
                raise UnsafeSkill(f"{entry.path} is a git {entry.kind} (a submodule) at {named} "
                                  f"in {self.url}; skills are installed as files, submodules are "
                                  "never fetched", hint=HOSTILE_HINT)
        limits.check([(e.path, 0) for e in entries], hint=HOSTILE_HINT)  # the count, first
        store = self._files(tree, limits, len(entries))
        try:
            sizes = self._sizes(store, tree, entries, limits)
            limits.check([(e.path, sizes[e.oid]) for e in entries], hint=LARGE_HINT)
            self._copy(store, entries, sizes, dest)
        finally:
            if store != self.dir:
                shutil.rmtree(store, ignore_errors=True)
        return sorted(e.path for e in entries)

    def _copy(self, store: Path, entries: list[Entry], sizes: dict[str, int],
              dest: Path) -> None:
        """Write each entry's blob from `store`, refusing one whose size is not as checked."""
        with subprocess.Popen(self._git.command(store, "cat-file", "--batch"),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env=self._git.env) as cat:
            assert cat.stdin is not None and cat.stdout is not None
            for entry in entries:
                cat.stdin.write(entry.oid.encode() + b"\n")
                cat.stdin.flush()
                header = cat.stdout.readline().split()
                size = int(header[2]) if len(header) == 3 else -1
                data = cat.stdout.read(size + 1)[:-1] if size == sizes[entry.oid] else b""
                if size != sizes[entry.oid]:
                    raise UnsafeSkill(f"{entry.path}: git read {size} bytes, having said "
                                      f"{sizes[entry.oid]}", hint=HOSTILE_HINT)
                target = write_file(dest, entry.path, data)
                if entry.mode == "100755":
                    target.chmod(0o755)
            cat.stdin.close()

    def _files(self, tree: str, limits: SizeLimits, count: int) -> Path:
        """A repository holding the folder `tree` with its files up to the per-file cap.

        The folder's tree id is fetched into a repository of its own (in this one, git would
        see the tree present and fetch nothing), filtered by size; the bytes are capped as they
        arrive (deflate never grows data by more than a fraction of a percent; each file and
        folder adds a few hundred bytes of headers and index at most).

        Raises:
            UnsafeSkill: more than the total cap arrived.
            RegistryUnavailable: the server would not send the folder by its id.
        """
        if not self._absent(self.dir, tree):
            return self.dir  # the server sent the files with the commit: it does not filter
        store = Path(tempfile.mkdtemp(prefix="folder-", dir=self.dir))
        total = limits.max_total_bytes
        refuse = UnsafeSkill(f"the skill is over {total} bytes in total (git was stopped)",
                             hint=LARGE_HINT)
        try:
            self._init(store)
            with self._fetching:
                done = self._git.fetch(store, total + total // 256 + 65536 + 1024 * count,
                                       refuse, f"--filter=blob:limit={limits.max_file_bytes + 1}",
                                       self.url, tree)
            if done.returncode != 0 or not self._has(tree, store, kind="tree"):
                raise RegistryUnavailable(f"{self.url} would not send the skill's folder "
                                          f"{tree[:12]} by its id",
                                          hint="the server needs git protocol v2, or "
                                               "uploadpack.allowAnySHA1InWant, to send one "
                                               "folder; clone it yourself and hubskills pull "
                                               "./PATH/TO/SKILL")
        except BaseException:
            shutil.rmtree(store, ignore_errors=True)
            raise
        return store

    def _absent(self, git_dir: Path, tree: str) -> set[str]:
        """The objects under `tree` that `git_dir` does not hold (never fetched for this)."""
        out = self._run("rev-list", "--objects", "--missing=print", tree, git_dir=git_dir).stdout
        return {line[1:].decode() for line in out.splitlines() if line.startswith(b"?")}

    def _sizes(self, store: Path, tree: str, entries: list[Entry],
               limits: SizeLimits) -> dict[str, int]:
        """Each entry's size in bytes, read from `store`; a file left out was over the cap.

        Raises:
            UnsafeSkill: a file the size filter left out.
        """
        absent = self._absent(store, tree)
        for entry in entries:
            if entry.oid in absent:
                raise UnsafeSkill(f"{entry.path} is over the cap of {limits.max_file_bytes} "
                                  "bytes (max per file): git did not download it",
                                  hint=LARGE_HINT)
        wanted = "".join(sorted({f"{e.oid}\n" for e in entries})).encode()
        out = self._run("cat-file", "--batch-check", git_dir=store, data=wanted).stdout
        sizes: dict[str, int] = {}
        for line in out.decode().splitlines():
            oid, *_, size = line.split()  # "OID missing" has no size
            if size.isdigit():
                sizes[oid] = int(size)
        for entry in entries:
            if entry.oid not in sizes:
                raise UnsafeSkill(f"{entry.path}: git did not send it", hint=HOSTILE_HINT)
        return sizes
