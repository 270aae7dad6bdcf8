"""Read a git repository with the `git` binary, trusting nothing it fetches.

A `GitRepo` is a private bare repository in a temp folder (0700), removed by `close`. It asks
the remote for its refs (`git ls-remote`), fetches one commit (`--depth 1`, the whole history
only when the server refuses a sha), lists a folder of that commit (`git ls-tree`) and writes
its blobs (`git cat-file --batch`): nothing is ever checked out, so no hook, filter, attribute,
LFS smudge or submodule of the repository runs or is followed. Every git call gets a clean
environment (no system config, no terminal prompt, only `GIT_SSH*`/TLS variables kept) and
`-c` settings that win over any config: hooks at `/dev/null`, no fsmonitor, the network
protocols only (`file://` only for a `file://` source), no submodules, a time limit.

Each listed path goes through the same checks as a Hub listing (`check_relpath`, the size and
count caps) before any byte is written; a link or a submodule is refused, never recreated.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from registry.errors import HubskillsError, RegistryUnavailable, UnsafeSkill, VersionNotFound
from registry.scan import SizeLimits, check_relpath, write_file

TIMEOUT_S = 300.0
HOSTILE_HINT = "the repository is malformed or hostile; nothing was installed"
_KEPT_ENV = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "XDG_CONFIG_HOME",
             "SSH_AUTH_SOCK", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_SSL_CAINFO",
             "GIT_SSL_CAPATH", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY",
             "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_PREFIX = re.compile(r"^[0-9a-f]{7,39}$")


@dataclass(frozen=True)
class Entry:
    """One path of a listed folder: git's mode and type, the object id, its size in bytes."""

    path: str
    mode: str
    kind: str
    oid: str
    size: int


def _settings(allow_file: bool) -> list[str]:
    """`-c` pairs that win over every config file git reads (and over the remote's)."""
    pairs = {"core.hooksPath": "/dev/null", "core.fsmonitor": "false", "core.askPass": "",
             "protocol.allow": "never", "protocol.https.allow": "always",
             "protocol.http.allow": "always", "protocol.ssh.allow": "always",
             "protocol.git.allow": "always",
             "protocol.file.allow": "always" if allow_file else "never",
             "submodule.recurse": "false", "fetch.recurseSubmodules": "false",
             "gc.auto": "0", "maintenance.auto": "false", "http.lowSpeedLimit": "1000",
             "http.lowSpeedTime": "60", "credential.interactive": "false"}
    return [arg for key, value in pairs.items() for arg in ("-c", f"{key}={value}")]


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in _KEPT_ENV}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", GIT_LFS_SKIP_SMUDGE="1",
               GIT_PROTOCOL_FROM_USER="0", LC_ALL="C")
    if "GIT_SSH_COMMAND" not in env and "GIT_SSH" not in env:
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"  # a prompt would wait forever
    return env


