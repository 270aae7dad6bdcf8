"""The check engine: grade one model output against a case's checks and assertions.

Deterministic checks run in-process, patterns through RE2 in linear time. `python` and `exec`
checks (code a suite supplies), and patterns RE2 cannot express (a backreference, a lookaround:
Python's `re` may backtrack for minutes), run only through the `Sandbox` the caller passes, in
a fresh workspace holding the case's input files (as bytes) and the files the model wrote; with
no sandbox they are skipped with the caller's reason, never run on the host. `judge` checks and
the case's plain-language assertions go through the eval engine's `judge` function; `pairwise`
checks compare both arms' answers, so they wait (skipped) until the engine pairs the rows
(`pairwise.py`), or `verify` re-reads their stored replies.

Workspace checks (`file_*`, `command`; `workspace_checks.py`) grade the final workspace: the
folder the agent worked in, or in chat mode a temp folder holding the case's input files and the
answer's named fenced blocks, so one suite grades both. `command` follows the code-check policy.

Verdicts: `passed` is True/False; None with `skipped=True` means the check could not run here
(a missing tool, no judge model, no sandbox) and is left out of the score; None with
`skipped=False` is a check error, which makes the whole sample one (`grade_row`: out of both
arms' denominators). A check error is only ever what happened before anything untrusted (the
model's output, the agent's files, the check's own code) could act, so no model can drop its
own failures: the sandbox did not start the command (`SandboxResult.launch_error`), a python
check's interpreter never wrote its start marker (`check_bootstrap`), or the judge's call
failed (`judge.judge_failure`). A check's code raising, a timeout, a memory cap and a judge
reply without a verdict are graded failures.
"""

from __future__ import annotations

import asyncio
import functools
import json
import shlex
import sys
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from registry.errors import HubskillsError
from registry.evaluation import check_bootstrap
from registry.evaluation.answer_files import extract_files
from registry.evaluation.judge import judge_failure
from registry.evaluation.text_checks import TEXT_RUNNERS, clip, unsafe_pattern
from registry.format import checks_schema as cs
from registry.format.suite import Case
from registry.results.runs import CheckVerdict, ResultRow
from registry.sandbox import Sandbox, SandboxResult, run_check

JudgeFn = Callable[[str, str, str], Awaitable[tuple[Any, ...]]]
"""(rubric, prompt, output) -> (passed, reason) or (passed, reason, the judge's reply);
supplied by the eval engine."""

CODE_CHECKS = frozenset({"python", "exec", "command"})  # checks running code a suite supplies
NO_SANDBOX = "code check left out: no sandbox was given"
_TAIL = 1500  # characters of stdout/stderr kept in a reason


class _Skipped(Exception):
    """Raised by a runner when its check cannot run in this environment."""


@dataclass
class _Context:
    case: Case
    output: str
    judge: JudgeFn | None
    sandbox: Sandbox | None
    skip_reason: str
    sandbox_root: Path | None
    workspace: Path | None = None  # where workspace checks look (set by run_checks)
    pair: Any = None  # pairwise checks' grader (`pairwise.PairFn`): None until both arms answer

    @functools.cached_property
    def files(self) -> dict[str, str]:
        """The files the model wrote, read from the output when a check first needs them (a
        code or workspace check): text checks never parse the answer as markdown."""
        return extract_files(self.output)


def has_code_checks(cases: Iterable[Case]) -> bool:
    """Whether any case runs code (a `python`, `exec` or `command` check, or a pattern RE2
    cannot express, matched by Python's `re`): those need a sandbox."""
    return any(check.type in CODE_CHECKS or unsafe_pattern(check) is not None
               for case in cases for check in case.checks)


# --- code checks: only ever in the sandbox ---------------------------------------------------

# Run as `python -I -c`: the text of a module that writes its start marker before anything else.
_BOOTSTRAP = Path(check_bootstrap.__file__).read_text(encoding="utf-8")


def _tail(text: str) -> str:
    return text if len(text) <= _TAIL else "…" + text[-_TAIL:]


