"""The check engine: grade one model output against a case's checks and assertions.

Deterministic checks run in-process; `python` and `exec` checks run in a fresh subprocess in a
throw-away folder holding only the files the model wrote (memory and file-size caps, a timeout
that kills the whole process group, an environment without secrets or proxies); `judge` checks
and the case's plain-language assertions go through the eval engine's `judge` function.

Verdicts: `passed` is True/False; None with `skipped=True` means the check could not run here
(a missing tool, no judge model) and is left out of the score; None with `skipped=False` means
the judge errored, which makes the whole case an error (`case_score` returns passed=None).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import signal
import sys
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from registry.errors import HubskillsError
from registry.format import checks_schema as cs
from registry.format.markdown import fenced_blocks
from registry.format.suite import Case

if sys.platform != "win32":
    import resource

JudgeFn = Callable[[str, str, str], Awaitable[tuple[bool, str]]]
"""(rubric, prompt, output) -> (passed, reason); supplied by the eval engine."""

MEMORY_LIMIT = 1 << 30  # bytes of address space per sandboxed process
FILE_SIZE_LIMIT = 256 << 20  # largest file (stdout included) a sandboxed process may write
_TAIL = 1500  # characters of stdout/stderr kept in a reason
_MAX_NAME = 200
_MAX_LINE = 300  # longest info string or label line searched for a file name


@dataclass(frozen=True)
class CheckResult:
    """One graded check: `passed` None means skipped (if `skipped`) or an error."""

    type: str
    label: str
    passed: bool | None
    reason: str
    weight: float
    skipped: bool = False


class _Skipped(Exception):
    """Raised by a runner when its check cannot run in this environment."""


@dataclass
class _Context:
    case: Case
    output: str
    judge: JudgeFn | None
    sandbox_root: Path | None
    files: dict[str, str]


# --- files the model produced ---------------------------------------------------------------

_NAME = r"[\w.+@~/\\-]*[./\\][\w.+@~/\\-]*"  # a path-like token: has a dot or a slash
_INFO_ATTR = re.compile(r"\b(?:title|file(?:name)?|name|path)\s*=\s*[\"']?([^\"'\s}]+)")
_INFO_NAME = re.compile(rf"^(?:[\w+#-]+[\s:]+)?({_NAME})(?:\s|$)")
_LABEL = re.compile(
    rf"^(?:#+\s*)?[*_`]*(?:(?:file(?:name)?|path)\s*:\s*)?[*_`]*({_NAME})[*_`]*:?[*_`]*$", re.I
)
_COMMENT = re.compile(
    rf"^\s*(?://|#|--|/\*|<!--|;)\s*(?:(?:file(?:name)?|path)\s*:\s*)?({_NAME})\s*(?:\*/|-->)?\s*$",
    re.I,
)


def _block_name(info: str, body: str, before: str) -> str | None:
    """The file name a block declares, by the first convention that names one."""
    first = body.split("\n", 1)[0]
    for pattern, text in ((_INFO_ATTR, info), (_INFO_NAME, info), (_LABEL, before),
                          (_COMMENT, first)):
        found = pattern.search(text) if len(text) <= _MAX_LINE else None  # bounds backtracking
        if found:
            return found.group(1)
    return None


def _safe_name(name: str) -> str | None:
    """The normalised relative path, or None for anything that could escape a folder."""
    path = PurePosixPath(name)
    if (
        not name or len(name) > _MAX_NAME or "\\" in name or ":" in name or path.is_absolute()
        or ".." in path.parts or path.name.endswith(".") or any(ord(c) < 32 for c in name)
        or not re.search(r"[^\W_]", name)
    ):
        return None
    return str(path)


def extract_files(output: str) -> dict[str, str]:
    """Files the model wrote as named fenced code blocks; later blocks with a name win.

    A block is named by its info string (```` ```python title="k.cu" ````, ```` ```cuda k.cu
    ````, ```` ```k.cu ````), by the line just before it (``**k.cu**``, ``File: k.cu``,
    ``# k.cu``, ```` `k.cu`: ````) or by a comment on its first line (``// k.cu``,
    ``# file: build.toml``). Absolute names, ``..``, backslashes and names over 200 characters
    are ignored.
    """
    files: dict[str, str] = {}
    for block in fenced_blocks(output):
        name = _block_name(block.info, block.body, block.before)
        safe = _safe_name(name) if name else None
        if safe:
            files[safe] = block.body
    return files


# --- deterministic checks -------------------------------------------------------------------


def _show(values: list[str]) -> str:
    return ", ".join(repr(_clip(v, 60)) for v in values)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _present(
    check: cs.Contains | cs.ContainsAny | cs.NotContains, output: str
) -> tuple[list[str], list[str]]:
    sensitive = check.case_sensitive and check.type != "icontains"
    haystack = output if sensitive else output.casefold()
    found = [v for v in check.values() if (v if sensitive else v.casefold()) in haystack]
    return found, [v for v in check.values() if v not in found]


def _contains(check: cs.Contains, ctx: _Context) -> tuple[bool, str]:
    found, missing = _present(check, ctx.output)
    return (False, f"missing {_show(missing)}") if missing else (True, f"found {_show(found)}")


def _contains_any(check: cs.ContainsAny, ctx: _Context) -> tuple[bool, str]:
    found, missing = _present(check, ctx.output)
    return (True, f"found {_show(found[:1])}") if found else (False, f"none of {_show(missing)}")


def _not_contains(check: cs.NotContains, ctx: _Context) -> tuple[bool, str]:
    found, _ = _present(check, ctx.output)
    return (False, f"found {_show(found)}") if found else (True, "none present")


def _regex(check: cs.Regex | cs.NotRegex, ctx: _Context) -> tuple[bool, str]:
    match = check.compiled().search(ctx.output)
    wanted = check.type == "regex"
    if match:
        return wanted, f"/{check.pattern}/ matched {_clip(match.group(0), 80)!r}"
    return not wanted, f"no match for /{check.pattern}/"


def _equals(check: cs.Equals, ctx: _Context) -> tuple[bool, str]:
    got, want = ctx.output, check.value
    if check.strip:
        got, want = got.strip(), want.strip()
    if not check.case_sensitive:
        got, want = got.casefold(), want.casefold()
    if got == want:
        return True, "equal"
    return False, f"expected {_clip(check.value, 80)!r}, got {_clip(ctx.output, 80)!r}"


def _json(check: cs.JsonCheck, ctx: _Context) -> tuple[bool, str]:
    blocks = fenced_blocks(ctx.output)
    json_blocks = [b.body for b in blocks if b.info.split()[:1] == ["json"]]
    candidates = [ctx.output, *json_blocks[:1], *[b.body for b in blocks[:1]]]
    for text in candidates:
        with suppress(ValueError):
            data = json.loads(text)
            break
    else:
        return False, "no valid JSON in the output or its first fenced block"
    if check.json_schema is None:
        return True, "valid JSON"
    import jsonschema

    validator = jsonschema.validators.validator_for(check.json_schema)(check.json_schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return True, "valid JSON matching the schema"
    return False, f"schema error at {error.json_path}: {error.message}"


# --- sandboxed subprocesses -----------------------------------------------------------------

_BOOTSTRAP = r"""
import json, socket, sys
def _no_network(*args, **kwargs):
    raise OSError("network access is disabled in checks")
for _name in ("connect", "connect_ex", "sendto", "sendmsg"):
    setattr(socket.socket, _name, _no_network)
socket.create_connection = socket.getaddrinfo = _no_network
real_stdout, sys.stdout = sys.stdout, sys.stderr
try:
    data = json.loads(sys.stdin.buffer.read())
    namespace = {"__name__": "__check__"}
    exec(compile(data["code"], "<check>", "exec"), namespace)
    verdict = namespace["check"](data["output"], data["files"])
    if isinstance(verdict, tuple) and len(verdict) == 2:
        result = {"passed": bool(verdict[0]), "reason": str(verdict[1])[:1000]}
    elif isinstance(verdict, bool):
        result = {"passed": verdict, "reason": ""}
    else:
        result = {"passed": False, "reason": f"check() returned {verdict!r}, "
                  "expected a bool or (bool, reason)"}
except BaseException as exc:
    result = {"passed": False, "reason": f"{type(exc).__name__}: {exc}"[:1000]}
real_stdout.write("\n" + json.dumps(result) + "\n")
real_stdout.flush()
"""


def _limit_resources() -> None:  # runs in the child between fork and exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))


def _write_files(work: Path, files: dict[str, str]) -> None:
    root = work.resolve()
    for name, text in files.items():
        target = (root / name).resolve()
        if not target.is_relative_to(root) or target == root:
            continue  # extract_files already refuses such names; never trust it alone
        with suppress(OSError):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")


def _tail(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    return text if len(text) <= _TAIL else "…" + text[-_TAIL:]


@dataclass
class _Run:
    code: int | None  # None: timed out
    stdout: str
    stderr: str


async def _sandboxed(
    argv: list[str], ctx: _Context, timeout: float, stdin: bytes = b""
) -> _Run:
    """Run argv in a fresh temp folder holding the model's files; the folder is then removed."""
    tmp = Path(tempfile.mkdtemp(prefix="hubskills-check-", dir=ctx.sandbox_root))
    try:
        work = tmp / "work"
        work.mkdir()
        _write_files(work, ctx.files)
        (tmp / "stdin").write_bytes(stdin)
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(work),
               "LANG": "C.UTF-8", "TMPDIR": str(tmp), "no_proxy": "*", "NO_PROXY": "*"}
        with (open(tmp / "stdin", "rb") as i, open(tmp / "stdout", "wb") as o,
              open(tmp / "stderr", "wb") as e):
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=i, stdout=o, stderr=e, cwd=work, env=env,
                start_new_session=True, preexec_fn=_limit_resources,
            )
        try:
            code: int | None = await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            code = None
        finally:  # also reaps anything the command left running in the background
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        return _Run(code, _tail(tmp / "stdout"), _tail(tmp / "stderr"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


async def _python(check: cs.PythonCheck, ctx: _Context) -> tuple[bool, str]:
    payload = json.dumps({"code": check.code, "output": ctx.output, "files": ctx.files})
    run = await _sandboxed(
        [sys.executable, "-I", "-c", _BOOTSTRAP], ctx, check.timeout, payload.encode()
    )
    if run.code is None:
        return False, f"timed out after {check.timeout:g}s"
    with suppress(ValueError, IndexError, TypeError, KeyError):
        result = json.loads(run.stdout.strip().splitlines()[-1])
        return bool(result["passed"]), str(result["reason"]) or "check() returned its verdict"
    return False, f"check process exited with code {run.code}: {run.stderr.strip()}"


async def _exec(check: cs.ExecCheck, ctx: _Context) -> tuple[bool, str]:
    try:
        argv = shlex.split(check.command) if isinstance(check.command, str) else check.command
    except ValueError as exc:
        return False, f"invalid command: {exc}"
    if not argv:
        return False, "empty command"
    needed = check.requires or ([] if "/" in argv[0] else [argv[0]])
    missing = [tool for tool in needed if shutil.which(tool) is None]
    if missing:
        raise _Skipped(f"{', '.join(missing)} not found on PATH; check skipped")
    try:
        run = await _sandboxed(argv, ctx, check.timeout)
    except OSError as exc:
        return False, f"could not start {argv[0]}: {exc}"
    if run.code is None:
        return False, f"timed out after {check.timeout:g}s"
    streams = "".join(
        f"; {name}: {text.strip()}" for name, text in (("stdout", run.stdout),
                                                        ("stderr", run.stderr)) if text.strip()
    )
    return run.code == check.expect_exit, f"exit {run.code} (expected {check.expect_exit}){streams}"


# --- judged checks and the driver -----------------------------------------------------------


async def _judged(rubric: str, ctx: _Context) -> tuple[bool | None, str]:
    if ctx.judge is None:
        raise _Skipped("no --judge model given")
    try:
        passed, reason = await ctx.judge(rubric, ctx.case.prompt, ctx.output)
    except HubskillsError as exc:
        return None, f"judge error: {exc}"
    return bool(passed), reason


_RUNNERS: dict[type, Callable[[Any, _Context], Any]] = {
    cs.Contains: _contains, cs.ContainsAny: _contains_any, cs.NotContains: _not_contains,
    cs.Regex: _regex, cs.NotRegex: _regex, cs.Equals: _equals, cs.JsonCheck: _json,
    cs.PythonCheck: _python, cs.ExecCheck: _exec,
    cs.JudgeCheck: lambda check, ctx: _judged(check.rubric, ctx),
}


async def _grade(
    kind: str, label: str, weight: float, runner: Callable[[Any, _Context], Any], subject: Any,
    ctx: _Context,
) -> CheckResult:
    try:
        outcome = runner(subject, ctx)
        passed, reason = await outcome if asyncio.iscoroutine(outcome) else outcome
    except _Skipped as skip:
        return CheckResult(kind, label, None, str(skip), weight, skipped=True)
    return CheckResult(kind, label, passed, reason, weight)


async def run_checks(
    case: Case, output: str, *, judge: JudgeFn | None = None, sandbox_root: Path | None = None
) -> list[CheckResult]:
    """Grade `output` against every check of `case`, then each of its assertions, concurrently.

    Assertions are graded like judge checks with the assertion as the rubric (weight 1, type
    "assertion"). Sandboxed checks use temp folders under `sandbox_root` (the system default
    when None), removed when the check ends. Results come back in check order.
    """
    ctx = _Context(case, output, judge, sandbox_root, extract_files(output))
    jobs = [_grade(c.type, c.label(), c.weight, _RUNNERS[type(c)], c, ctx) for c in case.checks]
    jobs += [_grade("assertion", _clip(a, 80), 1.0, _judged, a, ctx) for a in case.assertions]
    return list(await asyncio.gather(*jobs))


def case_score(results: list[CheckResult]) -> tuple[bool | None, float]:
    """(passed, score) for one case; skipped checks count for neither.

    `passed` is True when every non-skipped check passed, False when one failed, and None when
    every check was skipped or one errored (a judge error: the case is then an error). `score`
    is the weighted share of the checks with a verdict that passed (0.0 when none has one).
    """
    graded = [r for r in results if not r.skipped]
    decided = [r for r in graded if r.passed is not None]
    total = sum(r.weight for r in decided)
    score = sum(r.weight for r in decided if r.passed) / total if total else 0.0
    if not graded or len(decided) < len(graded):
        return None, score
    return all(r.passed for r in decided), score
