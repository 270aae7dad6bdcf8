"""The one system-call filter the bwrap sandbox installs: no System V IPC objects, no keyring,
no user namespace of the command's own, no memory files.

A sandbox has an IPC namespace of its own, and the objects made in it live until it ends, held
by no process: a shared memory segment stays allocated after every process detached from it
(one check held 2 GiB of host memory that way, 256 MiB at a time under its 1 GiB address-space
limit), and message queues and semaphore sets are kernel memory too, up to limits far past any
host's (32,000 queues of 16 KiB, 32,000 sets). Unlike `/dev/shm`, nothing here can be sized:
the namespace's limits are sysctls that only its root may write, and a normal user's sandbox
has no root. So making one fails with EPERM (`shmget`, `semget`, `msgget`, and the i386 `ipc`
multiplexer); POSIX shared memory and semaphores, which Python's `multiprocessing` uses, are
files in the bounded `/dev/shm` and work.

Nor the kernel keyring (`add_key`, `request_key`, `keyctl`): bwrap keeps the session keyring
of the process that started hubskills, so a check could read a login keyring's secrets, write
into it, or pass a key from one sandbox to the next (a red-team walk did all three).

Nor a user namespace of its own (`unshare` or `clone` with `CLONE_NEWUSER`; `clone3`, whose
flags a filter cannot read, answers ENOSYS, and C libraries then fall back to `clone`). Inside
one a command holds every capability over mounts it makes: a red-team note mounted a fresh
tmpfs over `/tmp` that way, 12 GiB on a 24 GiB machine, past every bound above (`/tmp`'s bytes
and files, the address-space limit, which tmpfs pages do not count against).

Nor a memory file (`memfd_create`, which answers ENOSYS, as on a kernel without it, so callers
fall back). Its pages live on the kernel's internal tmpfs, which no size or file bound covers
(the file-size limit bounds each file, not their number), and a page written with `write`
and never mapped is in no process's `Pss`, so the memory guard (`guard`) never counts it: a
red-team walk held 384 MiB that way under a 256 MiB bound, and 20,000 descriptors of 256 MiB
each per process would take the host down. Shared memory goes through `/dev/shm`, bounded.

`program()` is the classic BPF program bwrap loads with `--seccomp FD`, for this machine's
architecture and its compat one; None on an architecture without a table here (no filter).
"""

from __future__ import annotations

import errno
import platform
import struct

# audit architecture: the denied system calls' numbers (IPC objects, then the kernel keyring's
# add_key, request_key, keyctl)
_X86_64 = {0xC000003E: (29, 64, 68, 248, 249, 250,
                        *(0x40000000 | n for n in (29, 64, 68, 248, 249, 250))),  # and x32
           0x40000003: (117, 393, 395, 399, 286, 287, 288)}  # i386: ipc, semget, shmget, msgget
_GENERIC = (194, 190, 186, 217, 218, 219)  # shmget, semget, msgget on the asm-generic table
_ARM32 = (307, 299, 303, 309, 310, 311)
TABLES: dict[str, dict[int, tuple[int, ...]]] = {"x86_64": _X86_64, "amd64": _X86_64,
          "aarch64": {0xC00000B7: _GENERIC, 0x40000028: _ARM32},  # and arm32
          "arm64": {0xC00000B7: _GENERIC, 0x40000028: _ARM32},
          "riscv64": {0xC00000F3: _GENERIC}}
# audit architecture: (unshare, clone, clone3) numbers; the flags are clone's and unshare's
# first argument on each of these
_X32 = 0x40000000
NAMESPACE_CALLS: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {
    0xC000003E: ((272, 56, _X32 | 272, _X32 | 56), (435, _X32 | 435)),  # x86_64 and x32
    0x40000003: ((310, 120), (435,)),  # i386
    0xC00000B7: ((97, 220), (435,)),  # aarch64 (asm-generic)
    0x40000028: ((337, 120), (435,)),  # arm32
    0xC00000F3: ((97, 220), (435,)),  # riscv64 (asm-generic)
}
CLONE_NEWUSER = 0x10000000
# audit architecture: memfd_create's numbers (answered ENOSYS)
MEMORY_FILE_CALLS: dict[int, tuple[int, ...]] = {
    0xC000003E: (319, _X32 | 319), 0x40000003: (356,), 0xC00000B7: (279,),
    0x40000028: (385,), 0xC00000F3: (279,),
}

_LD_ABS, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, |JSET|K, RET
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (the first argument's low word)
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_Step = tuple[int | str, int | str, int | str, int]  # an instruction, or a label (op a string)


def program(machine: str | None = None) -> bytes | None:
    """The filter for `machine` (this one's by default) as bwrap reads it, or None."""
    table = TABLES.get((machine or platform.machine()).lower())
    if table is None:
        return None
    # (op, jump if true, jump if false, k), a jump to a label resolved below: "deny" (EPERM),
    # "nosys" (ENOSYS) or "flags" (the namespace flags of this architecture's block)
    code: list[_Step] = []
    for index, (arch, numbers) in enumerate(table.items()):
        flags, skip = f"flags{index}", f"arch{index + 1}"
        namespaced, unreadable = NAMESPACE_CALLS.get(arch, ((), ()))
        code += [(_LD_ABS, 0, 0, _ARCH), (_JEQ, 0, skip, arch), (_LD_ABS, 0, 0, _NR)]
        code += [(_JEQ, "deny", 0, nr) for nr in numbers]
        code += [(_JEQ, "nosys", 0, nr) for nr in (*unreadable, *MEMORY_FILE_CALLS.get(arch, ()))]
        code += [(_JEQ, flags, 0, nr) for nr in namespaced]
        code += [(_RET, 0, 0, _ALLOW), (flags, 0, 0, 0),  # a label
                 (_LD_ABS, 0, 0, _ARG0), (_JSET, "deny", 0, CLONE_NEWUSER), (_RET, 0, 0, _ALLOW),
                 (skip, 0, 0, 0)]
    code += [(_RET, 0, 0, _ALLOW), ("deny", 0, 0, 0), (_RET, 0, 0, _ERRNO | errno.EPERM),
             ("nosys", 0, 0, 0), (_RET, 0, 0, _ERRNO | errno.ENOSYS)]
    return _assemble(code)


def _assemble(code: list[_Step]) -> bytes:
    """Classic BPF from instructions and labels (an instruction whose op is a string names
    the place of the next one; a jump to a label is made relative, as BPF's jumps are)."""
    places: dict[str, int] = {}
    ops: list[tuple[int, int | str, int | str, int]] = []  # instructions, labels resolved
    for op, true, false, k in code:
        if isinstance(op, str):
            places[op] = len(ops)
        else:
            ops.append((op, true, false, k))

    def offset(at: int, jump: int | str) -> int:
        return jump if isinstance(jump, int) else places[jump] - at - 1

    return b"".join(struct.pack("=HBBI", op, offset(i, true), offset(i, false), k)
                    for i, (op, true, false, k) in enumerate(ops))
