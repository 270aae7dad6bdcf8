"""The `bwrap` backend: Debian's bubblewrap, the default on Linux (docs/security.md).

Each run gets fresh pid, network, ipc, uts and mount namespaces: the system's runtime folders
and the project's Python prefixes bound read-only, the workspace the only writable folder
(mounted at `/workspace`, which is also HOME), a private `/tmp` and `/dev/shm` capped in bytes
and in files, no network at all (its own empty loopback). The root and `/dev` that bwrap builds
are tmpfs mounts too (a normal user's sandbox owns them): both are made read-only once built.
bwrap starts with an empty environment and gets only `--setenv` values, so the sandbox's pid 1
holds no secret in `/proc/1/environ`. When pid 1 ends (the command exited, or the parent killed
bwrap at the time limit) the kernel kills every process left in the namespace.

While it runs, the workspace and writable mounts are walked and the sandbox stopped once one is
past `Limits.workspace`, and its processes' memory is sampled and the sandbox stopped once they
hold more than `Limits.memory_total_bytes` together (`guard`: the file-size and address-space
rlimits bound one file and one process, not the totals).

Memory, CPU time and file size are rlimits that `prlimit` sets on bwrap as it starts
(`launcher`; its children inherit them). The process limit needs care: the kernel exempts host
root from it, and counts a user namespace's processes against its creator's limit at creation.
So, as a normal user, bwrap makes a user namespace and util-linux `prlimit` sets the process
limit inside it (counting only the sandbox's processes); as root, bwrap runs without a user
namespace (one would map to host root), with the process limit set up front, and the command
drops to a uid of its own through util-linux `setpriv`. Either way `setpriv` drops every
capability (effective, permitted, inheritable, ambient and bounding) before the command runs.

bwrap sizes a tmpfs (`--size`) but cannot bound its inodes, and a tmpfs inode is host kernel
memory that nothing reclaims (400,000 empty files in `/tmp` held ~400 MiB). So the start shim
(`Launch.shim`: trusted, it runs before anything of the caller's) remounts each private tmpfs
with `nr_inodes` (`Limits.tmp_files`): bwrap leaves it CAP_SYS_ADMIN (over the sandbox's own
mounts: its user namespace's, as a normal user) and CAP_SETPCAP, for `setpriv` to drop them all.
As a normal user that needs the user namespace mapped by hubskills (`Launch.admit`). System V
IPC objects, which nothing can size, cannot be made at all (`seccomp`).

`session()` builds the same sandbox once for many commands (an agent sample's): its command is a
small supervisor that runs each command it is sent (`bwrap_session`; `supervisor_perl`, or
`supervisor` where the sandbox has no Perl).
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import ClassVar, Literal

from registry.sandbox import guard
from registry.sandbox.base import (
    DEFAULT_LIMITS,
    Limits,
    Mounts,
    SandboxResult,
    SandboxUnavailable,
    run_process,
)
from registry.sandbox.bwrap_launch import Launch
from registry.sandbox.bwrap_probe import probe
from registry.sandbox.bwrap_session import SUPERVISOR as PYTHON_SUPERVISOR
from registry.sandbox.bwrap_session import BwrapSession
from registry.sandbox.namespace import SANDBOX_UID, as_root, give_to_sandbox_user, namespace_gone
from registry.sandbox.supervisor_perl import SOURCE as PERL_SUPERVISOR

WORKDIR = "/workspace"
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = ("alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group",
        "nsswitch.conf", "localtime")


@functools.cache
def _layout() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(bwrap arguments that build the read-only root, those that bind the Python prefixes,
    the real paths they make visible). The prefixes are bound after the private `/tmp` is
    mounted, so a venv or an interpreter under `/tmp` stays visible; each is bound at its real
    path and, when it is reached through a link, at the path Python knows it by."""
    args: list[str] = []
    roots: list[str] = []
    for top in _SYSTEM:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
            roots.append(os.path.realpath(top))
    args += ["--dir", "/etc"]
    for name in _ETC:
        path = f"/etc/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            args += ["--ro-bind", path, path]
            roots.append(path)
    prefixes: list[str] = []
    made: set[str] = set()
    for prefix in dict.fromkeys((sys.base_prefix, sys.prefix)):
        real = os.path.realpath(prefix)
        for target in dict.fromkeys((real, os.path.abspath(prefix))):
            if _under(target, roots):
                continue
            prefixes += _parents(target, made) + ["--ro-bind", real, target]
            roots.append(target)
    return tuple(args), tuple(prefixes), tuple(roots)


