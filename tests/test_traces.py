"""Agent traces → compact accounts, on realistic samples of each format in tests/data/traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry.errors import GenerationError
from registry.generate.traces import detect_format, parse_trace, read_trace, redact
from registry.secrets import MASK

TRACES = Path(__file__).parent / "data" / "traces"


def account(name: str):
    return parse_trace((TRACES / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize(("name", "fmt"), [
    ("claude-code-session.jsonl", "claude-code"), ("codex-rollout.jsonl", "codex"),
    ("chat-transcript.md", "markdown"), ("debugging-notes.txt", "text")])
def test_the_format_is_detected(name, fmt):
    assert detect_format((TRACES / name).read_text(encoding="utf-8")) == fmt


def test_claude_code_session():
    a = account("claude-code-session.jsonl")
    assert a.goal.startswith("Export the invoices table to a CSV that Excel in Germany")
    assert len(a.fixes) == 2
    assert "AssertionError" in a.fixes[0] and "utf-8-sig" in a.fixes[0]
    assert "then succeeded" in a.fixes[0]
    assert "No module named 'babel'" in a.fixes[1] and "str.translate" in a.fixes[1]
    assert any(d.startswith("User: Thanks. Don't use f-string replace") for d in a.decisions)
    export = a.files["invoices/export.py"]  # last write + edits, relative to the session cwd
    assert 'encoding="utf-8-sig"' in export and "format_de(r.total)" in export
    assert "str.maketrans" in export and "babel" not in export
    assert set(a.files) == {"invoices/export.py", "tests/test_export.py"}
    assert "python -m pytest -q && git diff --stat" in a.commands
    assert not any("<command-name>" in d for d in a.decisions)


def test_codex_rollout():
    a = account("codex-rollout.jsonl")
    assert a.goal.startswith("Add a token-bucket rate limiter")  # not the environment context
    [fix] = a.fixes
    assert "RuntimeError: no running event loop" in fix and "self.session = None" in fix
    assert fix.endswith("Result: `shell: pytest -q` then succeeded.")
    assert a.files["ratelimit/bucket.py"].startswith("import asyncio\n\n\nclass TokenBucket:")
    assert "+" not in a.files["ratelimit/bucket.py"].splitlines()[0]
    assert "[patched]" in a.files["ratelimit/client.py"]
    assert "async def test_burst_then_rate" in a.files["tests/test_bucket.py"]  # heredoc
    assert any("asyncio.Lock" in d for d in a.decisions)
    assert any('asyncio_mode = "auto"' in d for d in a.decisions)
    assert "pytest -q" in a.commands


def test_markdown_transcript():
    a = account("chat-transcript.md")
    assert a.goal.startswith("Our FastAPI image is 1.2 GB")  # the title is not the goal
    [fix] = a.fixes
    assert "Failed to spawn" in fix and "UV_PYTHON_DOWNLOADS=never" in fix
    assert "Then the user said: Works, 210 MB now." in fix
    assert "UV_PYTHON_DOWNLOADS=never" in a.files["Dockerfile"]  # the last version wins
    assert a.files[".dockerignore"].startswith(".venv\n.git")
    assert not any("FROM python" in d for d in a.decisions)  # code lives under files


def test_plain_notes():
    a = account("debugging-notes.txt")
    assert a.goal.startswith("Goal: make the nightly Postgres backup job restore-testable")
    assert len(a.fixes) == 2
    assert "pg_restore: error" in a.fixes[0] and "pg_dump -Fc" in a.fixes[0]
    assert 'role "reporting" does not exist' in a.fixes[1]
    assert "pg_dumpall --roles-only" in a.fixes[1]
    assert any("Keep 14 daily dumps" in d for d in a.decisions)


def test_the_budget_keeps_the_parts_that_teach_first():
    a = account("claude-code-session.jsonl")
    full, short, tiny = a.render(100_000), a.render(1500), a.render(900)
    assert len(tiny) <= 900 and len(short) <= 1500 < len(full)
    assert a.goal in short and "AssertionError" in short and "[... trimmed]" in short
    assert short.index("## Goal") < short.index("## Errors") < short.index("## Final files")
    assert a.goal in tiny and "## Errors and how they were fixed" in tiny
    assert "## Final files" not in tiny and "## Final files" in full


def test_read_trace_redacts_secrets(tmp_path):
    trace = tmp_path / "s.jsonl"
    lines = [{"type": "user", "sessionId": "s", "message": {"role": "user", "content":
              "Deploy with HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz and key sk-proj-"
              "ABCDEFGHIJKLMNOPQRSTUVWX, password: hunter2hunter2 and mysecretvalue"}}]
    trace.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    text = read_trace(trace, secrets=["mysecretvalue"])
    for secret in ("hf_abcdefghij", "sk-proj-ABC", "hunter2hunter2", "mysecretvalue"):
        assert secret not in text
    assert f"HF_TOKEN={MASK}" in text and f"password: {MASK}" in text
    assert redact("no secrets here") == "no secrets here"


def test_an_unreadable_trace_is_a_clear_error(tmp_path):
    with pytest.raises(GenerationError, match="cannot read trace"):
        read_trace(tmp_path / "missing.jsonl")


def test_broken_lines_are_skipped():
    text = (TRACES / "claude-code-session.jsonl").read_text(encoding="utf-8")
    broken = text.replace("\n", "\n{not json\n", 3)
    assert parse_trace(broken).goal == account("claude-code-session.jsonl").goal
