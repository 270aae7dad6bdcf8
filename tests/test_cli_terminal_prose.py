"""Prose on a terminal as a newcomer reads it: `hubskills leaderboard` with its stdout and
stderr on a pseudo-terminal of 80 columns wraps its legend and its "left out" note at spaces
(the terminal would cut words in two), each line within the width."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

from cli_process import cli_env

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode()


def test_leaderboard_prose_on_an_80_column_terminal_wraps_at_spaces(tmp_path):
    primary, secondary = pty.openpty()
    try:
        done = subprocess.Popen([sys.executable, "-m", "registry.cli", "leaderboard"],
                                cwd=tmp_path, env=cli_env(COLUMNS="80"), stdout=secondary,
                                stderr=secondary, stdin=subprocess.DEVNULL)
        os.close(secondary)
        text = ANSI.sub("", _read_all(primary)).replace("\r", "")
        assert done.wait(timeout=180) == 0, text
    finally:
        os.close(primary)
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    prose = " ".join(line.strip() for line in lines)
    assert "paired t 95% interval over cases" in prose  # whole words, in order
    assert "a wider terminal or --json shows them" in prose
