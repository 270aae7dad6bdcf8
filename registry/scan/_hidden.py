"""Rules for text people cannot see but agents read: invisible characters and comments.

A comment is a "hidden instruction" (high) only when its text reads as an instruction aimed at
the agent: overriding earlier instructions, addressing the assistant, hiding something from the
user, or sending secrets or user data somewhere. Template notes (`<!-- TODO: fill in -->`,
`<!-- Example: run the script -->`) are not: info, or low in SKILL.md, which every agent loads.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator

from registry.scan._doc import Doc
from registry.scan.findings import Finding

# Zero-width, bidi and tag characters. ZWJ/ZWNJ pass only between two visible non-ASCII
# characters (emoji sequences, Persian, Indic scripts); next to ASCII or each other they hide text.
_HIDDEN = re.compile(r"[\u200b\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]"
                     r"|(?<![^\x00-\x7f\u200c\u200d])[\u200c\u200d]"
                     r"|[\u200c\u200d](?![^\x00-\x7f\u200c\u200d])")
_SENSITIVE = (r"secrets?\b|passwords?|passphrases?|credentials?|api[ _-]?keys?|private[ _-]?keys?"
              r"|tokens?\b|~/\.\w+|\$HOME\b|\.ssh\b|\.aws\b|\.env\b|\.netrc\b|cookies\b"
              r"|env(?:ironment)?[ _-]?var(?:iable)?s\b|keychain"
              r"|(?:shell|bash|zsh|browser|chat|conversation) history|user'?s? (?:files|data)")
_INSTRUCTION = re.compile(
    # overriding what came before
    r"\b(?:ignore|disregard|forget)\b.{0,40}?\b(?:previous|prior|above|earlier|preceding|system"
    r"|original|all|any|your)\b.{0,30}?\b(?:instructions?|rules?|prompts?|guidelines?"
    r"|directions?|messages?|context)\b"
    # addressing the agent, or hiding from the user
    r"|\b(?:note|message|instructions?)\s+(?:to|for)\s+(?:the\s+)?(?:assistant|ai|agent|model"
    r"|llm|claude|gpt|copilot|codex)\b|\bas an? (?:ai|assistant|language model)\b"
    r"|\bsystem prompt\b|\b(?:from now on|you are now|your (?:new|real|true) (?:task|goal|role"
    r"|instructions?))\b"
    r"|\b(?:do not|don't|never)\s+(?:tell|mention|reveal|inform|show|disclose)\b.{0,30}?"
    r"\b(?:user|human|anyone|them)\b|\bwithout (?:telling|asking|informing|notifying)\b"
    r"|\b(?:secretly|silently|covertly|quietly)\s+(?:send|upload|run|execute|add|insert|copy"
    r"|post|delete|remove|install|download|read)\b"
    # sending secrets or user data out, or fetching and running code
    rf"|\b(?:send|upload|post|transmit|forward|exfiltrat\w*|e-?mail|leak|paste|reveal|dump)\b"
    rf".{{0,60}}?(?:{_SENSITIVE})"
    r"|\b(?:run|execute|exec|eval)\b.{0,30}?\b(?:curl|wget|iwr|Invoke-WebRequest)\b"
    r"|\b(?:curl|wget)\b[^|\n]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b",
    re.I | re.S)
_MD_COMMENT = re.compile(
    r"^ {0,3}\[[^\]\n]*\]:[ \t]*(?:#|<>)[ \t]*(?:\(([^\n]*)\)|\"([^\n]*)\"|'([^\n]*)')[ \t]*$",
    re.M)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)
_MAX_COMMENT = 20_000  # instruction search reads at most this much of one comment


def hidden_unicode(doc: Doc) -> Iterator[Finding]:
    """Zero-width, bidi and Unicode tag characters: high (they hide text from reviewers)."""
    pos = 1 if doc.text.startswith("\ufeff") else 0  # a byte-order mark at the start is harmless
    while not doc.text.isascii() and (m := _HIDDEN.search(doc.text, pos)):
        eol = pos = (doc.text.find("\n", m.start()) + 1) or len(doc.text)
        chars = _HIDDEN.findall(doc.text, m.start(), eol)  # the whole line at C speed
        tags = "".join(chr(ord(c) - 0xE0000) for c in chars if ord(c) >= 0xE0000)
        named = sorted(f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in set(chars)
                       if ord(c) < 0xE0000)
        parts = [f"{len(chars) - len(tags)}x invisible/bidi ({', '.join(named)})"] if named else []
        if tags:
            shown = "".join(c if c.isprintable() else "?" for c in tags[:40])
            parts.append(f"{len(tags)} Unicode tag characters hiding text {shown!r}")
        yield doc.find("hidden-unicode", "high", "; ".join(parts), m.start())


def _comment(doc: Doc, kind: str, body: str, offset: int, in_code: bool = False) -> Finding:
    what = kind.replace("-", " ")
    if m := _INSTRUCTION.search(body[:_MAX_COMMENT]):
        return doc.find(f"{kind}-instructions", "high", f"hidden {what} contains instructions "
                        f"({' '.join(m.group().lower().split())[:80]!r}); agents read it, "
                        "people do not", offset)
    if in_code:
        return doc.find(kind, "info", f"{what} in a code block (shown when rendered)", offset)
    if doc.path == "SKILL.md":
        return doc.find(kind, "low", f"hidden {what} (invisible when rendered)", offset)
    return doc.find(kind, "info", f"{what} (a note or template placeholder)", offset)


def _code_blocks(doc: Doc) -> list[int]:
    """Start and end offsets of fenced code blocks in prose, flattened: [s0, e0, s1, e1, ...]."""
    bounds: list[int] = []
    opened = ""
    for m in _FENCE.finditer(doc.text) if doc.is_prose else ():
        if not opened:
            opened = m.group(1)
            bounds.append(m.start())
        elif m.group(1)[0] == opened[0] and len(m.group(1)) >= len(opened):
            opened = ""
            bounds.append(m.end())
    return bounds + [len(doc.text)] if opened else bounds


def comments(doc: Doc) -> Iterator[Finding]:
    """HTML comments anywhere and markdown link-comments in prose (in a fenced code block a
    comment is shown when rendered, so it is not hidden text)."""
    code, pos = _code_blocks(doc), 0
    while (start := doc.text.find("<!--", pos)) >= 0:
        end = doc.text.find("-->", start + 4)
        end = len(doc.text) if end < 0 else end  # unterminated: hides the rest of the file
        in_code = bisect.bisect_right(code, start) % 2 == 1
        yield _comment(doc, "html-comment", doc.text[start + 4:end], start, in_code)
        pos = end + 3
    for m in _MD_COMMENT.finditer(doc.text) if doc.is_prose else ():
        in_code = bisect.bisect_right(code, m.start()) % 2 == 1
        yield _comment(doc, "markdown-comment", next(g for g in m.groups() if g), m.start(),
                       in_code)