async def _sandboxed(argv: list[str], ctx: _Context, timeout: float,
                     stdin: bytes = b"") -> SandboxResult:
    """Run argv in the sandbox, in a fresh folder holding the model's files (removed after,
    however deep the code nested folders in it: `remove_tree`)."""
    assert ctx.sandbox is not None  # the runners skip first when there is none
    tmp = Path(tempfile.mkdtemp(prefix="hubskills-check-", dir=ctx.sandbox_root))
    try:
        work = tmp / "work"
        work.mkdir()
        from registry.evaluation import workspace_checks as ws  # loaded by the first such check

        ws.write_files(work, ctx.case.input_bytes())  # the case's inputs, then the model's
        ws.write_files(work, ctx.files)
        return await run_check(ctx.sandbox, argv, work, timeout=timeout, stdin=stdin)
    finally:
        from registry.agent import remove_tree  # code checks only: a chat eval never loads it

        await asyncio.to_thread(remove_tree, tmp)  # shutil.rmtree recurses once per level


def _require_sandbox(ctx: _Context) -> Sandbox:
    if ctx.sandbox is None:
        raise _Skipped(ctx.skip_reason)
    return ctx.sandbox


async def _python(check: cs.PythonCheck, ctx: _Context) -> tuple[bool | None, str]:
    _require_sandbox(ctx)
    return await _run_python(check.code, ctx.output, ctx, check.timeout)


async def _run_python(code: str, output: str, ctx: _Context,
                      timeout: float) -> tuple[bool | None, str]:
    """Run `code` (defining `check(output, files)`) on `output` in the sandbox: its verdict."""
    payload = json.dumps({"code": code, "output": output, "files": ctx.files})
    run = await _sandboxed(
        [sys.executable, "-I", "-c", _BOOTSTRAP], ctx, timeout, payload.encode()
    )
    if run.launch_error:
        return None, run.launch_error
    if run.timed_out:
        return False, f"timed out after {timeout:g}s"
    if not run.stdout.startswith(check_bootstrap.STARTED):  # written before anything else ran
        return None, (f"the check's Python did not start (exit {run.exit_code}): "
                      f"{_tail(run.stderr.strip())}")
    with suppress(ValueError, IndexError, TypeError, KeyError):
        result = json.loads(run.stdout.strip().splitlines()[-1])
        return bool(result["passed"]), str(result["reason"]) or "check() returned its verdict"
    return False, f"check process exited with code {run.exit_code}: {_tail(run.stderr.strip())}"


# --- patterns RE2 cannot express: Python's `re`, only in the sandbox -------------------------

_SEARCH = """def check(output, files):
    import json, re
    found = re.search({pattern!r}, output, {flags})
    return True, json.dumps(None if found is None else found.group(0)[:200])
"""
PATTERN_TIMEOUT_S = 10.0  # a backtracking match past this fails its check


async def _pattern(check: cs.Regex | cs.NotRegex | cs.FileRegex,
                   ctx: _Context) -> tuple[bool | None, str]:
    """A pattern check: RE2 in-process, or (a pattern RE2 cannot express) Python's `re` in the
    sandbox, skipped without one like any code check."""
    unsafe = unsafe_pattern(check)
    if unsafe is None:
        return await _file_check(check, ctx) if isinstance(check, cs.FileRegex) \
            else TEXT_RUNNERS[type(check)](check, ctx)
    if ctx.sandbox is None:
        raise _Skipped(f"{unsafe.message}, so it runs only in a sandbox; {ctx.skip_reason}")
    where, text = "", ctx.output
    if isinstance(check, cs.FileRegex):
        from registry.evaluation import workspace_checks as ws

        assert ctx.workspace is not None  # run_checks makes one when the case has such checks
        try:
            where, text = f"{check.path}: ", await asyncio.to_thread(
                ws.read_text, ctx.workspace, check.path)
        except ws.Unreadable as exc:
            return False, str(exc)
    flags = "|".join(f"re.{letter.upper()}" for letter in check.flags) or "0"
    code = _SEARCH.format(pattern=check.pattern, flags=flags)
    ran, reason = await _run_python(code, text, ctx, PATTERN_TIMEOUT_S)
    try:
        found = json.loads(reason) if ran else False
    except ValueError:
        ran, found = False, False
    if not ran or not (found is None or isinstance(found, str)):
        return ran, f"{where}/{check.pattern}/ in the sandbox: {reason}"
    wanted = check.type != "not_regex"
    if found is None:
        return not wanted, f"{where}no match for /{check.pattern}/ (matched in the sandbox)"
    return wanted, f"{where}/{check.pattern}/ matched {clip(found, 80)!r} (in the sandbox)"