def _parents(target: str, made: set[str]) -> list[str]:
    """`--dir` arguments for the folders above `target` not made yet (else bwrap makes them
    mode 0700); never `/tmp` (the private tmpfs) nor a system folder (bound read-only)."""
    args: list[str] = []
    for parent in reversed(Path(target).parents[:-1]):
        folder = str(parent)
        if folder not in made and folder != "/tmp" and not _under(folder, ("/etc", *_SYSTEM)):
            args += ["--perms", "0755", "--dir", folder]
            made.add(folder)
    return args


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def visible(path: str) -> bool:
    """Whether `path` (after links) lies inside what the sandbox can see read-only."""
    return _under(os.path.realpath(path), _layout()[2])


def _inside_path() -> str:
    """The host's PATH minus every folder the sandbox cannot see, and minus relative entries
    (inside, they would name folders of the workspace: a command's own `python3` could stand in
    for the system's)."""
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return os.pathsep.join(e for e in dict.fromkeys(entries)
                           if os.path.isabs(e) and visible(e))


class BwrapSandbox:
    """Runs commands under bubblewrap; `binary` is bwrap's path (HUBSKILLS_BWRAP)."""

    name: ClassVar[str] = "bwrap"
    isolating: ClassVar[bool] = True

    def __init__(self, binary: str | None = None) -> None:
        self.binary = binary or "bwrap"

    def __repr__(self) -> str:
        return f"BwrapSandbox({self.binary!r})"

    def probe(self) -> tuple[bool, str]:
        """Run what checks and sessions run, once per process (`bwrap_probe`): a trivial
        Python check, and one command through a session's supervisor."""
        return probe(self.binary, as_root(), BwrapSandbox)

    def which(self, tool: str) -> str | None:
        """The path `tool` resolves to inside the sandbox, or None."""
        if "/" in tool:
            found = tool if os.path.isabs(tool) and os.access(tool, os.X_OK) else None
        else:
            found = shutil.which(tool, path=_inside_path() or os.devnull)
        return found if found and os.path.isfile(found) and visible(found) else None

    def command(self, argv: Sequence[str], limits: Limits, wall_s: float,
                env: Mapping[str, str] | None, workspace: Path,
                mounts: Mounts | None = None, launch: Launch | None = None) -> list[str]:
        """The full bwrap command line (holds no secret: it is readable inside); `launch`
        adds the start marker, the info pipe and, as root, the sandbox's own uid."""
        binary = shutil.which(self.binary) or self.binary
        system, prefixes, _ = _layout()
        variables = {"PATH": _inside_path(), "HOME": WORKDIR, "TMPDIR": "/tmp",
                     "LANG": "C.UTF-8", **(env or {})}
        home = variables["HOME"]
        cmd = [binary, *(launch.bwrap_args() if launch else ()), "--die-with-parent",
               "--new-session", *_namespaces(), *system, "--proc", "/proc", "--dev", "/dev",
               "--size", str(limits.shm_bytes), "--perms", "1777", "--tmpfs", "/dev/shm",
               "--remount-ro", "/dev",
               "--size", str(limits.file_bytes), "--perms", "1777", "--tmpfs", "/tmp",
               *prefixes, "--bind", str(workspace), WORKDIR, "--chdir", WORKDIR,
               *_extra(mounts), *(launch.mounts() if launch else ())]
        if home != WORKDIR and home.startswith("/tmp/"):  # a HOME apart from the workspace
            cmd += ["--perms", "1777", "--dir", home]
        cmd += ["--remount-ro", "/"]  # last: every folder and mount point above is made
        for key, value in variables.items():
            cmd += ["--setenv", key, value]
        first = _bound_tmpfs(limits)
        cmd += launch.shim(_tool("sh"), first) if launch else \
            [_tool("sh"), "-c", f'{first} && exec "$@"', "sh"]
        drop = [_tool("setpriv"), "--inh-caps=-all", "--ambient-caps=-all",
                "--bounding-set=-all", "--no-new-privs"]
        if as_root():
            uid = launch.uid if launch and launch.uid is not None else SANDBOX_UID
            return cmd + [*drop, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--",
                          *argv]
        return cmd + [*drop, "--", _tool("prlimit"), f"--nproc={limits.processes}", "--",
                      *argv]

    def session(self, workspace: Path, *, limits: Limits = DEFAULT_LIMITS,
                env: Mapping[str, str] | None = None,
                supervisor: Literal["perl", "python"] | None = None) -> BwrapSession:
        """One bwrap for many commands in `workspace` (see `bwrap_session`); not started yet.

        `limits` hold as for one `run` (memory, file size, processes; CPU time per process),
        and `limits.wall_s` is a command's default timeout. `supervisor`: Perl's
        (`supervisor_perl`, the faster start) when the sandbox sees `perl`, else Python's."""
        workspace = workspace.resolve()
        perl = self.which("perl") if supervisor in (None, "perl") else None
        if supervisor == "perl" and perl is None:
            raise SandboxUnavailable("perl is not visible in the sandbox",
                                     reason="no perl", hint="apt-get install perl-base")
        argv = [perl, "-e", PERL_SUPERVISOR] if perl else \
            [sys.executable, "-I", "-S", "-c", PYTHON_SUPERVISOR]
        return BwrapSession(
            lambda launch: [*launcher(limits, limits.wall_s),
                            *self.command(argv, limits, limits.wall_s, env, workspace,
                                          launch=launch)],
            workspace, limits=limits)

    async def run(self, argv: Sequence[str], workspace: Path, *, timeout: float | None = None,
                  limits: Limits = DEFAULT_LIMITS, stdin: bytes = b"",
                  env: Mapping[str, str] | None = None,
                  mounts: Mounts | None = None) -> SandboxResult:
        """Run `argv` in `/workspace` (bound to `workspace`); see the module docstring.

        `mounts` adds folders (an agent CLI's install, its HOME); writable and private ones
        are handed to this sandbox's user like the workspace. A result whose command never
        ran (the sandbox could not be built) says why in `launch_error`."""
        wall_s = limits.wall_s if timeout is None else timeout
        workspace = workspace.resolve()
        launch = Launch(root=as_root())
        try:
            if launch.uid is not None:
                for folder in _handed_over(workspace, mounts):
                    give_to_sandbox_user(folder, launch.uid)
            cmd = [*launcher(limits, wall_s),
                   *self.command(argv, limits, wall_s, env, workspace, mounts, launch)]
            try:
                # env={} : bwrap's own environment is what /proc/1/environ shows inside
                result = await run_process(cmd, backend=self.name, wall_s=wall_s, stdin=stdin,
                                           kill=lambda proc: _kill(proc, launch), env={},
                                           cwd="/", pass_fds=launch.pass_fds,
                                           watch=_watcher(workspace, mounts, limits, launch),
                                           spawned=launch.admit_spawned
                                           if launch.needs_admission else None)
            finally:
                launch.spawned()
            await namespace_gone(launch.pid_one())
            if not launch.started():  # nothing of the caller's ran: not its failure
                why = result.stderr.strip().splitlines()[-1:] or [f"exit {result.exit_code}"]
                result = replace(result, launch_error=f"the sandbox did not start: {why[0]}")
        finally:
            launch.close()
        return result


