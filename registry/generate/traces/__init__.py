"""Agent traces (`generate --from`) turned into an account of the work for the teacher.

Formats, each recorded from the real CLI (see tests/data/traces/recorded/README.md): Claude
Code session JSONL (`claude`), Codex rollout JSONL (`codex`: today's `exec_command` and
`apply_patch`, and the older `shell` tool), OpenCode exports (`opencode`), Gemini CLI chats
(`gemini`), plus markdown transcripts and plain-text notes (`transcript`). Every parser gives
normalized steps and honest counts (`events`); `account` builds what the session teaches,
`edits` replays file edits, `budget` fits it to the teacher's budget, and `reader` reads a
file, refusing one that yields nothing usable.
"""

from registry.generate.traces.account import Command, TraceAccount, build_account
from registry.generate.traces.budget import DEFAULT_BUDGET, Fitted, fit
from registry.generate.traces.events import Damage, Step, TraceFormat
from registry.generate.traces.reader import (
    FORMAT_NAMES,
    MAX_TRACE_BYTES,
    Trace,
    detect_format,
    load_trace,
    parse_trace,
    read_trace,
    redact,
)

__all__ = [
    "DEFAULT_BUDGET", "FORMAT_NAMES", "MAX_TRACE_BYTES", "Command", "Damage", "Fitted", "Step",
    "Trace", "TraceAccount", "TraceFormat", "build_account", "detect_format", "fit",
    "load_trace", "parse_trace", "read_trace", "redact",
]
