"""The account a teacher gets of an agent session, built from normalized steps.

It keeps, in order of value: the goal, every file the agent finally wrote (path and content),
the commands it ran with their exit status, the failures and what fixed them (permission
denials apart, labelled as such), the decisions and the user's corrections, and the final
answer. A failure stays open until the call that failed succeeds (the same command, or the
same tool on the same file), collecting the reasoning and calls in between. Repeated passages
are collapsed and counted. `budget.fit` fits it into the teacher's budget.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import groupby

from registry.evaluation.checks import extract_files
from registry.format.markdown import fenced_blocks
from registry.generate.traces.edits import Files
from registry.generate.traces.events import Step, TraceFormat

_DECISION_WORDS = re.compile(r"\b(because|instead|rather than|prefer|decid|chose|should|must|"
                             r"the (?:issue|problem|fix|cause)|root cause|turns out|note|avoid|"
                             r"don't|never|always)", re.I)
_BARE_NAME = re.compile(r"^[*`]*(Dockerfile|Containerfile|Makefile|Justfile|Procfile|Gemfile|"
                        r"Rakefile|Vagrantfile)[*`]*:?$")

_ERROR_LINE = re.compile(r"\w*(?:Error|Exception)\b|\berror\b|FAILED|fatal|denied", re.I)
_LEADING = re.compile(r"^(?:cd\s+\S+\s*&&\s*|\w+=\S*\s+)+")  # `cd x && `, `FOO=1 `
_RUNNERS = {"python", "python3", "node", "npm", "npx", "pnpm", "yarn", "uv", "cargo", "go",
            "make", "bash", "sh", "bun", "deno", "poetry", "pip", "ruby", "bundle"}


@dataclass
class Command:
    """A command and the status of each of its runs (`exit 1`, `denied`), in order."""

    text: str
    statuses: list[str] = field(default_factory=list)

    def render(self) -> str:
        """`` `pytest -q` → exit 1 ×2, then exit 0 ``."""
        runs = [f"{s} ×{n}" if n > 1 else s
                for s, n in ((s, len(list(g))) for s, g in groupby(self.statuses))]
        return f"`{self.text}` → {', then '.join(runs) or 'no result recorded'}"


@dataclass
class TraceAccount:
    """What a session teaches, before fitting it into a budget."""

    format: TraceFormat
    goal: str = ""
    files: dict[str, str] = field(default_factory=dict)
    file_notes: dict[str, list[str]] = field(default_factory=dict)
    commands: list[Command] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    fixed: int = 0
    denials: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    answer: str = ""
    collapsed: int = 0
    notes: list[str] = field(default_factory=list)

    def has_work(self) -> bool:
        """Whether anything besides the goal was found."""
        return any((self.files, self.commands, self.fixes, self.denials, self.decisions,
                    self.answer))

    def sections(self) -> list[tuple[str, str, list[tuple[str, str]]]]:
        """(key, title, [(label, text)]) in order of value, most valuable first."""
        files = []
        for path, content in self.files.items():
            notes = "".join(f"\nnote: {n}" for n in self.file_notes.get(path, []))
            files.append((path, f"path: {path}\n```\n{content.rstrip()}\n```{notes}"))
        return [
            ("goal", "Goal", [("the goal", self.goal)] if self.goal else []),
            ("files", "Final files", files),
            ("commands", "Commands run (exit status)",
             [("commands", c.render()) for c in self.commands]),
            ("fixes", "Failures and what fixed them", [("failures", f) for f in self.fixes]),
            ("denials", "Denied by a permission prompt (not failures of the work)",
             [("permission denials", d) for d in self.denials]),
            ("decisions", "Decisions and corrections",
             [("decisions", d) for d in self.decisions]),
            ("answer", "Final answer", [("the final answer", self.answer)] if self.answer
             else []),
        ]


def clip(text: object, limit: int) -> str:
    """`text` cut to `limit` characters, with an ellipsis when cut."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def summary(step: Step) -> str:
    """One line that names a call: its command, its file edit or its patch."""
    args = step.args
    if isinstance(args.get("command"), str):
        return f"{step.tool}: {clip(args['command'], 300)}"
    path = args.get("file_path") or args.get("path")
    if "old_string" in args:
        return (f"{step.tool} {path}: replace `{clip(args['old_string'], 200)}` with "
                f"`{clip(args.get('new_string', ''), 300)}`")
    if "patch" in args:
        return f"apply_patch:\n{clip(args['patch'], 600)}"
    shown = {k: v for k, v in args.items() if k not in ("content", "original")}
    return f"{step.tool} {path or clip(json.dumps(shown, default=str), 200)}"