def _kill(proc: asyncio.subprocess.Process, launch: Launch) -> None:
    """Kill bwrap and its sandbox's pid 1 (`Launch.kill`: a bwrap killed within its first
    milliseconds is waited for until it named its pid 1; this blocks only then)."""
    if proc.returncode is not None:
        return  # reaped: its pid may be another process's by now
    pidfd = os.pidfd_open(proc.pid)
    try:
        launch.kill(pidfd)
    finally:
        os.close(pidfd)


def _handed_over(workspace: Path, mounts: Mounts | None) -> list[Path]:
    """The folders a sandbox's own user must own: the workspace, writable and private mounts."""
    if mounts is None:
        return [workspace]
    return [workspace, *(Path(h) for h, _ in mounts.writable), *map(Path, mounts.private)]


def _watcher(workspace: Path, mounts: Mounts | None, limits: Limits,
             launch: Launch) -> Callable[[], Awaitable[str]] | None:
    """What stops the sandbox once the workspace or a writable mount is past
    `limits.workspace`, or its processes past `limits.memory_total_bytes` (`guard`), or None
    when nothing is watched."""
    if limits.workspace is None and limits.memory_total_bytes is None:
        return None
    folders = {"workspace": workspace}
    for host, inside in mounts.writable if mounts else ():
        folders[f"writable folder {inside}"] = Path(host)
    return lambda: guard.watch(folders, limits.workspace, pid_one=launch.pid_one,
                               memory_bytes=limits.memory_total_bytes)


