"""Reading a trace file: its format, its account, the counts behind it, redacted.

`load_trace` is what `generate --from` and `hubskills trace show` use: it refuses a file that
yields nothing usable (empty, every line damaged, no message or tool call in a known format,
or a goal with no work after it) with an error that names the file and why, and it counts
every record read, used and skipped, and every damaged line, so nothing is lost silently.
Common secret shapes are redacted before anything reaches a model or the screen.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from registry.errors import GenerationError
from registry.generate.traces import claude, codex, gemini, opencode
from registry.generate.traces.account import TraceAccount, build_account
from registry.generate.traces.budget import DEFAULT_BUDGET, fit
from registry.generate.traces.events import Damage, Parsed, TraceFormat, load_json, loads
from registry.generate.traces.transcript import is_markdown, parse_markdown, parse_text
from registry.secrets import MASK, scrub

MAX_TRACE_BYTES = 64 * 2**20
FORMAT_NAMES = {"claude-code": "Claude Code session", "codex": "Codex rollout",
                "opencode": "OpenCode export", "gemini-cli": "Gemini CLI chat",
                "markdown": "markdown transcript", "text": "plain-text notes"}
_SECRETS = (re.compile(r"\b(sk-ant-[\w-]{10,}|sk-[\w-]{20,}|hf_[A-Za-z0-9]{20,}|"
                       r"gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})"),
            re.compile(r"(?i)\b([\w-]*(?:api[_-]?key|token|secret|password))(\s*[=:]\s*)"
                       r"[\"']?[^\s\"']{8,}"))
_HINT = "export the session again, or pass a markdown summary of it to --from"


@dataclass
class Trace:
    """A trace file read: its format, its account and the counts behind them."""

    path: Path
    format: TraceFormat
    account: TraceAccount
    events: int
    used: int
    damaged: list[Damage]

    def render(self, budget: int = DEFAULT_BUDGET) -> str:
        """Exactly what the teacher sees of this trace."""
        return fit(self.account, budget).text

    def counts(self, budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
        """Events read, used and skipped; damaged lines; files, commands, failures, cuts."""
        a = self.account
        return {"path": str(self.path), "format": self.format, "events": self.events,
                "used": self.used, "skipped": self.events - self.used,
                "damaged": [d.describe() for d in self.damaged], "files": len(a.files),
                "commands": len(a.commands),
                "command_runs": sum(len(c.statuses) for c in a.commands),
                "errors": len(a.fixes), "fixed": a.fixed, "denials": len(a.denials),
                "final_answer": bool(a.answer), "collapsed": a.collapsed,
                "cut": fit(a, budget).cuts}

    def summary(self, budget: int = DEFAULT_BUDGET) -> list[str]:
        """Lines saying what was read, what the account holds and what the budget cut."""
        c = self.counts(budget)
        damaged = c["damaged"]
        shown = "; ".join(damaged[:3]) + ("; …" if len(damaged) > 3 else "")
        return [
            f"{self.path}: {FORMAT_NAMES[self.format]} ({self.format})",
            f"events: {c['events']} read, {c['used']} used, {c['skipped']} not used "
            "(metadata, rewritten copies); "
            + (f"{len(damaged)} damaged line(s) skipped: {shown}" if damaged
               else "no damaged line"),
            f"account: {c['files']} file(s), {c['commands']} command(s) ({c['command_runs']} "
            f"run(s)), {c['errors']} failure(s) ({c['fixed']} fixed), {c['denials']} "
            f"permission denial(s), final answer: {'yes' if c['final_answer'] else 'no'}, "
            f"{c['collapsed']} repeated passage(s) collapsed",
            f"cut to fit {budget} characters: {'; '.join(c['cut']) or 'nothing'}",
        ]


def detect_format(text: str) -> TraceFormat:
    """Which format a trace is in: a whole JSON document, else its first JSON lines, else
    its markers."""
    document = _document(text)
    if opencode.is_export(document):
        return "opencode"
    if gemini.is_document(document):
        return "gemini-cli"
    if document is None and text.lstrip("\ufeff ").startswith("{\n"):  # a damaged document
        if '"projectHash"' in text[:2000]:
            return "gemini-cli"
        if '"parts"' in text:
            return "opencode"
    for line in text.lstrip("\ufeff").splitlines()[:50]:
        event = load_json(line)
        if not isinstance(event, dict):
            continue
        if event.get("type") in codex.TYPES and "payload" in event:
            return "codex"
        if gemini.is_record(event):
            return "gemini-cli"
        if "message" in event or "sessionId" in event:
            return "claude-code"
    return "markdown" if is_markdown(text) else "text"


def _document(text: str) -> Any:
    return load_json(text) if text.lstrip("\ufeff \n").startswith("{") else None


def _from_document(text: str, parse_document: Callable[[Any], Parsed]) -> Parsed:
    """Parse a one-document format; a damaged document is recorded, not guessed at."""
    try:
        document = loads(text)
    except ValueError as exc:  # not JSON, or nested too deep (`events.loads`)
        parsed = Parsed()
        parsed.damaged.append(Damage(getattr(exc, "lineno", 1), len(text.encode()),
                                     not text.rstrip().endswith("}"), "a JSON document"))
        return parsed
    return parse_document(document)


def _gemini(text: str) -> Parsed:
    if gemini.is_document(_document(text)) or text.lstrip("\ufeff ").startswith("{\n"):
        return _from_document(text, lambda doc: gemini.parse(text, doc))
    return gemini.parse(text)


_PARSERS: dict[str, Callable[[str], Parsed]] = {
    "claude-code": claude.parse, "codex": codex.parse, "markdown": parse_markdown,
    "text": parse_text, "opencode": lambda text: _from_document(text, opencode.parse),
    "gemini-cli": _gemini,
}


def parse(text: str, fmt: TraceFormat | None = None) -> tuple[TraceFormat, Parsed]:
    """The format and the parsed steps of a trace's text."""
    fmt = fmt or detect_format(text)
    return fmt, _PARSERS[fmt](text)


