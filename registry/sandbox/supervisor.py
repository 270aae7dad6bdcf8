"""The supervisor of a bwrap sandbox session: it runs *inside* the sandbox, never on the host.

`BwrapSandbox.session` starts it once per session as `python -I -S -c <this file's source>`
(the project's interpreter, already bound read-only), as the sandbox's only process besides
bwrap's own pid 1. It reads one JSON request per line on stdin,
`{"id": n, "argv": [...], "timeout": seconds, "cap": characters}`, runs `argv` in its own
session and process group (stdin `/dev/null`, stdout and stderr into unlinked files in the
private `/tmp`, which its size limit caps), kills the group at the timeout, and writes one JSON
line back: `{"id": n, "exit": code or null, "out": tail, "err": tail, "timed_out": bool}`.
EOF on stdin ends it, and with it bwrap and every process of the namespace.

Only the standard library, and nothing that imports slowly: the session pays its start once.
Commands run as the same user as the supervisor, so one can kill or confuse it; the host treats
any missing, late or malformed answer as the end of the session (`SessionEnded`).
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys

_NOT_FOUND, _CANNOT_RUN = 127, 126  # what a shell answers for a command it cannot start


def _tail(fd: int, cap: int) -> str:
    """The last `cap` characters written to the file `fd`."""
    size = os.lseek(fd, 0, os.SEEK_END)
    os.lseek(fd, max(0, size - cap * 4), os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    text = b"".join(chunks).decode("utf-8", "replace")
    return text[-cap:] if len(text) > cap else text


def _wait(pid: int, timeout: float) -> tuple[int | None, bool]:
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
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    _, status = os.waitpid(pid, 0)
    return (None if timed_out else os.waitstatus_to_exitcode(status)), timed_out


def run(request: dict[str, object]) -> dict[str, object]:
    """Run one request's command; the answer to send back."""
    argv = [str(a) for a in request["argv"]]  # type: ignore[attr-defined]
    timeout = float(request["timeout"])  # type: ignore[arg-type]
    cap = int(request["cap"])  # type: ignore[call-overload]
    out = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600)
    err = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600)
    try:
        try:
            pid = os.posix_spawnp(argv[0], argv, os.environ, setsid=True, file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out, 1), (os.POSIX_SPAWN_DUP2, err, 2)])
        except OSError as exc:
            return {"exit": _NOT_FOUND if isinstance(exc, FileNotFoundError) else _CANNOT_RUN,
                    "out": "", "err": f"{argv[0]}: {exc.strerror}", "timed_out": False}
        code, timed_out = _wait(pid, timeout)
        return {"exit": code, "out": _tail(out, cap), "err": _tail(err, cap),
                "timed_out": timed_out}
    finally:
        os.close(out)
        os.close(err)


def main() -> None:
    """Answer requests until stdin ends."""
    for line in sys.stdin.buffer:
        request = json.loads(line)
        try:
            answer = run(request)
        except Exception as exc:  # e.g. no file descriptor left: this command fails, not all
            answer = {"exit": _CANNOT_RUN, "out": "", "err": f"sandbox supervisor: {exc}",
                      "timed_out": False}
        answer["id"] = request.get("id")
        sys.stdout.buffer.write(json.dumps(answer, ensure_ascii=False).encode("utf-8", "replace")
                                + b"\n")
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
