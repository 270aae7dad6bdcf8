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


def _escaped_one_by_one(text: str) -> str:
    """The rule `--json` had, one Python call per character: each character but a tab, a
    newline or printable ASCII, as its `\\u` escape when its category is C."""
    import re
    import unicodedata

    def unseen(found: re.Match[str]) -> str:
        char = found.group()
        return json.dumps(char)[1:-1] if unicodedata.category(char)[0] == "C" else char

    return re.sub(r"[^\t\n\x20-\x7e]", unseen, text)


MIXED = ("plain ascii\t中文 字 👩\u200d💻 می\u200cخواهم \u202eevil\u202c \ue000 \U000f0000 "
         "\x85\x9b31m \x7f \u3000 \u00a0 é \ud800 \U000e0001 \u0378 \u2028 end")


def test_json_escapes_exactly_what_the_per_character_rule_did(capsys):
    """`--json` looks at a line at a time (a Python call per character made 800K CJK
    characters take 0.2 s): the joiners, bidi overrides, private use, C1 controls and
    unassigned code points are still `\\u` escapes, CJK and emoji still raw."""
    from registry.cli._output import _NOT_ASCII, _json_unseen, as_json

    data = {"text": MIXED, "lines": [MIXED, "中文", "ascii", "\u200d"], "n": 1}
    as_json(data)
    printed = capsys.readouterr().out
    dumped = json.dumps(data, indent=2, default=str, ensure_ascii=False)
    assert printed == _escaped_one_by_one(dumped) + "\n"
    assert json.loads(printed) == data
    assert "\\u200d" in printed and "\\u200c" in printed and "\\u202e" in printed
    assert "\\u0085" in printed and "\\ue000" in printed and "中文" in printed and "👩" in printed
    every = "".join(map(chr, range(0x110000)))  # each code point, tab and newline among them
    assert _NOT_ASCII.sub(_json_unseen, every) == _escaped_one_by_one(every)