def _missing_tools(argv: list[str], requires: list[str], sandbox: Sandbox) -> list[str]:
    """Tools the command needs that the sandbox cannot see: the command itself (by name or by
    absolute path, never exempt) and every `requires` entry. A relative path such as
    `./build.sh` names a file in the workspace and is not looked up."""
    first = [] if "/" in argv[0] and not argv[0].startswith("/") else [argv[0]]
    return [tool for tool in dict.fromkeys([*first, *requires]) if sandbox.which(tool) is None]


async def _exec(check: cs.ExecCheck, ctx: _Context) -> tuple[bool | None, str]:
    sandbox = _require_sandbox(ctx)
    try:
        argv = shlex.split(check.command) if isinstance(check.command, str) else check.command
    except ValueError as exc:
        return False, f"invalid command: {exc}"
    if not argv:
        return False, "empty command"
    missing = _missing_tools(argv, check.requires, sandbox)
    if missing:
        where = "in the sandbox" if any("/" in m for m in missing) else "on PATH"
        raise _Skipped(f"{', '.join(missing)} not found {where}; check skipped")
    run = await _sandboxed(argv, ctx, check.timeout)
    if run.launch_error:
        return None, run.launch_error
    if run.timed_out:
        return False, f"timed out after {check.timeout:g}s"
    streams = "".join(
        f"; {name}: {_tail(text.strip())}" for name, text in (("stdout", run.stdout),
                                                               ("stderr", run.stderr))
        if text.strip()
    )
    expected = check.expect_exit
    return run.exit_code == expected, f"exit {run.exit_code} (expected {expected}){streams}"


# --- workspace checks: files read safely on the host, commands in the sandbox ----------------


async def _file_check(check: Any, ctx: _Context) -> tuple[bool, str]:
    assert ctx.workspace is not None  # run_checks makes one when the case has such checks
    from registry.evaluation import workspace_checks as ws

    # In a thread: a glob may walk thousands of entries, and other samples' calls are waiting.
    return await asyncio.to_thread(ws.FILE_RUNNERS[type(check)], check, ctx.workspace)


async def _command(check: cs.CommandCheck, ctx: _Context) -> tuple[bool | None, str]:
    sandbox = _require_sandbox(ctx)
    missing = _missing_tools(["sh"], check.requires, sandbox)
    if missing:
        raise _Skipped(f"{', '.join(missing)} not found in the sandbox; check skipped")
    assert ctx.workspace is not None
    from registry.evaluation import workspace_checks as ws

    return await ws.run_command(check, ctx.workspace, sandbox, ctx.sandbox_root)


# --- judged checks and the driver -----------------------------------------------------------


async def _judged(rubric: str, ctx: _Context) -> tuple[bool | None, str, *tuple[Any, ...]]:
    """(passed, reason) and, when the judge returned it, its answer."""
    if ctx.judge is None:
        raise _Skipped("no --judge model given")
    try:
        passed, reason, *answer = await ctx.judge(rubric, ctx.case.prompt, ctx.output)
    except HubskillsError as exc:  # the judge's failure, or (no verdict, too long) the answer's
        return (None if judge_failure(exc) else False), f"judge error: {exc}", \
            getattr(exc, "answer", None)
    return bool(passed), reason, *answer


async def _pairwise(check: cs.PairwiseCheck, ctx: _Context) -> tuple[bool | None, str]:
    """A pairwise check (`pairwise.py`): pending while one arm is graded, then its pair's."""
    if ctx.judge is None:
        raise _Skipped("no --judge model given")
    graded = None if ctx.pair is None else await ctx.pair(check)
    if graded is None:
        raise _Skipped("graded after both arms answered" if ctx.pair is None
                       else "pairwise checks: the judge's answers are not stored")
    return graded


#: `workspace_checks.FILE_RUNNERS`' keys, named here so a suite of text checks never loads that
#: module (nor the agent's tree walk it copies workspaces with).
_FILE_CHECKS = (cs.FileExists, cs.FileContains, cs.FileNotContains, cs.FileRegex, cs.FileParses)
_RUNNERS: dict[type, Callable[[Any, _Context], Any]] = {
    **TEXT_RUNNERS, cs.PythonCheck: _python, cs.ExecCheck: _exec,
    cs.JudgeCheck: lambda check, ctx: _judged(check.rubric, ctx), cs.CommandCheck: _command,
    cs.PairwiseCheck: _pairwise,
    **dict.fromkeys(_FILE_CHECKS, _file_check),
    **dict.fromkeys((cs.Regex, cs.NotRegex, cs.FileRegex), _pattern),
}


