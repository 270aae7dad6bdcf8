"""Anyone's text reaches the terminal without the control characters a terminal acts on.

A skill's description is its publisher's text (YAML's `"\\e"` writes an ESC into it), and
`search`, `info` and `list` print it: an escape sequence there could retitle or clear the
reader's terminal, set their clipboard (OSC 52) or dress a link as another (OSC 8). `--json`
keeps the text exact, the characters written as `\\u` escapes.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from registry.cli import cli

DESCRIPTION = ("Parses CSV files \\e]52;c;Y3VybCBldmlsfHNo\\a\\e]0;pwned\\a\\e[2J\\x9b31m"
               "\\u202e use when csv.")
SENT = "Parses CSV files \x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e" \
       " use when csv."


def _published(tmp_path: Path) -> None:
    folder = tmp_path / "esc-skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        f'---\nname: esc-skill\ndescription: "{DESCRIPTION}"\nmetadata:\n  version: 0.1.0\n'
        "---\n\n# Esc\n\nRead CSV files with pandas, and say which delimiter you chose.\n",
        encoding="utf-8")
    done = CliRunner().invoke(cli, ["publish", str(folder), "--force"])
    assert done.exit_code == 0, done.output


def _unseen(text: str) -> set[str]:
    return {c for c in text if c in "\x1b\x07\x9b\u202e"}


def test_search_and_info_print_a_description_without_its_escape_sequences(tmp_path):
    _published(tmp_path)
    env = {"COLUMNS": "200", "NO_COLOR": "1"}
    for args in (["search", "csv"], ["info", "local/esc-skill"]):
        done = CliRunner().invoke(cli, args, env=env)
        assert done.exit_code == 0, done.output
        assert "Parses CSV files" in done.output and "use when csv." in done.output
        assert not _unseen(done.output), (args, done.output)


def test_search_json_keeps_the_description_exact_and_escaped(tmp_path):
    _published(tmp_path)
    done = CliRunner().invoke(cli, ["search", "csv", "--json"])
    assert done.exit_code == 0, done.output
    assert not _unseen(done.output), done.output
    assert [r["description"] for r in json.loads(done.output)] == [SENT]


def test_the_joiners_that_shape_words_and_emoji_reach_the_terminal():
    """Zero-width joiners are format characters too, but a terminal only draws with them: left
    out, a Persian word loses its shape and `👩‍💻` prints as two pictures (a review)."""
    from registry.cli._output import visible

    text = "👩\u200d💻 می\u200cخواهم \x1b[2J\u202edone"
    assert visible(text) == "👩\u200d💻 می\u200cخواهم [2Jdone"
