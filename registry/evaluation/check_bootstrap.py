"""The program a `python` check runs in the sandbox: `python -I -c <this file's text>`.

Its first act, before it reads its input or runs anything it was given, is to write `STARTED`
on its stdout. A check whose stdout lacks that line never started (its interpreter could not
run there): a check error, which no model output and no check code can cause, since neither
had run. Nothing that runs later can take the line back either: the check's code (and what it
runs, the model's code included) runs in a forked child whose stdout is its stderr, and this
process first makes itself non-dumpable, so the child cannot reach its descriptors through
`/proc` or ptrace. The child sends its verdict over a pipe; this process prints it as its last
line, or, when none came (the child was killed or crashed), exits with the child's status.
"""

import os

STARTED = "hubskills: the check started"
_VERDICT_BYTES = 1 << 16  # a verdict's reason is cut to 1,000 characters: far below this


def _undumpable() -> None:
    """PR_SET_DUMPABLE 0: a process of the same user cannot open our /proc fds or trace us."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (ImportError, OSError, AttributeError):  # no ctypes here: the guard is weaker
        pass


def _run_check(pipe: int) -> None:
    """In the child: run `check(output, files)` and send its verdict on `pipe`."""
    import json
    import sys

    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        data = json.loads(sys.stdin.buffer.read())
        namespace: dict = {"__name__": "__check__"}  # the check's globals: anything
        exec(compile(data["code"], "<check>", "exec"), namespace)
        verdict = namespace["check"](data["output"], data["files"])
        if isinstance(verdict, tuple) and len(verdict) == 2:
            result = {"passed": bool(verdict[0]), "reason": str(verdict[1])[:1000]}
        elif isinstance(verdict, bool):
            result = {"passed": verdict, "reason": ""}
        else:
            result = {"passed": False, "reason": f"check() returned {verdict!r}, "
                      "expected a bool or (bool, reason)"}
    except BaseException as exc:  # noqa: BLE001 - any failure of the check is its verdict
        result = {"passed": False, "reason": f"{type(exc).__name__}: {exc}"[:1000]}
    sys.stderr.flush()
    os.write(pipe, json.dumps(result).encode())
    os._exit(0)


def _verdict(data: bytes) -> str | None:
    """The child's verdict as one JSON line, or None when it sent no valid one."""
    import json

    try:
        result = json.loads(data)
        passed, reason = result["passed"], result["reason"]
    except (ValueError, TypeError, KeyError):
        return None
    if not isinstance(passed, bool) or not isinstance(reason, str):
        return None
    return json.dumps({"passed": passed, "reason": reason[:1000]})


def main() -> None:
    """Mark the start, run the check in a child, print its verdict."""
    os.write(1, (STARTED + "\n").encode())
    _undumpable()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read)
        _run_check(write)
    os.close(write)
    data = b""
    while len(data) < _VERDICT_BYTES and (chunk := os.read(read, _VERDICT_BYTES)):
        data += chunk
    os.close(read)
    status = os.waitpid(child, 0)[1]
    verdict = _verdict(data)
    if verdict is None:
        code = os.waitstatus_to_exitcode(status)
        os.write(2, f"\nthe check process ended without a verdict ({code})\n".encode())
        os._exit(128 - code if code < 0 else code or 1)
    os.write(1, ("\n" + verdict + "\n").encode())


if __name__ == "__main__":
    main()
