"""What a sandboxed command can make the host hold outside its workspace is bounded (issue 37,
hole 10): the private `/tmp` and `/dev/shm` in files as well as bytes (a tmpfs inode is host
kernel memory nothing reclaims: 400,000 empty files in `/tmp` held ~400 MiB), and the tmpfs
mounts bwrap builds the sandbox from (its root, `/dev`) read-only. As a normal user those were
writable and unbounded (800 MiB in `/dev/shm` from one check); as root `/dev/shm` was not
writable at all, so a check's `multiprocessing.Lock()` failed. System V IPC objects, which
outlive every process of the sandbox and cannot be sized, cannot be made (a check held 2 GiB in
shared memory segments).

Skipped without bubblewrap; failed under HUBSKILLS_REQUIRE_SANDBOX=1 (CI).
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from sandbox_required import bwrap_sandbox

from registry.sandbox import BwrapSandbox, Limits, SessionEnded
from registry.sandbox.tree import WorkspaceBounds

MIB = 2**20
# Fills `folder` with files (of `size` bytes) until the first OSError or `most` files; prints
# what it made and the error's name as JSON. `most` only keeps a broken bound from running on.
FILL = textwrap.dedent("""
    import errno, json, os, sys
    def fill(folder, most, size):
        made, error, chunk = 0, None, b"x" * size
        try:
            for i in range(most):
                with open(os.path.join(folder, "f%d" % i), "wb") as handle:
                    handle.write(chunk)
                made += 1
        except OSError as exc:
            error = errno.errorcode.get(exc.errno, str(exc.errno))
        return {"made": made, "error": error}
    print(json.dumps({f"{folder} {size}": fill(folder, int(most), int(size))
                      for folder, most, size in zip(*[iter(sys.argv[1:])] * 3)}))
""")


@pytest.fixture
def sandbox() -> BwrapSandbox:
    return bwrap_sandbox()


def python(sandbox: BwrapSandbox, workspace: Path, code: str, *args: str,
           limits: Limits | None = None) -> str:
    """Run `code` with the project's Python in the sandbox; its stdout (it must exit 0)."""
    result = asyncio.run(sandbox.run([sys.executable, "-I", "-c", code, *args], workspace,
                                     limits=limits or Limits(wall_s=120)))
    assert result.exit_code == 0 and not result.launch_error, result
    return result.stdout


def fills(sandbox: BwrapSandbox, workspace: Path, *plan: tuple[str, int, int],
          limits: Limits | None = None) -> dict[str, dict]:
    """{"<folder> <size>": {"made": files made, "error": what stopped it}} for each
    (folder, most files, bytes each) of `plan`, in one sandbox."""
    args = [str(part) for step in plan for part in step]
    return json.loads(python(sandbox, workspace, FILL, *args, limits=limits))


def test_tmp_is_bounded_in_files_as_well_as_bytes(sandbox, tmp_path):
    bound = Limits().tmp_files
    [empty] = fills(sandbox, tmp_path, ("/tmp", 5 * bound, 0)).values()
    assert empty["error"] == "ENOSPC" and bound - 10 <= empty["made"] < bound, empty
    [big] = fills(sandbox, tmp_path, ("/tmp", 1000, MIB)).values()  # and bytes, as before
    assert big["error"] == "ENOSPC" and big["made"] <= Limits().file_bytes // MIB, big


def test_dev_shm_is_private_small_and_bounded_in_files(sandbox, tmp_path):
    limits = Limits(wall_s=120)
    [big] = fills(sandbox, tmp_path, ("/dev/shm", 1000, MIB)).values()
    assert big["error"] == "ENOSPC" and 0 < big["made"] <= limits.shm_bytes // MIB, big
    [empty] = fills(sandbox, tmp_path, ("/dev/shm", 5 * limits.tmp_files, 0)).values()
    assert empty["error"] == "ENOSPC" and empty["made"] < limits.tmp_files, empty
    marker = f"hubskills-shm-{uuid.uuid4().hex}"
    python(sandbox, tmp_path, f"open('/dev/shm/{marker}', 'w').write('inside')")
    assert not Path("/dev/shm", marker).exists()  # the host's is another one


def test_the_bounds_follow_the_limits(sandbox, tmp_path):
    limits = Limits(wall_s=120, tmp_files=300, shm_bytes=4 * MIB)
    seen = fills(sandbox, tmp_path, ("/tmp", 5000, 0), ("/dev/shm", 100, MIB),
                 limits=limits)
    assert seen["/tmp 0"]["error"] == "ENOSPC" and 290 <= seen["/tmp 0"]["made"] < 300
    assert seen[f"/dev/shm {MIB}"]["error"] == "ENOSPC"
    assert 2 <= seen[f"/dev/shm {MIB}"]["made"] <= 4


