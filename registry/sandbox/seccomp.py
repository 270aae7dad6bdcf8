"""The one system-call filter the bwrap sandbox installs: no System V IPC objects, no keyring.

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

_LD_ABS, _JEQ, _RET = 0x20, 0x15, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000


def program(machine: str | None = None) -> bytes | None:
    """The filter for `machine` (this one's by default) as bwrap reads it, or None."""
    table = TABLES.get((machine or platform.machine()).lower())
    if table is None:
        return None
    # (op, jump if true, jump if false, k); a jump of None goes to the deny at the end
    code: list[tuple[int, int | None, int, int]] = []
    for arch, numbers in table.items():
        block: list[tuple[int, int | None, int, int]] = [(_LD_ABS, 0, 0, _NR)]
        block += [(_JEQ, None, 0, nr) for nr in numbers]
        block += [(_RET, 0, 0, _ALLOW)]
        code += [(_LD_ABS, 0, 0, _ARCH), (_JEQ, 0, len(block), arch), *block]
    code += [(_RET, 0, 0, _ALLOW), (_RET, 0, 0, _ERRNO | errno.EPERM)]
    deny = len(code) - 1
    return b"".join(struct.pack("=HBBI", op, deny - i - 1 if jt is None else jt, jf, k)
                    for i, (op, jt, jf, k) in enumerate(code))