async def _grade(
    kind: str, label: str, weight: float, runner: Callable[[Any, _Context], Any], subject: Any,
    ctx: _Context,
) -> CheckVerdict:
    try:
        outcome = runner(subject, ctx)
        passed, reason, *answer = await outcome if asyncio.iscoroutine(outcome) else outcome
    except _Skipped as skip:
        return CheckVerdict(type=kind, label=label, passed=None, reason=str(skip),
                            weight=weight, skipped=True)
    return CheckVerdict(type=kind, label=label, passed=passed, reason=reason, weight=weight,
                        answer=answer[0] if answer else None)  # a judge's reply


async def run_checks(
    case: Case, output: str, *, judge: JudgeFn | None = None, sandbox: Sandbox | None = None,
    skip_reason: str = NO_SANDBOX, sandbox_root: Path | None = None,
    workspace: Path | None = None, pair: Any = None,
) -> list[CheckVerdict]:
    """Grade `output` against every check of `case`, then each of its assertions, concurrently.

    Assertions are graded like judge checks with the assertion as the rubric (weight 1, type
    "assertion"). Code checks run in `sandbox`, each in a temp folder under `sandbox_root` (the
    system default when None) removed when the check ends; with no sandbox they are skipped
    with `skip_reason`. Workspace checks grade `workspace` (agent mode: the folder the agent
    left) or, when None, a temp folder holding the case's inputs and the answer's fenced files.
    Pairwise checks ask `pair` (`pairwise.PairFn`) and are pending (skipped) without one.
    Results come back in check order.
    """
    ctx = _Context(case, output, judge, sandbox, skip_reason, sandbox_root, workspace, pair)
    chat = workspace is None and any(c.type in cs.WORKSPACE_CHECK_TYPES for c in case.checks)
    with _answer_workspace(ctx) if chat else nullcontext() as folder:
        ctx.workspace = workspace or folder
        jobs = [_grade(c.type, c.label(), c.weight, _RUNNERS[type(c)], c, ctx)
                for c in case.checks]
        jobs += [_grade("assertion", clip(a, 80), 1.0, _judged, a, ctx) for a in case.assertions]
        return list(await asyncio.gather(*jobs))


def _answer_workspace(ctx: _Context) -> AbstractContextManager[Path | None]:
    """Chat mode's workspace: the case's inputs and the answer's fenced files."""
    from registry.evaluation import workspace_checks as ws

    return ws.answer_workspace(ctx.case.input_bytes(), ctx.files, ctx.sandbox_root)


def check_error(results: list[CheckVerdict]) -> str | None:
    """Why a check could not run to a verdict (the first such check), or None."""
    failed = next((r for r in results if r.passed is None and not r.skipped), None)
    return None if failed is None else f"{failed.label}: {failed.reason}"


def grade_row(row: ResultRow, results: list[CheckVerdict]) -> None:
    """Put `results` on `row` with its verdict and score. A check error makes the row an error
    row instead (`error_kind` "check", the first reason kept; like every error row it carries
    no verdicts), out of both arms' denominators."""
    if (why := check_error(results)) is not None:
        row.error, row.error_kind = why, "check"
        return
    row.checks = results
    row.passed, row.score = case_score(results)


class Scored(Protocol):
    """What `case_score` reads of a verdict (a `CheckVerdict`, or verify's lighter `Graded`)."""

    @property
    def passed(self) -> bool | None: ...
    @property
    def skipped(self) -> bool: ...
    @property
    def weight(self) -> float: ...


def case_score(results: Sequence[Scored]) -> tuple[bool | None, float]:
    """(passed, score) for one case; skipped checks count for neither.

    `passed` is True when every non-skipped check passed, False when one failed, and None when
    every check was skipped or one could not run (a check error: the case is then an error).
    `score`
    is the weighted share of the checks with a verdict that passed (0.0 when none has one).
    """
    graded = [r for r in results if not r.skipped]
    decided = [r for r in graded if r.passed is not None]
    total = sum(r.weight for r in decided)
    score = sum(r.weight for r in decided if r.passed) / total if total else 0.0
    if not graded or len(decided) < len(graded):
        return None, score
    return all(r.passed for r in decided), score
