"""The content rules: one private module per concern (`_hidden`, `_commands`, `_leaks`,
`_reach`), composed here into `scan_text`. What each severity means is in `_doc`.

Regexes are compiled once and stay linear on hostile input; a hostile file's findings are capped
per rule and per code, so a scan's output stays readable and its cost bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import islice

from registry.scan import _commands, _hidden, _leaks, _reach
from registry.scan._doc import Doc
from registry.scan.findings import Finding, sort_key

_MAX_PER_CODE = 20  # per file; the rest collapse into one "N more" finding
_MAX_PER_RULE = 1000  # bounds the work a hostile file can cause; counts past it are "N+ more"

_RULES: tuple[Callable[[Doc], Iterator[Finding]], ...] = (
    _hidden.hidden_unicode, _hidden.comments, _commands.exec_patterns, _commands.destructive,
    _commands.base64_blobs, _leaks.exfiltration, _leaks.secrets, _reach.allowed_tools,
    _reach.hooks, _reach.links_outside)


def scan_text(path: str, text: str) -> list[Finding]:
    """Run the content rules on one file's text; `path` is the posix path inside the skill."""
    doc = Doc(path, text)
    findings: list[Finding] = []
    per_code: dict[str, list[Finding]] = {}
    for rule in _RULES:
        for finding in islice(rule(doc), _MAX_PER_RULE):
            per_code.setdefault(finding.code, []).append(finding)
    for code, found in per_code.items():
        findings += found[:_MAX_PER_CODE]
        if len(found) > _MAX_PER_CODE:
            more = f"{len(found) - _MAX_PER_CODE}{'+' if len(found) >= _MAX_PER_RULE else ''}"
            findings.append(Finding(code, found[0].severity, f"{more} more '{code}' findings "
                                    "not listed", path))
    return sorted(findings, key=sort_key)
