"""Replaying an agent's file edits, to give the teacher the final content of every file.

Write tools (`content`), edit tools (old/new strings; Claude's MultiEdit `edits`; Claude's
record of the whole file before an edit), `apply_patch` (Add, Update with hunks applied to the
content known so far, Delete, Move) and shell heredocs (`cat > f <<'EOF'`). A command that
changes a known file in a way not replayed here (`sed -i`, `>>`, `rm`, `mv`) leaves a note on
it, so a stale version is never shown as final without saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from registry.generate.traces.events import Step

WRITE_TOOLS = {"write", "write_file", "create_file", "create"}
UNKNOWN = "[... the file before this edit is not in the trace ...]\n"
_HEREDOCS = (
    re.compile(r"(?:cat|tee)\s+>?\s*([\w./-]+)\s*<<-?\s*['\"]?(\w+)['\"]?\n(.*?)\n\2\b", re.S),
    re.compile(r"cat\s+<<-?\s*['\"]?(\w+)['\"]?\s*>\s*([\w./-]+)\n(.*?)\n\1\b", re.S),
)
_FILE_OP = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.M)


@dataclass
class Files:
    """Final content per path, and notes on changes that were not replayed."""

    content: dict[str, str] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)

    def note(self, path: str, text: str) -> None:
        """Attach a note to a file (once)."""
        if text not in self.notes.setdefault(path, []):
            self.notes[path].append(text)

    def apply(self, step: Step) -> None:
        """Replay one tool call's effect on files."""
        args, tool = step.args, step.tool.lower()
        path = str(args.get("file_path") or args.get("path") or "")
        if path and "content" in args and tool in WRITE_TOOLS:
            self.content[path] = str(args["content"])
            self.notes.pop(path, None)
        elif path and ("old_string" in args or "edits" in args):
            self._edit(path, args)
        if "patch" in args:
            self.apply_patch(str(args["patch"]))
        command = args.get("command")
        if isinstance(command, str):
            self._command(command)

    def _edit(self, path: str, args: dict) -> None:
        current = self.content.get(path)
        if current is None and isinstance(args.get("original"), str):
            current = args["original"]
        current = current if current is not None else UNKNOWN
        for edit in args.get("edits") or [args]:
            old, new = str(edit.get("old_string", "")), str(edit.get("new_string", ""))
            if old and old in current:
                current = current.replace(old, new, -1 if edit.get("replace_all") else 1)
            else:
                current += f"[edited: `{old[:200]}` became]\n{new}\n"
        self.content[path] = current

    def apply_patch(self, patch: str) -> None:
        """Apply a Codex patch (`*** Begin Patch` … `*** End Patch`)."""
        ops = list(_FILE_OP.finditer(patch))
        for i, op in enumerate(ops):
            end = ops[i + 1].start() if i + 1 < len(ops) else len(patch)
            body = patch[op.end() + 1:end].split("*** End Patch")[0]
            action, path = op.group(1), op.group(2).strip()
            if action == "Add":
                self.content[path] = "".join(line[1:] + "\n" for line in body.splitlines()
                                             if line.startswith("+"))
            elif action == "Delete":
                self.content.pop(path, None)
                self.notes.pop(path, None)
            else:
                move = re.match(r"\*\*\* Move to: (.+)\n?", body)
                text = _apply_hunks(self.content.pop(path, None), body[move.end():]
                                    if move else body)
                self.content[move.group(1).strip() if move else path] = text

    def _command(self, command: str) -> None:
        for pattern in _HEREDOCS:
            for match in pattern.finditer(command):
                path, body = (match.group(1), match.group(3)) if pattern is _HEREDOCS[0] \
                    else (match.group(2), match.group(3))
                self.content[path] = body + "\n"
                self.notes.pop(path, None)
        line = command.split("\n", 1)[0]
        for path in list(self.content):
            name = re.escape(path)
            if re.search(rf"\b(?:sed|perl)\s+(?:-\w*\s+)*-\w*i.*\s{name}\b|>>\s*{name}\b", line):
                self.note(path, f"changed afterwards by `{line[:200]}` (not replayed here)")
            elif re.search(rf"\b(?:rm|mv)\s+(?:-\w+\s+)*{name}\b", line):
                self.note(path, f"moved or deleted afterwards by `{line[:200]}`")


def _apply_hunks(current: str | None, body: str) -> str:
    """Apply `@@` hunks to `current`; a hunk that does not fit is kept as a visible diff."""
    text = current if current is not None else ""
    hunks = re.split(r"^@@.*\n?", body, flags=re.M)
    for hunk in hunks:
        lines = [line for line in hunk.splitlines() if line != "*** End of File"]
        if not any(line[:1] in ("+", "-") for line in lines):
            continue
        old = "\n".join(line[1:] for line in lines if line[:1] in (" ", "-", ""))
        new = "\n".join(line[1:] for line in lines if line[:1] in (" ", "+", ""))
        if current is not None and old and old in text:
            text = text.replace(old, new, 1)
        else:
            text += (UNKNOWN if current is None and not text else "") + \
                f"[patched]\n{hunk.rstrip()}\n"
    return text