def test_python_multiprocessing_works_in_a_check(sandbox, tmp_path):
    code = textwrap.dedent("""
        import multiprocessing
        from multiprocessing import shared_memory
        lock = multiprocessing.Lock()  # a POSIX semaphore: a file in /dev/shm
        with lock:
            memory = shared_memory.SharedMemory(create=True, size=MIB)
            memory.buf[:2] = b"ok"
            print(bytes(memory.buf[:2]).decode())
            memory.close()
            memory.unlink()
        with multiprocessing.Pool(2) as pool:
            print(sum(pool.map(abs, [-1, -2, -3])))
    """).replace("MIB", str(MIB))
    assert python(sandbox, tmp_path, code).split() == ["ok", "6"]


def test_nothing_but_tmp_dev_shm_and_the_workspace_is_writable(sandbox, tmp_path):
    # bwrap builds the sandbox's root and /dev as tmpfs mounts owned by a normal user's
    # sandbox: unbounded, had they stayed writable
    folders = ["/", "/etc", "/dev", "/dev/pts", "/usr", "/proc", str(Path(sys.prefix))]
    code = textwrap.dedent("""
        import json, os, sys
        made = []
        for folder in sys.argv[1:]:
            try:
                with open(os.path.join(folder, "hubskills-probe"), "w"):
                    made.append(folder)
            except OSError:
                pass
        print(json.dumps(made))
    """)
    assert json.loads(python(sandbox, tmp_path, code, *folders, "/tmp", "/dev/shm",
                             "/workspace")) == ["/tmp", "/dev/shm", "/workspace"]


def test_the_command_holds_no_capability_and_cannot_lift_the_bounds(sandbox, tmp_path):
    # the start shim remounts /tmp and /dev/shm with CAP_SYS_ADMIN; the command must not
    # inherit it, nor get it back in a user namespace of its own
    code = textwrap.dedent("""
        import ctypes, json, os, subprocess
        caps = {line.split(":")[0]: int(line.split()[1], 16)
                for line in open("/proc/self/status") if line.startswith("Cap")}
        libc = ctypes.CDLL(None, use_errno=True)
        remount = 32 | 2 | 4  # MS_REMOUNT | MS_NOSUID | MS_NODEV
        direct = libc.mount(b"tmpfs", b"/tmp", b"tmpfs", remount, b"nr_inodes=0")
        nested = subprocess.run(["unshare", "-r", "-m", "mount", "--options-mode=ignore",
                                 "-o", "remount,nr_inodes=0", "/tmp"], capture_output=True)
        print(json.dumps({"caps": caps, "direct": direct, "nested": nested.returncode,
                          "files": os.statvfs("/tmp").f_files}))
    """)
    seen = json.loads(python(sandbox, tmp_path, code))
    assert seen["caps"] == {"CapInh": 0, "CapPrm": 0, "CapEff": 0, "CapBnd": 0, "CapAmb": 0}
    assert seen["direct"] == -1 and seen["nested"] != 0
    assert seen["files"] == Limits().tmp_files


def test_an_agent_sessions_tmp_is_bounded_too(sandbox, tmp_path):
    bound = Limits().tmp_files

    async def go():
        async with sandbox.session(tmp_path, limits=Limits(wall_s=120)) as session:
            return await session.run([sys.executable, "-I", "-c", FILL, "/tmp", str(5 * bound),
                                      "0", "/dev/shm", "1000", str(MIB)])

    result = asyncio.run(go())
    assert result.exit_code == 0, result
    seen = json.loads(result.stdout)
    assert seen["/tmp 0"]["error"] == "ENOSPC" and seen["/tmp 0"]["made"] < bound
    assert seen[f"/dev/shm {MIB}"]["error"] == "ENOSPC"


def test_files_added_without_end_to_the_workspace_stop_the_session(sandbox, tmp_path):
    # the workspace is a host folder (a tmpfs too where the system's temp folder is one): its
    # file count is bounded by the walks of `guard`, which stop the sandbox once past it
    limits = Limits(wall_s=600, workspace=WorkspaceBounds(entries=2_000))

    async def go():
        async with sandbox.session(tmp_path, limits=limits) as session:
            await session.run([sys.executable, "-I", "-c", FILL, "/workspace", "10000000",
                               "0"])

    with pytest.raises(SessionEnded, match="more than 2,000 files and folders"):
        asyncio.run(go())
    assert len(list(tmp_path.iterdir())) < 10_000_000