class GitRepo:
    """Objects fetched from one remote `url` into a private bare repository."""

    def __init__(self, url: str, *, allow_file: bool = False,
                 timeout: float = TIMEOUT_S) -> None:
        self.url, self.timeout = url, timeout
        self._args = ["git", *_settings(allow_file)]
        self._env = _environment()
        self.dir = Path(tempfile.mkdtemp(prefix="hubskills-git-"))
        self._refs: dict[str, str] | None = None
        self._names: dict[str, str] = {}
        self._run("init", "--quiet", "--bare", "--template=", str(self.dir), bare=False)

    def close(self) -> None:
        """Remove the temp repository."""
        shutil.rmtree(self.dir, ignore_errors=True)

    def _run(self, *args: str, bare: bool = True, remote: bool = False,
             check: bool = True) -> subprocess.CompletedProcess[bytes]:
        command = [*self._args, *(["--git-dir", str(self.dir)] if bare else []), *args]
        try:
            done = subprocess.run(command, capture_output=True, env=self._env, check=False,
                                  timeout=self.timeout, stdin=subprocess.DEVNULL)
        except FileNotFoundError as err:
            raise HubskillsError("git is not installed; a git source needs it",
                                 hint="install git (apt install git, brew install git)") from err
        except subprocess.TimeoutExpired as err:
            raise RegistryUnavailable(f"git gave no answer from {self.url} within "
                                      f"{self.timeout:.0f} s",
                                      hint=f"check the network, then: git ls-remote {self.url}"
                                      ) from err
        if check and done.returncode != 0 and remote:
            said = done.stderr.decode(errors="replace").strip().splitlines()
            raise RegistryUnavailable(f"git could not read {self.url}: "
                                      f"{said[-1] if said else 'exit ' + str(done.returncode)}",
                                      hint=f"check the URL (git ls-remote {self.url} shows what "
                                           "git sees); a private repository needs git "
                                           "credentials")
        if check and done.returncode != 0:
            raise HubskillsError(f"git {args[0]} failed in {self.dir}: "
                                 f"{done.stderr.decode(errors='replace')[-300:]}",
                                 hint="report it with HUBSKILLS_DEBUG=1 and the git version")
        return done

    def refs(self) -> dict[str, str]:
        """The remote's refs (`HEAD`, `refs/heads/...`, `refs/tags/...`, peeled `^{}`)."""
        if self._refs is None:
            out = self._run("ls-remote", self.url, bare=False, remote=True).stdout.decode()
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
        """Bring commit `sha` and its tree here: one commit deep, everything as a fallback.

        Raises:
            VersionNotFound: the remote does not hold it.
        """
        if self._has(sha):
            return
        for want in [sha, self._names.get(sha)]:
            if want and self._run("fetch", "--quiet", "--depth", "1", "--no-tags",
                                  self.url, want, check=False).returncode == 0 \
                    and self._has(sha):
                return
        self._fetch_all()
        if not self._has(sha):
            raise self._missing(sha)

    def _fetch_all(self) -> None:
        shallow = (self.dir / "shallow").exists()
        self._run("fetch", "--quiet", "--no-tags", *(["--unshallow"] if shallow else []),
                  self.url, "+refs/heads/*:refs/remotes/o/heads/*",
                  "+refs/tags/*:refs/remotes/o/tags/*", remote=True)

    def _has(self, sha: str) -> bool:
        return self._run("cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0

    def listing(self, sha: str, subdir: str = "") -> list[Entry]:
        """Every path under `subdir` at `sha` (relative to `subdir`), fetching it first.

        Raises:
            VersionNotFound: no such folder at that commit.
            UnsafeSkill: a path that is not UTF-8.
        """
        self.fetch(sha)
        tree = f"{sha}:{subdir}"
        kind = self._run("cat-file", "-t", tree, check=False)
        if kind.returncode != 0 or kind.stdout.strip() != b"tree":
            raise VersionNotFound(f"{self.url} has no folder '{subdir}' at {sha[:12]}",
                                  hint="check the path after the repository (git ls-tree -r "
                                       f"{sha[:12]} in a clone lists its files)")
        out = self._run("ls-tree", "-r", "-z", "--long", tree).stdout
        entries = []
        for record in filter(None, out.split(b"\0")):
            meta, _, raw = record.partition(b"\t")
            mode, kind_, oid, size = meta.decode().split()
            try:
                path = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise UnsafeSkill(f"refusing a file name that is not UTF-8: {raw[:80]!r}",
                                  hint=HOSTILE_HINT) from err
            entries.append(Entry(path, mode, kind_, oid, int(size) if size.isdigit() else 0))
        return entries

    def write(self, entries: list[Entry], dest: Path, limits: SizeLimits) -> list[str]:
        """Write `entries` (blobs only) into the empty folder `dest`, checked as a listing.

        Raises:
            UnsafeSkill: an unsafe path, a link, a submodule, or a cap exceeded (nothing
                written then).
        """
        for entry in entries:
            check_relpath(entry.path)
            if entry.mode == "120000":
                raise UnsafeSkill(f"{entry.path} is a symlink; links in skills are never "
                                  "followed or installed", hint=HOSTILE_HINT)
            if entry.kind != "blob":
                raise UnsafeSkill(f"{entry.path} is a git {entry.kind} (a submodule); skills "
                                  "are installed as files, submodules are never fetched",
                                  hint=HOSTILE_HINT)
        limits.check([(e.path, e.size) for e in entries], hint=HOSTILE_HINT)
        with subprocess.Popen([*self._args, "--git-dir", str(self.dir), "cat-file", "--batch"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=self._env) as cat:
            assert cat.stdin is not None and cat.stdout is not None
            for entry in entries:
                cat.stdin.write(entry.oid.encode() + b"\n")
                cat.stdin.flush()
                header = cat.stdout.readline().split()
                size = int(header[2]) if len(header) == 3 else -1
                data = cat.stdout.read(size + 1)[:-1] if size == entry.size else b""
                if size != entry.size:
                    raise UnsafeSkill(f"{entry.path}: git read {size} bytes, its listing says "
                                      f"{entry.size}", hint=HOSTILE_HINT)
                target = write_file(dest, entry.path, data)
                if entry.mode == "100755":
                    target.chmod(0o755)
            cat.stdin.close()
        return sorted(e.path for e in entries)
