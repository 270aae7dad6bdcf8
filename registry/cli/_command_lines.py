"""A shell command cut into lines that paste into a shell as printed (`_output.command`,
doctor's fixes): pure text, no printing."""

from __future__ import annotations

import re


def command_lines(command: str, width: int, indent: str = "  ") -> list[str]:
    """`command` as lines that paste into a shell as printed: one per `&&` step, each cut
    between words (never inside quotes) with a ` \\` continuation to fit `width`."""
    lines = []
    for step in command.split(" && "):
        line, words = indent, 0
        for word in re.findall(r"""(?:'[^']*'|"[^"]*"|\S)+""", step):
            if words and len(line) + 1 + len(word) + 2 > width:
                lines.append(f"{line} \\")
                line, words = indent + "  ", 0
            line, words = f"{line}{' ' * bool(words)}{word}", words + 1
        lines.append(line)
    return lines