def launcher(limits: Limits, wall_s: float) -> list[str]:
    """The argv prefix that starts bwrap under util-linux `prlimit`: memory, CPU time, file
    size (and, as root, the process count; see the module docstring). Not a `preexec_fn`, which
    would make Python fork the whole (large) host process where `prlimit` lets it use vfork."""
    values = [f"--as={limits.memory_bytes}", f"--cpu={limits.cpu_seconds(wall_s)}",
              f"--fsize={limits.file_bytes}"]
    if as_root():
        values.append(f"--nproc={limits.processes}")
    return [_tool("prlimit"), *values, "--"]


def _extra(mounts: Mounts | None) -> list[str]:
    """bwrap arguments for `mounts`, after `/tmp` so a folder under `/tmp` shows through."""
    if mounts is None:
        return []
    args: list[str] = []
    made: set[str] = set()
    pairs = [(os.path.realpath(p), os.path.realpath(p), "--ro-bind")
             for p in (*mounts.read_only, *mounts.private)]
    pairs += [(os.path.realpath(host), inside, "--bind") for host, inside in mounts.writable]
    for source, target, how in pairs:
        args += _parents(target, made) + [how, source, target]
    return args


def _namespaces() -> list[str]:
    """Namespaces, and the capabilities the start shim needs (CAP_SYS_ADMIN to bound the
    tmpfs mounts, and what `setpriv` needs to drop every capability before the command)."""
    if as_root():  # see the module docstring: the command drops to a uid of its own instead
        return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                "--cap-add", "CAP_SETPCAP", "--cap-add", "CAP_SYS_ADMIN"]
    return ["--unshare-all", "--unshare-user", "--cap-add", "CAP_SETPCAP",
            "--cap-add", "CAP_SYS_ADMIN"]


def _bound_tmpfs(limits: Limits) -> str:
    """Shell commands that remount the private tmpfs mounts with an inode bound (bwrap gave
    them their size). `--options-mode=ignore`: libmount would otherwise pass the options it
    reads back from the mount table again, which a user namespace may not map."""
    mount = _tool("mount")
    options = f"remount,nosuid,nodev,nr_inodes={limits.tmp_files}"
    return " && ".join(f"{mount} --options-mode=ignore -o {options} {folder}"
                       for folder in ("/tmp", "/dev/shm"))


def _tool(name: str) -> str:
    """util-linux's `name` as the sandbox sees it (probe reports when it is missing)."""
    found = shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin")
    return found or f"/usr/bin/{name}"