def test_no_system_v_ipc_object_can_be_made(sandbox, tmp_path):
    # a segment stays allocated after every process detached: 256 MiB at a time under the
    # address-space limit, as many times as the check likes, held until the sandbox ends
    code = textwrap.dedent("""
        import ctypes, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        made = {}
        for name, call in (("shmget", lambda: libc.shmget(0, 256 << 20, 0o1600)),
                           ("semget", lambda: libc.semget(0, 1, 0o1600)),
                           ("msgget", lambda: libc.msgget(0, 0o1600))):
            made[name] = [call(), os.strerror(ctypes.get_errno())]
        print(json.dumps(made))
    """)
    made = json.loads(python(sandbox, tmp_path, code))
    assert made == {name: [-1, "Operation not permitted"]
                    for name in ("shmget", "semget", "msgget")}, made


def test_the_kernel_keyring_is_out_of_reach(sandbox, tmp_path):
    """bwrap keeps the starting process's session keyring: a check read a secret from it,
    wrote into it and passed a key to the next sandbox (a red-team walk). No keyring call is
    allowed."""
    code = textwrap.dedent("""
        import ctypes, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        made = {}
        for name, call in (
                ("add_key", lambda: libc.syscall(248, b"user", b"probe", b"x", 1, -3)),
                ("keyctl", lambda: libc.syscall(250, 0, -3, 0))):  # get the session keyring
            made[name] = [call(), os.strerror(ctypes.get_errno())]
        print(json.dumps(made))
    """)
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("the probe uses x86_64 system call numbers")
    made = json.loads(python(sandbox, tmp_path, code))
    assert made == {name: [-1, "Operation not permitted"] for name in ("add_key", "keyctl")}, made


def test_no_user_namespace_of_its_own_so_no_unbounded_tmpfs(sandbox, tmp_path):
    """A red-team note: in a user namespace of its own a check held every capability over a
    mount namespace of its own, and mounted a fresh tmpfs over /tmp: 12 GiB of host memory on
    a 24 GiB machine, past every bound. `unshare` and `clone` with CLONE_NEWUSER fail; threads,
    processes and `clone3`'s callers (which fall back to `clone`) still work."""
    code = textwrap.dedent("""
        import ctypes, json, os, subprocess, threading
        libc = ctypes.CDLL(None, use_errno=True)
        seen = {"unshare": [libc.unshare(0x10000000), os.strerror(ctypes.get_errno())]}
        tool = subprocess.run(["unshare", "-Urm", "sh", "-c", "mount -t tmpfs none /tmp"],
                              capture_output=True, text=True)
        seen["tool"] = [tool.returncode, "Operation not permitted" in tool.stderr]
        done = []
        thread = threading.Thread(target=lambda: done.append(1))
        thread.start(); thread.join()
        seen["thread"] = done
        seen["child"] = subprocess.run(["sh", "-c", "echo ok"], capture_output=True,
                                       text=True).stdout.strip()
        print(json.dumps(seen))
    """)
    seen = json.loads(python(sandbox, tmp_path, code))
    assert seen["unshare"] == [-1, "Operation not permitted"], seen
    assert seen["tool"] == [1, True] and seen["thread"] == [1] and seen["child"] == "ok"


def test_no_memory_file_outside_the_bounded_mounts(sandbox, tmp_path):
    """A red-team walk: `memfd_create` files live on the kernel's internal tmpfs, bounded by
    nothing but the file-size limit, and a page written to one with `write` (never mapped) is
    in no process's `Pss`, so the memory guard never saw it: a check held 384 MiB that way
    under a 256 MiB bound, and 20,000 descriptors x 256 MiB per process could take the host
    down. It cannot make one (ENOSYS: what a kernel without them answers, so callers fall back);
    `/dev/shm` (bounded) stays for shared memory."""
    code = textwrap.dedent("""
        import errno, json, os
        held, error = 0, None
        try:
            for _ in range(3):
                fd = os.memfd_create("held")
                for _ in range(128):
                    held += os.write(fd, b"x" * (1 << 20))
        except OSError as exc:
            error = errno.errorcode.get(exc.errno, str(exc.errno))
        print(json.dumps({"held": held >> 20, "error": error}))
    """)
    limits = Limits(wall_s=120, memory_total_bytes=256 * MIB)
    seen = json.loads(python(sandbox, tmp_path, code, limits=limits))
    assert seen == {"held": 0, "error": "ENOSYS"}, seen