def parse_trace(text: str, fmt: TraceFormat | None = None) -> TraceAccount:
    """The account of a trace's text (its format detected when not given)."""
    fmt, parsed = parse(text, fmt)
    return build_account(parsed.steps, fmt)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Mask every secret the process knows (`registry.secrets.scrub`, plus `secrets`) and,
    since a trace may quote someone else's keys, common key shapes too."""
    text = _SECRETS[0].sub(MASK, scrub(text, secrets))
    return _SECRETS[1].sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)


def load_trace(path: str | Path, *, secrets: Iterable[str] = ()) -> Trace:
    """Read, parse and redact a trace file.

    Raises:
        GenerationError: the file cannot be read, is too large, or yields nothing usable
            (the message names the file and why).
    """
    file = Path(path)
    try:
        if file.stat().st_size > MAX_TRACE_BYTES:
            raise GenerationError(f"{file}: larger than {MAX_TRACE_BYTES // 2**20} MiB",
                                  hint="export a shorter session or a markdown summary")
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise GenerationError(f"cannot read trace {file}: {exc.strerror or exc}") from None
    secrets = list(secrets)
    fmt, parsed = parse(redact(text, secrets))
    account = build_account(parsed.steps, fmt)
    for name in ("goal", "answer"):  # clean what the parsers kept verbatim
        setattr(account, name, redact(getattr(account, name), secrets))
    if parsed.damaged:  # the teacher must know the account has holes
        cut = " The file ends mid-line: the session may have gone on." \
            if parsed.damaged[-1].cut else ""
        account.notes.append(f"{len(parsed.damaged)} damaged line(s) of the trace could not "
                             f"be read.{cut}")
    trace = Trace(file, fmt, account, parsed.events, parsed.used, parsed.damaged)
    why = _unusable(text, trace)
    if why:
        damage = f"; {len(trace.damaged)} damaged line(s) skipped, first " \
            f"{trace.damaged[0].describe()}" if trace.damaged and trace.events else ""
        raise GenerationError(f"{file}: nothing usable in this trace: {why}{damage}",
                              hint=_HINT)
    return trace


def _unusable(text: str, trace: Trace) -> str | None:
    """Why a trace teaches nothing, or None."""
    name = FORMAT_NAMES[trace.format]
    if not text.strip():
        return "the file is empty"
    if trace.damaged and trace.damaged[0].looks_like == "a JSON document":
        return f"read as a {name}, but the JSON document is damaged at " \
            f"{trace.damaged[0].describe()}"
    if trace.damaged and not trace.events:
        return f"all {len(trace.damaged)} line(s) are damaged ({trace.damaged[0].describe()})"
    if not trace.account.goal and not trace.account.has_work():
        return (f"{trace.events} event(s) read as a {name}, but none is a user message, "
                "a tool call or an answer")
    if not trace.account.has_work():
        return (f"read as a {name}, it holds only the request ({trace.events} event(s)), "
                "no work after it")
    return None


def read_trace(path: str | Path, *, budget: int = DEFAULT_BUDGET, secrets: Iterable[str] = (),
               progress: Callable[[str], None] | None = None) -> str:
    """A trace file's account as markdown, redacted, within `budget` characters; `progress`
    gets the lines of `Trace.summary` (what was read, kept and cut).

    Raises:
        GenerationError: see `load_trace`.
    """
    secrets = list(secrets)
    trace = load_trace(path, secrets=secrets)
    if progress:
        for line in trace.summary(budget)[1:]:
            progress(f"trace {trace.path.name}: {line}")
    return redact(trace.render(budget), secrets)
