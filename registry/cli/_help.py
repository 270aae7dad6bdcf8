"""`--help` as click writes it, except that a web address is never cut into pieces.

click wraps an option's help to its column (46 characters beside the options) and cuts a word
longer than that wherever the line ends: a docs page's address (`registry._docs.doc`, 76
characters and more) came out of `eval --help` in three pieces that a reader can neither click
nor copy. Here a help text that holds an address is wrapped at spaces only, so the address is
whole on a line of its own: in the column when it fits there, else from the options' margin,
else wider than the terminal (the one line that may be; a terminal wraps it, still one link).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable

import click
from click.formatting import wrap_text

#: A web address in help text, without the punctuation that closes the sentence around it.
ADDRESS = re.compile(r"https?://[^\s()]*[^\s().,;:]")


class HelpFormatter(click.HelpFormatter):
    """click's formatter; `write_dl` (the options and commands lists) keeps addresses whole."""

    def write_dl(self, rows: Iterable[tuple[str, str]], col_max: int = 30,
                 col_spacing: int = 2) -> None:
        """Rows as click writes them (same columns, same wrapping) but for an address's text."""
        rows = list(rows)
        first_col = min(max((len(first) for first, _ in rows), default=0), col_max) + col_spacing
        text_width = max(self.width - first_col - 2, 10)
        column, margin = " " * (first_col + self.current_indent), " " * self.current_indent
        for first, second in rows:
            self.write(f"{margin}{first}")
            if not ADDRESS.search(second):
                lines = wrap_text(second, text_width, preserve_paragraphs=True).splitlines()
            else:  # at spaces only: an address is one word, never cut at a hyphen
                lines = textwrap.wrap(second, text_width, break_long_words=False,
                                      break_on_hyphens=False)
            inline = bool(lines) and len(first) <= first_col - col_spacing \
                and len(lines[0]) <= text_width
            if inline:
                self.write(" " * (first_col - len(first)) + lines.pop(0))
            for line in lines:
                fits = len(column) + len(line) <= self.width or len(line) <= text_width
                self.write("\n" + (column if fits else margin) + line)
            self.write("\n")


class HelpContext(click.Context):
    """A context whose `--help` is written by `HelpFormatter`."""

    formatter_class = HelpFormatter


def use_help_formatter(command: click.Command) -> click.Command:
    """`command` and every subcommand under it, their `--help` written by `HelpFormatter`."""
    command.context_class = HelpContext
    for sub in getattr(command, "commands", {}).values():
        use_help_formatter(sub)
    return command
