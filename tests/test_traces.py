"""Agent traces → the teacher's account: session files recorded from the real CLIs
(tests/data/traces/recorded, see its README), the older samples, damaged and empty files,
the budget, and `hubskills trace show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from registry.cli import cli, main
from registry.errors import GenerationError
from registry.generate.traces import (
    DEFAULT_BUDGET,
    Step,
    build_account,
    detect_format,
    fit,
    load_trace,
    parse_trace,
    read_trace,
    redact,
)
from registry.generate.traces.edits import Files
from registry.secrets import MASK


def render(account, budget: int = DEFAULT_BUDGET) -> str:
    """The account as the teacher gets it, within `budget` characters."""
    return fit(account, budget).text

TRACES = Path(__file__).parent / "data" / "traces"
RECORDED = TRACES / "recorded"
CHECK = "python3 -c \"import tomllib; print(tomllib.load(open('build.toml', 'rb'))['general'])\""
FIXED_TOML = ('[general]\nname = "relu"\nversion = "0.1.0"\n\n[kernel.relu]\nbackend = "cuda"\n'
              'src = ["relu/relu.cu"]')
ANSWER = "Done: build.toml declares the relu kernel"
# file, format, the tool that ran the failing check
SESSIONS = [("claude-code.jsonl", "claude-code", "Bash"), ("codex.jsonl", "codex", "exec_command"),
            ("codex-apply-patch.jsonl", "codex", "exec_command"),
            ("opencode.json", "opencode", "bash"), ("gemini-cli.jsonl", "gemini-cli",
                                                    "run_shell_command")]


def account(name: str):
    return parse_trace((TRACES / name).read_text(encoding="utf-8"))


def lines_of(name: str) -> list[str]:
    return (RECORDED / name).read_text(encoding="utf-8").splitlines(keepends=True)


# --- sessions recorded from the real CLIs -------------------------------------------------


@pytest.mark.parametrize(("name", "fmt", "tool"), SESSIONS)
def test_a_recorded_session_reaches_the_account_whole(name, fmt, tool):
    trace = load_trace(RECORDED / name)
    assert trace.format == fmt and not trace.damaged and trace.used < trace.events
    a = trace.account
    assert a.goal.strip('"').startswith("Write build.toml for the relu kernel")
    assert a.files["build.toml"].rstrip() == FIXED_TOML  # the final version, path relative
    [check] = [c for c in a.commands if c.text == CHECK]
    assert check.render().endswith("→ exit 1, then exit 0")
    [fix] = a.fixes
    assert fix.startswith(f"`{tool}: {CHECK}` failed (exit 1): tomllib.TOMLDecodeError: "
                          "Unclosed array")
    assert "The src array is not closed" in fix
    assert fix.endswith(f"Result: `{tool}: {CHECK}` then succeeded (exit 0).")
    assert a.fixed == 1 and a.answer.startswith(ANSWER)
    text = trace.render()
    for part in ("## Goal", FIXED_TOML, f"`{CHECK}` → exit 1, then exit 0", "Unclosed array",
                 "## Final answer", ANSWER):
        assert part in text
    assert "/home/dev" not in text and "[key]" not in text


def test_each_cli_edits_the_file_its_own_way():
    def fix(name):
        return account(f"recorded/{name}").fixes[0]
    assert "Then: Edit build.toml: replace `src = [\"relu/relu.cu\"" in fix("claude-code.jsonl")
    assert "*** Update File: build.toml" in fix("codex-apply-patch.jsonl")
    assert "Then: exec_command: cat > build.toml <<'EOF'" in fix("codex.jsonl")
    assert "Then: edit build.toml" in fix("opencode.json")
    assert "Then: replace build.toml" in fix("gemini-cli.jsonl")


def test_a_permission_denial_is_labelled_not_a_failure():
    trace = load_trace(RECORDED / "claude-code-denied.jsonl")
    a = trace.account
    assert a.fixes == [] and a.fixed == 0
    [denial] = a.denials  # both denials of the same call, collapsed
    assert denial.startswith(f"`Bash: {CHECK}` was denied: This command requires approval")
    assert denial.endswith("(the same happened 2 times)")
    [check] = a.commands
    assert check.render().endswith("→ denied by a permission prompt ×2")
    assert a.files["build.toml"].rstrip() == FIXED_TOML  # the edit was allowed
    text = trace.render()
    assert "## Denied by a permission prompt (not failures of the work)" in text
    assert "not resolved" not in text and "## Failures" not in text
    assert trace.counts()["denials"] == 1 and trace.counts()["errors"] == 0


def test_the_older_gemini_chat_document_reads_like_its_jsonl(tmp_path):
    header, *records = [json.loads(line) for line in lines_of("gemini-cli.jsonl")]
    messages = {}  # the JSON form keeps each message once, in its final state
    for record in records:
        for message in (record.get("$set") or {}).get("messages") or [record]:
            if "type" in message:
                messages[message["id"]] = message
    old = tmp_path / "session-2025-06-01.json"
    old.write_text(json.dumps({**header, "messages": list(messages.values())}, indent=2))
    assert detect_format(old.read_text()) == "gemini-cli"
    assert load_trace(old).render() == load_trace(RECORDED / "gemini-cli.jsonl").render()


# --- the older samples --------------------------------------------------------------------


@pytest.mark.parametrize(("name", "fmt"), [
    ("claude-code-session.jsonl", "claude-code"), ("codex-rollout.jsonl", "codex"),
    ("chat-transcript.md", "markdown"), ("debugging-notes.txt", "text"),
    ("recorded/opencode.json", "opencode"), ("recorded/gemini-cli.jsonl", "gemini-cli")])
def test_the_format_is_detected(name, fmt):
    assert detect_format((TRACES / name).read_text(encoding="utf-8")) == fmt


def test_older_claude_code_session():
    a = account("claude-code-session.jsonl")
    assert a.goal.startswith("Export the invoices table to a CSV that Excel in Germany")
    assert len(a.fixes) == 2 and a.fixed == 2
    assert "AssertionError" in a.fixes[0] and "utf-8-sig" in a.fixes[0]
    assert "No module named 'babel'" in a.fixes[1] and "str.translate" in a.fixes[1]
    assert a.fixes[1].endswith("`Bash: python -m pytest -q && git diff --stat` then succeeded "
                               "(exit 0).")  # the same program, run wider, closes the failure
    assert any(d.startswith("User: Thanks. Don't use f-string replace") for d in a.decisions)
    export = a.files["invoices/export.py"]  # last write + edits, relative to the session cwd
    assert 'encoding="utf-8-sig"' in export and "format_de(r.total)" in export
    assert "str.maketrans" in export and "babel" not in export
    assert set(a.files) == {"invoices/export.py", "tests/test_export.py"}
    statuses = {c.text: c.render() for c in a.commands}
    assert statuses["python -m pytest -q"].endswith("→ exit 2")
    assert a.answer.startswith("Done. The exporter now writes")
    assert not any("<command-name>" in d for d in a.decisions)


def test_older_codex_rollout_with_the_shell_tool():
    a = account("codex-rollout.jsonl")
    assert a.goal.startswith("Add a token-bucket rate limiter")  # not the environment context
    [fix] = a.fixes
    assert "RuntimeError: no running event loop" in fix and "self.session = None" in fix
    assert fix.endswith("Result: `shell: pytest -q` then succeeded (exit 0).")
    assert a.files["ratelimit/bucket.py"].startswith("import asyncio\n\n\nclass TokenBucket:")
    assert "[patched]" in a.files["ratelimit/client.py"]  # its content before is not known
    assert "async def test_burst_then_rate" in a.files["tests/test_bucket.py"]  # heredoc
    assert any("asyncio.Lock" in d for d in a.decisions)
    assert "asyncio_mode = \"auto\"" in a.answer and "All 8 tests pass" in a.answer
    assert [c.render() for c in a.commands if c.text.startswith("pytest")] == [
        "`pytest -q tests/test_client.py` → exit 1", "`pytest -q` → exit 0"]


def test_markdown_transcript():
    a = account("chat-transcript.md")
    assert a.goal.startswith("Our FastAPI image is 1.2 GB")  # the title is not the goal
    [fix] = a.fixes
    assert "Failed to spawn" in fix and "UV_PYTHON_DOWNLOADS=never" in fix
    assert "Then the user said: Works, 210 MB now." in fix
    assert "UV_PYTHON_DOWNLOADS=never" in a.files["Dockerfile"]  # the last version wins
    assert a.files[".dockerignore"].startswith(".venv\n.git")
    assert not any("FROM python" in d for d in a.decisions)  # code lives under files
    assert a.answer.startswith("Yes: without it `COPY . .`")


def test_plain_notes():
    a = account("debugging-notes.txt")
    assert a.goal.startswith("Goal: make the nightly Postgres backup job restore-testable")
    assert len(a.fixes) == 2
    assert "pg_restore: error" in a.fixes[0] and "pg_dump -Fc" in a.fixes[0]
    assert 'role "reporting" does not exist' in a.fixes[1]
    assert "pg_dumpall --roles-only" in a.fixes[1]
    assert any("Keep 14 daily dumps" in d for d in a.decisions + [a.answer])


# --- damaged, empty and useless traces ----------------------------------------------------


def test_a_trace_cut_mid_line_is_counted_and_reported(tmp_path):
    lines = lines_of("claude-code.jsonl")
    [last] = [i for i, line in enumerate(lines) if ANSWER in line and '"assistant"' in line]
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:last]) + lines[last][: len(lines[last]) // 2])
    trace = load_trace(cut)
    [damage] = trace.damaged
    assert (damage.line, damage.cut) == (last + 1, True)
    assert trace.events == last and trace.account.answer == ""  # the cut event is gone...
    assert trace.account.files["build.toml"].rstrip() == FIXED_TOML  # ...the rest is kept
    summary = "\n".join(trace.summary())
    assert f"1 damaged line(s) skipped: line {last + 1} (cut mid-line" in summary
    assert "final answer: no" in summary
    assert trace.counts()["damaged"] == [damage.describe()]


def test_a_broken_line_inside_a_trace_is_counted():
    text = (TRACES / "claude-code-session.jsonl").read_text(encoding="utf-8")
    broken = text.replace("\n", "\n{not json\n", 3)
    assert parse_trace(broken).goal == account("claude-code-session.jsonl").goal
    trace_lines = broken.splitlines()
    assert [i + 1 for i, line in enumerate(trace_lines) if line == "{not json"] == [2, 4, 6]


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("line", [DEEP, '{"type": "assistant", "message": {"content": '
                                  + '[{"content": ' * 490 + '"x"' + "}]" * 490 + "}}"])
def test_a_line_nested_too_deep_is_a_damaged_line_not_a_crash(line):
    """A red-team note: `json.loads` raises `RecursionError`, no `ValueError`, past about 1,000
    levels, and the parsers walk content recursively: one such line in a trace ended
    `generate --from` and `trace show` with a traceback. It is a damaged line; the rest is
    read."""
    text = (TRACES / "claude-code-session.jsonl").read_text(encoding="utf-8")
    first, rest = text.split("\n", 1)
    parsed = parse_trace(f"{first}\n{line}\n{rest}")
    assert parsed.goal == account("claude-code-session.jsonl").goal
    assert parsed.files == account("claude-code-session.jsonl").files


def test_a_document_nested_too_deep_is_damaged_and_trace_show_says_so(tmp_path, capsys):
    deep = tmp_path / "export.json"
    deep.write_text('{\n"parts": ' + DEEP + "}")
    with pytest.raises(GenerationError, match="the JSON document is damaged"):
        load_trace(deep)
    lines = tmp_path / "session.jsonl"
    lines.write_text(DEEP + "\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["trace", "show", str(lines)])
    assert exit_info.value.code == 1
    assert "nothing usable in this trace" in capsys.readouterr().err


def test_a_trace_cut_inside_a_write_names_what_was_lost_and_tells_the_teacher(tmp_path):
    lines = lines_of("claude-code.jsonl")
    [write] = [i for i, line in enumerate(lines) if '"name":"Write"' in line]
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:write]) + lines[write][:600])
    trace = load_trace(cut)
    assert trace.account.files == {} and trace.account.commands == []
    [damage] = trace.counts()["damaged"]
    assert damage.startswith(f"line {write + 1} (cut mid-line")
    assert damage.endswith("it looked like tool_use Write of build.toml)")
    assert trace.render().rstrip().endswith(
        "_1 damaged line(s) of the trace could not be read. The file ends mid-line: the "
        "session may have gone on._")
    (tmp_path / "cut2.jsonl").write_text("".join(lines[:write - 1]) + lines[write - 1][:300])
    with pytest.raises(GenerationError) as caught:  # cut before any work: nothing usable
        load_trace(tmp_path / "cut2.jsonl")
    assert caught.value.message.startswith(
        f"{tmp_path / 'cut2.jsonl'}: nothing usable in this trace: read as a Claude Code "
        "session, it holds only the request")
    assert f"first line {write} (cut mid-line" in caught.value.message


def test_a_codex_trace_cut_before_the_prompt_is_an_error(tmp_path):
    lines = lines_of("codex.jsonl")
    [prompt] = [i for i, line in enumerate(lines) if '"role":"user"' in line
                and "Write build.toml" in line and '"response_item"' in line]
    cut = tmp_path / "rollout.jsonl"
    cut.write_text("".join(lines[:prompt]) + lines[prompt][:80])
    with pytest.raises(GenerationError, match=rf"{cut.name}: nothing usable in this trace: "
                       rf"{prompt} event\(s\) read as a Codex rollout, but none is a user "
                       r"message, a tool call or an answer; 1 damaged line"):
        load_trace(cut)


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_an_empty_trace_is_an_error(tmp_path, content):
    empty = tmp_path / "session.jsonl"
    empty.write_text(content)
    with pytest.raises(GenerationError, match="session.jsonl: nothing usable in this trace: "
                       "the file is empty") as caught:
        read_trace(empty)
    assert "--from" in caught.value.hint


def test_a_damaged_json_document_is_an_error(tmp_path):
    text = (RECORDED / "opencode.json").read_text(encoding="utf-8")
    cut = tmp_path / "export.json"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(GenerationError, match="read as a OpenCode export, but the JSON document "
                       r"is damaged at line \d+ \(cut before its end"):
        load_trace(cut)


def test_an_unreadable_trace_is_a_clear_error(tmp_path):
    with pytest.raises(GenerationError, match="cannot read trace"):
        read_trace(tmp_path / "missing.jsonl")


# --- collapsing, the budget, redaction ----------------------------------------------------


def claude_event(role: str, *blocks: dict) -> str:
    return json.dumps({"type": role, "sessionId": "s", "cwd": "/w",
                       "message": {"role": role, "content": list(blocks)}}) + "\n"


def test_repeated_passages_are_collapsed_and_counted():
    sentence = "The cache must be keyed by the lock file, because the venv depends on it."
    events = [claude_event("user", {"type": "text", "text": "Speed up the CI cache."})]
    for i in range(56):
        events += [claude_event("assistant", {"type": "text", "text": sentence},
                                {"type": "tool_use", "id": f"t{i}", "name": "Bash",
                                 "input": {"command": "make ci"}}),
                   claude_event("user", {"type": "tool_result", "tool_use_id": f"t{i}",
                                         "content": "ok"})]
    a = parse_trace("".join(events))
    assert a.decisions == [sentence] and a.collapsed == 55
    assert [c.render() for c in a.commands] == ["`make ci` → exit 0 ×56"]
    assert "_55 repeated passage(s) collapsed._" in render(a)


def test_the_budget_cuts_the_least_valuable_parts_first_and_says_so():
    a = account("recorded/codex.jsonl")
    full = render(a, 100_000)
    assert "Cut to fit" not in full
    for budget in (1600, 1200, 700, 400):
        text = render(a, budget)
        assert len(text) <= budget and a.goal in text
    assert "## Final answer" not in render(a, 1600)  # the least valuable goes first
    assert render(a, 1600).endswith("_Cut to fit 1600 characters: the final answer._\n")
    assert "## Failures" in render(a, 1200) and "## Failures" not in render(a, 700)
    assert "Cut to fit 1200 characters: failures trimmed; the final answer." in render(a, 1200)
    assert "failures; the final answer" in render(a, 700) and FIXED_TOML in render(a, 700)
    assert "2 of 2 commands; failures" in render(a, 400) and FIXED_TOML in render(a, 400)
    text = render(a, 1200)
    assert text.index("## Goal") < text.index("## Final files") < text.index("## Commands") \
        < text.index("## Failures")


def test_a_huge_file_cannot_starve_the_rest():
    a = build_account([Step("user", "Vendor the dataset."),
                       Step("call", tool="Write", args={"file_path": "data.csv",
                                                        "content": "x,y\n" * 20_000}),
                       Step("result", "ok"),
                       Step("call", tool="Bash", args={"command": "pytest -q"}),
                       Step("result", "1 passed"),
                       Step("assistant", "Vendored.")], "claude-code")
    text = render(a, 4000)
    assert len(text) <= 4000 and "`pytest -q` → exit 0" in text and "Vendored." in text
    assert "characters cut]\n```" in text  # trimmed inside its fence
    assert "data.csv trimmed" in text


def test_read_trace_redacts_secrets_and_reports_progress(tmp_path):
    trace = tmp_path / "s.jsonl"
    trace.write_text(claude_event("user", {"type": "text", "text":
                     "Deploy with HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz and key sk-proj-"
                     "ABCDEFGHIJKLMNOPQRSTUVWX, password: hunter2hunter2 and mysecretvalue"})
                     + claude_event("assistant", {"type": "text", "text": "Deployed."}))
    lines: list[str] = []
    text = read_trace(trace, secrets=["mysecretvalue"], progress=lines.append)
    for secret in ("hf_abcdefghij", "sk-proj-ABC", "hunter2hunter2", "mysecretvalue"):
        assert secret not in text
    assert f"HF_TOKEN={MASK}" in text and f"password: {MASK}" in text
    assert redact("no secrets here") == "no secrets here"
    assert lines[0] == "trace s.jsonl: events: 2 read, 2 used, 0 not used (metadata, " \
        "rewritten copies); no damaged line"


# --- file edits ---------------------------------------------------------------------------


def test_apply_patch_adds_updates_moves_and_deletes():
    files = Files({"a.py": "x = 1\ny = 2\n", "old.py": "gone\n"})
    files.apply_patch("*** Begin Patch\n*** Add File: b.py\n+print('b')\n+\n"
                      "*** Update File: a.py\n*** Move to: pkg/a.py\n@@\n x = 1\n-y = 2\n+y = 3\n"
                      "*** Delete File: old.py\n*** End Patch\n")
    assert files.content == {"b.py": "print('b')\n\n", "pkg/a.py": "x = 1\ny = 3\n"}


def test_edits_start_from_what_the_trace_knows():
    files = Files()
    files.apply(Step("call", tool="Edit", args={"file_path": "k.py", "old_string": "a = 1",
                                                "new_string": "a = 2", "original": "a = 1\n"}))
    files.apply(Step("call", tool="MultiEdit", args={"file_path": "m.py", "edits": [
        {"old_string": "q", "new_string": "r"}]}))
    assert files.content["k.py"] == "a = 2\n"  # Claude's record of the file before the edit
    assert files.content["m.py"].startswith("[... the file before this edit is not in the trace")


def test_a_command_that_changes_a_known_file_leaves_a_note():
    a = build_account([Step("user", "Fix the config."),
                       Step("call", tool="exec_command", args={
                           "command": "cat > app.cfg <<'EOF'\nport = 80\nEOF"}),
                       Step("result", "", exit_code=0),
                       Step("call", tool="exec_command", args={
                           "command": "sed -i 's/80/8080/' app.cfg"}),
                       Step("result", "", exit_code=0)], "codex")
    assert a.files["app.cfg"] == "port = 80\n"
    assert a.file_notes["app.cfg"] == [
        "changed afterwards by `sed -i 's/80/8080/' app.cfg` (not replayed here)"]
    assert "note: changed afterwards by `sed -i" in render(a)


# --- hubskills trace show -----------------------------------------------------------------


def test_trace_show_prints_what_the_teacher_sees_with_the_counts():
    path = RECORDED / "codex.jsonl"
    result = CliRunner().invoke(cli, ["trace", "show", str(path)], catch_exceptions=False)
    assert result.exit_code == 0
    assert f"{path}: Codex rollout (codex)" in result.output
    assert "events: 42 read, 14 used, 28 not used" in result.output
    assert "account: 1 file(s), 2 command(s) (4 run(s)), 1 failure(s) (1 fixed)" in result.output
    assert f"cut to fit {DEFAULT_BUDGET} characters: nothing" in result.output
    assert result.output.endswith(load_trace(path).render())  # exactly the teacher's text


def test_trace_show_json_and_a_small_budget():
    result = CliRunner().invoke(cli, ["trace", "show", str(RECORDED / "gemini-cli.jsonl"),
                                      "--budget", "900", "--json"], catch_exceptions=False)
    data = json.loads(result.output)
    assert data["format"] == "gemini-cli" and data["budget"] == 900
    assert (data["files"], data["commands"], data["errors"], data["fixed"]) == (1, 1, 1, 1)
    assert len(data["account"]) <= 900 and "the final answer" in data["cut"]


def test_trace_show_of_an_empty_file_is_an_error(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(SystemExit) as info:
        main(["trace", "show", str(empty)])
    err = capsys.readouterr().err
    assert info.value.code == 1
    assert f"Error: {empty}: nothing usable in this trace: the file is empty" in \
        " ".join(err.split())