def _tail(text: str, limit: int) -> str:
    """The last lines of an error output: where the message usually is."""
    return text if len(text) <= limit else "…" + text[-limit:].split("\n", 1)[-1]


def _prose(text: str) -> str:
    """Assistant text without its code blocks (files are listed apart)."""
    lines = re.sub(r"\r\n?", "\n", text.strip()).split("\n")
    for block in reversed(fenced_blocks("\n".join(lines))):
        lines[block.start:block.end] = ["[code]"]
    return "\n".join(lines)


def _key(call: Step | None) -> str:
    """What must succeed to close a failure: the same program (`pytest` after
    `pytest -q tests/x.py`, `python -m pytest`, `npm test`), or the same tool on the same file."""
    if call is None:
        return ""
    command = call.args.get("command")
    if not isinstance(command, str):
        return f"{call.tool}:{call.args.get('file_path') or call.args.get('path') or ''}"
    words = _LEADING.sub("", command.strip()).split()
    if words and words[0] in _RUNNERS:
        return " ".join(words[:3] if words[1:2] in (["-m"], ["run"], ["exec"]) else words[:2])
    return " ".join(words[:1])


class _Builder:
    """Walks the steps once (see the module docstring)."""

    def __init__(self, fmt: TraceFormat) -> None:
        self.account = TraceAccount(fmt)
        self.edits = Files()
        self.calls: dict[str, Step] = {}
        self.command_of: dict[int, Command] = {}
        self.last_call: Step | None = None
        self.fix: list[str] | None = None
        self.fix_key = ""
        self.pending: tuple[str, bool] | None = None  # last assistant text, said in a fix
        self.seen: set[str] = set()

    def close(self, outcome: str, *, resolved: bool = False) -> None:
        if self.fix is not None:
            self.account.fixes.append("\n".join([*self.fix, outcome]))
            self.account.fixed += resolved
            self.fix = None

    def flush(self) -> None:
        """Something followed the last assistant text: it was not the final answer."""
        if self.pending is None:
            return
        text, in_fix = self.pending
        self.pending = None
        prose = _prose(text)
        if not in_fix and (self.account.format == "text" or _DECISION_WORDS.search(prose)):
            fresh = []
            for paragraph in (p for p in re.split(r"\n\s*\n", prose) if p.strip()):
                key = " ".join(paragraph.split()).lower()
                self.account.collapsed += key in self.seen
                if key not in self.seen:
                    self.seen.add(key)
                    fresh.append(paragraph)
            if fresh:
                self.account.decisions.append(clip("\n\n".join(fresh), 600))

    def user(self, step: Step) -> None:
        self.flush()
        text = step.text.strip()
        if not self.account.goal:
            self.account.goal = text
        elif step.is_error:
            self.error(step, None)
        else:
            self.close(f"Then the user said: {clip(text, 300)}")
            self.account.decisions.append(f"User: {clip(text, 600)}")

    def assistant(self, step: Step) -> None:
        self.flush()
        self.edits.content.update(extract_files(step.text))
        for block in fenced_blocks(step.text):  # names without a dot: Dockerfile, ...
            bare = _BARE_NAME.match(block.before)
            if bare:
                self.edits.content[bare.group(1)] = block.body
        if self.fix is not None:
            reasoning = f"Reasoning: {clip(_prose(step.text), 500)}"
            self.account.collapsed += reasoning in self.fix
            if reasoning not in self.fix:
                self.fix.append(reasoning)
        self.pending = (step.text, self.fix is not None)

    def call(self, step: Step) -> None:
        self.flush()
        self.calls[step.call_id] = self.last_call = step
        self.edits.apply(step)
        command = step.args.get("command")
        if isinstance(command, str):
            self.command_of[id(step)] = Command(clip(command.strip().split("\n")[0], 160))
            self.account.commands.append(self.command_of[id(step)])
        if self.fix is not None:
            self.fix.append(f"Then: {summary(step)}")

    def result(self, step: Step) -> None:
        self.flush()
        call = self.calls.get(step.call_id) if step.call_id else None
        call = call or self.last_call
        command = self.command_of.get(id(call)) if call is not None else None
        code = step.exit_code if step.exit_code is not None else None if step.is_error else 0
        if command is not None:
            command.statuses.append("denied by a permission prompt" if step.denied else
                                    f"exit {code}" if code is not None else "failed")
        if step.denied:
            name = f"`{summary(call)}`" if call else "A tool call"
            self.account.denials.append(f"{name} was denied: {clip(step.text.strip(), 200)}")
        elif step.is_error:
            self.error(step, call)
        elif self.fix is not None and (call is None or _key(call) == self.fix_key):
            self.success(call, command is not None)

    def error(self, step: Step, call: Step | None) -> None:
        status = f" (exit {step.exit_code})" if step.exit_code else ""
        if self.fix is not None and call is not None and _key(call) == self.fix_key:
            self.fix.append(f"Failed again{status}:\n{_tail(step.text.strip(), 300)}")
            return
        self.close("Result: another error followed.")
        head = f"`{summary(call)}` failed{status}" if call else "An error"
        lines = [line.strip() for line in step.text.strip().splitlines() if line.strip()]
        last = next((line for line in reversed(lines) if _ERROR_LINE.search(line)),
                    lines[-1] if lines else "")
        self.fix = [f"{head}: {clip(last, 200)}\n{_tail(step.text.strip(), 400)}"]
        self.fix_key = _key(call)

    def success(self, call: Step | None, is_command: bool) -> None:
        if call is None or self.fix is None:
            self.close("Result: resolved.", resolved=True)
            return
        if self.fix[-1] == f"Then: {summary(call)}":
            self.fix.pop()
        status = " (exit 0)" if is_command else ""
        self.close(f"Result: `{summary(call)}` then succeeded{status}.", resolved=True)

    def finish(self) -> TraceAccount:
        account = self.account
        if self.pending is not None:
            account.answer = clip(self.pending[0].strip(), 4000)
        self.close("Result: not resolved in the trace.")
        account.files, account.file_notes = self.edits.content, self.edits.notes
        merged: dict[str, Command] = {}
        for command in account.commands:  # one entry per command, its runs in order
            merged.setdefault(command.text, Command(command.text)).statuses += command.statuses
        account.commands = list(merged.values())
        for name in ("fixes", "denials"):
            items = getattr(account, name)
            counts = {item: items.count(item) for item in items}
            account.collapsed += len(items) - len(counts)
            setattr(account, name, [f"{i}\n(the same happened {n} times)" if n > 1 else i
                                    for i, n in counts.items()])
        return account


def build_account(steps: list[Step], fmt: TraceFormat) -> TraceAccount:
    """The account of a list of steps (see the module docstring)."""
    builder = _Builder(fmt)
    handlers = {"user": builder.user, "assistant": builder.assistant, "call": builder.call,
                "result": builder.result}
    for step in steps:
        handlers[step.kind](step)
    return builder.finish()
