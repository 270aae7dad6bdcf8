"""Run the `git` binary for one remote, trusting nothing it fetches (see `git_fetch.py`).

A `GitRunner` gives every git call a clean environment (no system config, no terminal prompt,
only `GIT_SSH*`/TLS variables kept) and `-c` settings that win over any config: hooks at
`/dev/null`, no fsmonitor, no submodules, the network protocols only (`file://` only for a
`file://` source) and none at all for a command that only reads a local repository, a time
limit. `fetch` watches the bytes as they land and stops git past a cap.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from registry.errors import HubskillsError, RegistryUnavailable, UnsafeSkill

TIMEOUT_S = 300.0
POLL_S = 0.02  # how often a running fetch's received bytes are counted
_KEPT_ENV = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "XDG_CONFIG_HOME",
             "SSH_AUTH_SOCK", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_SSL_CAINFO",
             "GIT_SSL_CAPATH", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY",
             "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
_NETWORK = ("https", "http", "ssh", "git")


def _settings(allowed: tuple[str, ...]) -> list[str]:
    """`-c` pairs that win over every config file git reads (and over the remote's).

    Only the `allowed` protocols can be used; with none, a command that reads the local
    repository cannot fetch a partial clone's missing object on its own (a lazy fetch would
    bring an unchecked blob of any size), it fails instead.
    """
    pairs = {"core.hooksPath": "/dev/null", "core.fsmonitor": "false", "core.askPass": "",
             "protocol.allow": "never",
             **{f"protocol.{name}.allow": "always" if name in allowed else "never"
                for name in (*_NETWORK, "file")},
             "submodule.recurse": "false", "fetch.recurseSubmodules": "false",
             "fetch.unpackLimit": "1", "transfer.unpackLimit": "1",  # a pack, written as it comes
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


def _stored(objects: Path) -> dict[str, int]:
    """Size of each file under `objects` (a pack grows as git receives it)."""
    sizes: dict[str, int] = {}
    for dirpath, _, names in os.walk(objects):
        for name in names:
            path = os.path.join(dirpath, name)
            try:
                sizes[path] = os.lstat(path).st_size
            except FileNotFoundError:  # a temp file renamed or removed meanwhile
                continue
    return sizes


def _stop(git: subprocess.Popen[bytes]) -> None:
    """Kill a fetch and the helpers it started (its own process group)."""
    try:
        os.killpg(git.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    git.wait()


class GitRunner:
    """Git commands for the remote `url`, each in a git folder given by the caller."""

    def __init__(self, url: str, *, allow_file: bool = False,
                 timeout: float = TIMEOUT_S) -> None:
        self.url, self.timeout = url, timeout
        self._local = ["git", *_settings(())]
        self._net = ["git", *_settings((*_NETWORK, "file") if allow_file else _NETWORK)]
        self.env = _environment()

    def command(self, git_dir: Path | None, *args: str, remote: bool = False) -> list[str]:
        """The command line of `git ARGS` in `git_dir` (network protocols only if `remote`)."""
        where = ["--git-dir", str(git_dir)] if git_dir else []
        return [*(self._net if remote else self._local), *where, *args]

    def run(self, git_dir: Path | None, *args: str, remote: bool = False, check: bool = True,
            data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run `git ARGS` in `git_dir` (`remote`: it reads the remote, whose errors it names).

        Raises:
            RegistryUnavailable: a remote command failed, or no answer within the timeout.
            HubskillsError: git is missing, or a local command failed (`check`).
        """
        command = self.command(git_dir, *args, remote=remote)
        try:
            # git reads `data` when given, else nothing (an empty stdin, never the terminal)
            stdin: dict[str, Any] = {} if data is not None else {"stdin": subprocess.DEVNULL}
            done = subprocess.run(command, capture_output=True, env=self.env, check=False,
                                  timeout=self.timeout, input=data, **stdin)
        except FileNotFoundError as err:
            raise _no_git() from err
        except subprocess.TimeoutExpired as err:
            raise self.no_answer() from err
        if check and done.returncode != 0:
            raise self.failed(args[0], done, remote=remote)
        return done

    def no_answer(self) -> RegistryUnavailable:
        return RegistryUnavailable(f"git gave no answer from {self.url} within "
                                   f"{self.timeout:.0f} s",
                                   hint=f"check the network, then: git ls-remote {self.url}")

    def failed(self, command: str, done: subprocess.CompletedProcess[bytes], *,
                remote: bool) -> HubskillsError:
        said = done.stderr.decode(errors="replace").strip()
        if remote:
            last = said.splitlines()[-1] if said else f"exit {done.returncode}"
            return RegistryUnavailable(f"git could not read {self.url}: {last}",
                                       hint=f"check the URL (git ls-remote {self.url} shows what "
                                            "git sees); a private repository needs git "
                                            "credentials")
        return HubskillsError(f"git {command} failed: {said[-300:]}",
                              hint="report it with HUBSKILLS_DEBUG=1 and the git version")

    def fetch(self, git_dir: Path, cap: int, refuse: UnsafeSkill,
              *args: str) -> subprocess.CompletedProcess[bytes]:
        """`git fetch --no-tags ARGS` into `git_dir`, stopped once over `cap` bytes arrived.

        Git writes a fetched pack as it receives it (`fetch.unpackLimit=1`), so the bytes that
        appear under `objects/` are the bytes received; they are counted every `POLL_S` and once
        more when git is done. What a refused fetch brought is removed.

        Raises:
            UnsafeSkill: `refuse`, when more than `cap` bytes arrived.
            RegistryUnavailable: no answer within the timeout.
        """
        objects = git_dir / "objects"
        before = _stored(objects)
        command = self.command(git_dir, "fetch", "--quiet", "--no-tags", *args, remote=True)
        deadline = time.monotonic() + self.timeout
        with tempfile.TemporaryFile() as said, self._popen(command, said) as git:
            while True:
                try:
                    git.wait(POLL_S)
                except subprocess.TimeoutExpired:
                    pass
                now = _stored(objects)
                if sum(now.values()) - sum(before.values()) > cap:
                    _stop(git)
                    for path in set(_stored(objects)) - set(before):
                        Path(path).unlink(missing_ok=True)
                    raise refuse
                if git.returncode is not None:
                    said.seek(0)
                    return subprocess.CompletedProcess(command, git.returncode, b"", said.read())
                if time.monotonic() > deadline:
                    _stop(git)
                    raise self.no_answer()

    def _popen(self, command: list[str], stderr: IO[bytes]) -> subprocess.Popen[bytes]:
        try:  # its own process group: stopping it stops the transport helpers it starts
            return subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=stderr, env=self.env,
                                    start_new_session=True)
        except FileNotFoundError as err:
            raise _no_git() from err


def _no_git() -> HubskillsError:
    return HubskillsError("git is not installed; a git source needs it",
                          hint="install git (apt install git, brew install git)")
