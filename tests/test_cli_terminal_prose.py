"""Prose on a terminal as a newcomer reads it: `hubskills leaderboard` with its stdout and
stderr on a pseudo-terminal of 80 columns wraps its legend and its "left out" note at spaces
(the terminal would cut words in two), each line within the width, and `pull`'s indented
lines keep their indent when they wrap."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

from cli_process import cli_env, read_all

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_a_terminal(*args: str, cwd, python: tuple[str, ...] = ("-m", "registry.cli")) -> list[str]:
    """`hubskills ARGS` (or `python PYTHON ARGS`) with stdout and stderr on an 80-column
    pseudo-terminal: its lines."""
    primary, secondary = pty.openpty()
    try:
        done = subprocess.Popen([sys.executable, *python, *args], cwd=cwd,
                                env=cli_env(COLUMNS="80"), stdout=secondary, stderr=secondary,
                                stdin=subprocess.DEVNULL)
        os.close(secondary)
        text = ANSI.sub("", read_all(primary)).replace("\r", "")
        assert done.wait(timeout=180) == 0, text
    finally:
        os.close(primary)
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    return lines


def test_leaderboard_prose_on_an_80_column_terminal_wraps_at_spaces(tmp_path):
    prose = " ".join(line.strip() for line in on_a_terminal("leaderboard", cwd=tmp_path))
    assert "paired score 95% interval over cases" in prose  # whole words, in order
    assert "a wider terminal or --json shows them" in prose


def test_a_pulls_indented_lines_keep_their_indent_when_they_wrap(tmp_path):
    lines = on_a_terminal("pull", "hubskills/agent-skill-md", cwd=tmp_path)
    assert lines[0].startswith("Installed hubskills/agent-skill-md")
    assert len(lines) > 4 and all(line.startswith("  ") for line in lines[1:])


def test_coloured_indented_lines_keep_their_indent_when_they_wrap(tmp_path):
    """An author's walk: on a terminal, validate's coloured warnings wrapped to column 0 (rich
    wrapped the markup itself), so three warnings ran together; piped, they kept their indent."""
    import json

    from cli_process import hubskills

    assert hubskills("new", "draft", cwd=tmp_path).returncode == 0
    suite = tmp_path / "draft" / "evals" / "evals.json"
    assert json.loads(suite.read_text())["cases"]  # the scaffold's placeholders: warnings
    lines = on_a_terminal("validate", "draft", cwd=tmp_path)
    assert lines[0].startswith("draft: valid") and len(lines) > 4, lines
    assert all(line.startswith("  ") for line in lines[1:] if line), lines
    assert not any(line.endswith(" ") for line in lines), lines



GENERATED = """
from pathlib import Path
from registry.cli.generate import render_generate_report
from registry.generate.report import GenerateReport
render_generate_report(GenerateReport(
    name="parse-csv", path=Path("skills/parse-csv"), teacher="embedded/smollm2-135m",
    students=["embedded/smollm2-135m"], cases=4, teacher_input_tokens=1234,
    teacher_output_tokens=5678, suite_verified=True))
"""


def test_generates_summary_keeps_each_count_with_its_noun_at_80_columns(tmp_path):
    """A walk: at 80 columns `generate`'s summary ended a line with `· 0` and began the next
    with `refinement rounds`. Each part is whole on its line now, piped and on a terminal."""
    from cli_process import cli_env

    piped = subprocess.run([sys.executable, "-c", GENERATED], capture_output=True, text=True,
                           env=cli_env(COLUMNS="80"), check=True).stdout
    for lines in (piped.splitlines(), on_a_terminal(cwd=tmp_path, python=("-c", GENERATED))):
        assert all(len(line) <= 80 for line in lines), lines
        assert any(line.endswith("0 refinement rounds") for line in lines), lines
        assert not any(re.search(r"\d$", line) for line in lines), lines
        assert any(line.startswith("teacher: 1234 in / 5678 out tokens") for line in lines)


def test_prose_never_ends_a_line_on_a_number_whose_noun_begins_the_next(monkeypatch, capsys):
    """Any prose: a count and its noun wrap together (`12 answers`, `3.5 s`, `40%`)."""
    from registry.cli import _output as out

    monkeypatch.setenv("COLUMNS", "40")
    words = "a run of 12 answers took about 3.5 s and passed 40% of cases of 7 skills"
    out.result(f"note: {words}")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 1 and all(len(line) <= 40 for line in lines), lines
    assert not any(re.search(r"\d%?$", line) for line in lines), lines
    assert " ".join(lines) == f"note: {words}"
