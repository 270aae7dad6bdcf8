"""Agent-mode transcripts for the Evaluate tab: a case's baseline and skill trajectories side by
side (no Gradio here). Records come from the run's saved, scrubbed `transcripts.jsonl`.

Everything in a transcript was chosen by a model (tool names, file names, outputs), so it is
built as Markdown whose code spans and blocks nothing can close (`code_span`, `code_block`) and
shown through the one sanitiser (`safe_html`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from registry import call_arguments, code_block, code_span, read_transcripts, safe_html

MAX_TEXT = 3_000  # characters of one message or tool result shown
NO_TRANSCRIPT = "_No transcript: only agent-mode runs save them._"


def transcript_cases(runs_dir: Path, run_id: str | None) -> list[str]:
    """The case ids with a saved transcript in `run_id`, sorted."""
    if not run_id:
        return []
    return sorted({str(t.get("case_id")) for t in read_transcripts(runs_dir, run_id)})


def transcript_pair(runs_dir: Path, run_id: str | None, case_id: str | None,
                    repeat: int = 0) -> tuple[str, str]:
    """Markdown for the baseline and the skill arm of `case_id` (every model, one repeat)."""
    if not run_id or not case_id:
        return NO_TRANSCRIPT, NO_TRANSCRIPT
    records = [t for t in read_transcripts(runs_dir, run_id)
               if t.get("case_id") == case_id and t.get("repeat") == repeat]
    baseline, skill = (
        "\n\n---\n\n".join(render(t) for t in sorted(
            (r for r in records if r.get("arm") == arm), key=lambda r: str(r.get("model"))))
        or NO_TRANSCRIPT
        for arm in ("baseline", "skill"))
    return baseline, skill


def transcript_views(runs_dir: Path, run_id: str | None, case_id: str | None,
                     repeat: int = 0) -> tuple[str, str]:
    """`transcript_pair` as the page shows it: through the one sanitiser (`safe_html`)."""
    baseline, skill = transcript_pair(runs_dir, run_id, case_id, repeat)
    return safe_html(baseline), safe_html(skill)


def render(record: dict[str, Any]) -> str:
    """One trajectory as Markdown: header, steps, then the workspace diff."""
    files = ", ".join(record.get("skill_files") or []) or "none"
    lines = [f"**{_plain(record.get('model'))}** · {_plain(record.get('protocol'))} · stopped: "
             f"{_plain(record.get('stop_reason'))} · skill files read: {_plain(files)}"]
    for entry in record.get("transcript", []):
        kind, text = entry.get("kind"), str(entry.get("text", ""))
        if kind == "tool_call":
            args = call_arguments(entry.get("arguments"), limit=80)
            lines.append(f"→ {code_span(entry.get('tool'))} {_plain(args)}")
        elif kind == "tool_result":
            mark = "✗ error" if entry.get("is_error") else "←"
            lines.append(f"{mark}\n{_block(text)}")
        elif kind == "system":
            lines.append(f"<details><summary>system prompt</summary>\n\n{_block(text)}\n"
                         "</details>")
        else:
            lines.append(f"**{kind}**: {_plain(_clip(text))}")
    changes = record.get("diff", [])
    lines.append(f"**Workspace diff** ({len(changes)} file(s))")
    lines += [f"{_plain(c.get('status'))} {code_span(c.get('path'))}"
              + (f"\n{_block(c['diff'], 'diff')}" if c.get("diff")
                 else f" {_plain(c.get('note', ''))}")
              for c in changes]
    return "\n\n".join(lines)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " …"


def _block(text: str, lang: str = "") -> str:
    return code_block(_clip(text), lang)


def _plain(value: object) -> str:
    """Visitor text shown as text: no HTML, no Markdown links or images."""
    text = str(value)
    for char in "\\`*_[]<>|#!":
        text = text.replace(char, "\\" + char)
    return text
