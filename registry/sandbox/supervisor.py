"""The supervisor of a bwrap sandbox session: it runs *inside* the sandbox, never on the host.

`BwrapSandbox.session` starts it once per session as `python -I -S -c <this file's source>`
(the project's interpreter, already bound read-only), as the sandbox's only process besides
bwrap's own pid 1. Per command it reads a request from stdin,

    b"<id> <timeout seconds> <output cap bytes> <n>\\n" + n bytes: the argv, NUL-separated

runs the argv in its own session and process group (stdin `/dev/null`, stdout and stderr into
unlinked files in the private `/tmp`, which its size limit caps), kills the group at the
timeout, and once none of the group is left answers

    b"<id> <exit code, or - when killed at the timeout> <timed out 0|1> <o> <e>\\n"
    + the last o bytes of stdout + the last e bytes of stderr (each at most the cap).

EOF on stdin ends it, and with it bwrap and every process of the namespace.

Only built-in modules, since the session pays this start once per sample: `json` alone would
double it (it compiles regular expressions), and `signal` (its enums) adds 5 ms of CPU to 8.
Commands run as the same user as the supervisor, so one can kill or confuse it; the host
checks every answer's shape and treats a missing, late or malformed one as the end of the
session.
"""

import os
import select
import sys

NOT_FOUND, CANNOT_RUN = 127, 126  # what a shell answers for a command it cannot start
SIGKILL = 9  # on Linux, the only system bwrap runs on (no `signal`: see above)
STDIN = (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0)


def tail(fd: int, cap: int) -> bytes:
    """The last `cap` bytes written to the file `fd`."""
    size = os.lseek(fd, 0, os.SEEK_END)
    os.lseek(fd, max(0, size - cap), os.SEEK_SET)
    chunks = []
    while len(chunk := os.read(fd, 1 << 20)) > 0:
        chunks.append(chunk)
    return b"".join(chunks)[-cap:]


def wait(pid: int, timeout: float) -> tuple[int | None, bool]:
    """(exit code, timed out) of `pid`; at the timeout its whole process group is killed."""
    pidfd = os.pidfd_open(pid)
    try:
        poll = select.poll()
        poll.register(pidfd, select.POLLIN)
        timed_out = not poll.poll(max(0, int(timeout * 1000)))
    finally:
        os.close(pidfd)
    if timed_out:
        try:
            os.killpg(pid, SIGKILL)
        except OSError:
            pass
    status = os.waitpid(pid, 0)[1]
    if timed_out:
        gone(pid)
    return (None if timed_out else os.waitstatus_to_exitcode(status)), timed_out


def gone(group: int, patience_ms: int = 5000) -> None:
    """Wait until no process of `group` is left: SIGKILL only marks a process, which dies when
    it next runs (on a busy machine, after the answer and the next command have), and an
    orphan counts until the namespace's pid 1 reaps it. Killed again at each step, for at most
    `patience_ms` milliseconds (a process stuck in the kernel is left)."""
    pause = select.poll()
    for _ in range(patience_ms):
        try:
            os.killpg(group, SIGKILL)
        except OSError:  # ESRCH: none is left
            return
        pause.poll(1)


def run(argv: list[bytes], timeout: float, cap: int) -> tuple[int | None, bool, bytes, bytes]:
    """(exit code, timed out, stdout tail, stderr tail) of one command."""
    out = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600)
    err = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600)
    try:
        try:
            pid = os.posix_spawnp(argv[0], argv, os.environ, setsid=True, file_actions=[
                STDIN, (os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, err, 2)])
        except OSError as exc:
            failed = NOT_FOUND if isinstance(exc, FileNotFoundError) else CANNOT_RUN
            return failed, False, b"", os.fsencode(f"{os.fsdecode(argv[0])}: {exc.strerror}\n")
        code, timed_out = wait(pid, timeout)
        return code, timed_out, tail(out, cap), tail(err, cap)
    finally:
        os.close(out)
        os.close(err)


def main() -> None:
    """Answer requests until stdin ends."""
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    while header := requests.readline():
        ident, timeout, cap, size = header.split()
        argv = requests.read(int(size)).split(b"\0")
        try:
            code, timed_out, out, err = run(argv, float(timeout), int(cap))
        except Exception as exc:  # e.g. no file descriptor left: this command fails, not all
            code, timed_out, out, err = CANNOT_RUN, False, b"", os.fsencode(f"supervisor: {exc}\n")
        shown = b"-" if code is None else b"%d" % code
        answers.write(b"%s %s %d %d %d\n" % (ident, shown, timed_out, len(out), len(err)))
        answers.write(out + err)
        answers.flush()


if __name__ == "__main__":
    main()
