"""A suite's regular expressions, matched in linear time by RE2, never by Python's `re`.

A `regex`, `not_regex` or `file_regex` check and a JSON Schema's `pattern` come from a suite,
which may be anyone's: Python's backtracking `re` takes minutes on `^(.+)+Q` over a long answer,
holding the process (in the Space, every visitor) all along. Suites keep Python's syntax and
flags; `compile_pattern` translates a pattern to RE2 with the same meaning, and raises
`UnsafePattern` for what RE2 cannot express (backreferences, lookarounds, conditionals, atomic
groups, possessive repeats, the `a` flag, counts over 1000): the check engine runs those only in
the sandbox, and every other caller refuses them.

Kept from Python: `i m s x` (inline and scoped too), Unicode `\\d \\w \\s` and their negations,
`\\Z`, `{,n}`, `\\N{...}`, and `$` without `m` matching before a final newline. Two differences
stay: `\\b`/`\\B` are ASCII word boundaries (they differ beside a non-ASCII letter or digit), and
a `$` before a final newline takes the newline into the matched text (not into the verdict).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from registry.errors import HubskillsError

_WORD = r"\p{L}\p{N}_"  # Python's Unicode \w: str.isalnum() or "_"
_SPACE = r"\t-\r\x{1c}-\x{20}\x{85}\p{Z}"  # Python's Unicode \s: str.isspace()
_IN_CLASS = {"d": r"\p{Nd}", "w": _WORD, "s": _SPACE}
_SHORTHAND = {"d": r"\p{Nd}", "D": r"\P{Nd}", "w": f"[{_WORD}]", "W": f"[^{_WORD}]",
              "s": f"[{_SPACE}]", "S": f"[^{_SPACE}]"}
_CHARS = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_HEX = {"x": 2, "u": 4, "U": 8}
_VERBOSE_SPACE = " \t\n\r\v\f"
_REPEAT = re.compile(r"(\d*)(?:(,)(\d*))?\}")  # after "{": {m}, {m,}, {,n}, {m,n}
_INLINE = re.compile(r"([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")  # after "(?": flags, then ":" or ")"
_MAX_REPEAT = 1000  # RE2's largest count
_GROUPS = {"=": "a lookahead (?=", "!": "a lookahead (?!", "<=": "a lookbehind (?<=",
           "<!": "a lookbehind (?<!", "P=": "a backreference (?P=", ">": "an atomic group (?>",
           "(": "a conditional group (?(", "<": "a group form (?<"}


class UnsafePattern(HubskillsError):
    """A suite's pattern RE2 cannot match in linear time; `why` names the construct (the
    pattern is empty when the construct is the schema's, not one pattern's)."""

    def __init__(self, pattern: str, why: str) -> None:
        super().__init__(
            f"{f'/{pattern}/' if pattern else 'the schema'} uses {why}, which has no "
            "linear-time match",
            hint="rewrite the pattern without it, or grade the answer with a python check")
        self.pattern, self.why = pattern, why


class Match:
    """Where a pattern matched: `group(0)` is the matched text, as with `re`, decoded only
    when read (a verdict needs only whether it matched; `verify` regrades hundreds)."""

    __slots__ = ("_found",)

    def __init__(self, found: Any) -> None:
        self._found = found  # RE2's match over the UTF-8 bytes

    @property
    def text(self) -> str:
        """The matched text."""
        return self._found.group(0).decode("utf-8", "replace")

    def group(self, index: int = 0) -> str:
        """The matched text (only group 0 is kept)."""
        return self.text


class Pattern:
    """A pattern compiled for RE2: `search` runs in time linear in the text."""

    def __init__(self, source: str, flags: str, compiled: Any) -> None:
        self.pattern, self.flags, self._compiled = source, flags, compiled

    def search(self, text: str) -> Match | None:
        """The first (leftmost) match in `text`, or None."""
        # Bytes both ways: an answer may hold lone surrogates, which do not encode as UTF-8.
        found = self._compiled.search(text.encode("utf-8", "surrogatepass"))
        return None if found is None else Match(found)


def compile_pattern(pattern: str, flags: str = "") -> Pattern:
    """`pattern` (Python syntax, with `flags` among "imsx") compiled for RE2.

    Raises:
        UnsafePattern: RE2 cannot express it (run it in the sandbox, or refuse it).
    """
    compiled = _compile(pattern, flags)
    if isinstance(compiled, UnsafePattern):
        raise compiled
    return compiled


@functools.lru_cache(maxsize=512)
def _compile(pattern: str, flags: str) -> Pattern | UnsafePattern:
    import re2

    try:
        translated = _Translation(pattern, flags).run()
    except UnsafePattern as unsafe:
        return unsafe
    options = re2.Options()
    options.case_sensitive = "i" not in flags
    options.dot_nl = "s" in flags
    options.never_capture = True  # only the whole match is read
    options.log_errors = False
    try:
        return Pattern(pattern, flags, re2.compile(translated.encode("utf-8", "surrogatepass"),
                                                   options))
    except re2.error as err:  # a count RE2 cannot expand, a name it refuses, too large
        detail = err.args[0].decode(errors="replace") if err.args and isinstance(
            err.args[0], bytes) else str(err)
        return UnsafePattern(pattern, f"what RE2 refuses ({detail})")


def _lit(char: str) -> str:
    """`char` as an RE2 literal, in a class or out of one."""
    return char if char.isascii() and (char.isalnum() or char == "_") \
        else f"\\x{{{ord(char):x}}}"


class _Translation:
    """One pass over a pattern Python's `re` has compiled (so its syntax is valid)."""

    def __init__(self, pattern: str, flags: str) -> None:
        self.src, self.i = pattern, 0
        self.scopes = [set(flags)]  # the flags in force, one set per open group

    def run(self) -> str:
        return "".join(self._pieces())

    def _unsafe(self, why: str) -> UnsafePattern:
        return UnsafePattern(self.src, why)

    def _take(self, count: int = 1) -> str:
        text = self.src[self.i:self.i + count]
        self.i += count
        return text

    def _pieces(self) -> Iterator[str]:
        while self.i < len(self.src):
            char = self._take()
            verbose = "x" in self.scopes[-1]
            if verbose and char in _VERBOSE_SPACE:
                continue
            if verbose and char == "#":
                end = self.src.find("\n", self.i)
                self.i = len(self.src) if end < 0 else end + 1
                continue
            yield self._piece(char)

    def _piece(self, char: str) -> str:
        multiline = "m" in self.scopes[-1]
        if char == "\\":
            return self._escape()
        if char == "[":
            return self._class()
        if char == "(":
            return self._group()
        if char == ")":
            self.scopes.pop()
            return ")"
        if char in "*+?":
            return char + self._lazy()
        if char == "{":
            return self._repeat()
        if char == "^":
            return "(?m:^)" if multiline else r"\A"
        if char == "$":
            return "(?m:$)" if multiline else r"(?:\n?\z)"
        return char if char in ".|" else _lit(char)

    def _lazy(self) -> str:
        if self.src.startswith("+", self.i):
            raise self._unsafe("a possessive repeat")
        return self._take() if self.src.startswith("?", self.i) else ""

    def _repeat(self) -> str:
        found = _REPEAT.match(self.src, self.i)
        if found is None or found.group(0) == "}":
            return _lit("{")  # Python reads a "{" that starts no count as itself
        self.i = found.end()
        low, comma, high = found.groups()
        low, high = low or "0", (high if comma else low)
        if int(low) > _MAX_REPEAT or (high and int(high) > _MAX_REPEAT):
            raise self._unsafe(f"a repeat count over {_MAX_REPEAT}")
        count = low if not comma else f"{low},{high}"
        return "{" + count + "}" + self._lazy()

    def _group(self) -> str:
        if not self.src.startswith("?", self.i):
            self.scopes.append(set(self.scopes[-1]))
            return "("
        self.i += 1
        if self.src.startswith("P<", self.i):
            end = self.src.index(">", self.i)
            name = self._take(end + 1 - self.i)
            self.scopes.append(set(self.scopes[-1]))
            return "(?" + name
        if self.src.startswith(":", self.i):
            self.i += 1
            self.scopes.append(set(self.scopes[-1]))
            return "(?:"
        if self.src.startswith("#", self.i):
            self.i = self.src.index(")", self.i) + 1  # a comment: Python ends it at the first ")"
            return ""
        for start, why in _GROUPS.items():
            if self.src.startswith(start, self.i):
                raise self._unsafe(why)
        return self._flags()

    def _flags(self) -> str:
        """`(?imsx)` (global) or `(?imsx-imsx:...)` (scoped), after the "(?"."""
        found = _INLINE.match(self.src, self.i)
        assert found is not None  # Python compiled the pattern
        self.i = found.end()
        on, off, end = set(found.group(1)), set(found.group(2) or ""), found.group(3)
        if on - set("imsxu") or off - set("imsx"):
            raise self._unsafe(f"the inline flag (?{found.group(1)})")
        scope = (self.scopes[-1] | on) - off
        if end == ")":
            self.scopes[-1] = scope  # global: Python allows it at the start only
        else:
            self.scopes.append(scope)
        letters = "".join(sorted(on & set("is")))
        dropped = "".join(sorted(off & set("is")))
        if end == ")":
            return f"(?{letters})" if letters else ""
        return f"(?{letters}{'-' + dropped if dropped else ''}:"

    def _escape(self) -> str:
        char = self._take()
        if char in _SHORTHAND:
            return _SHORTHAND[char]
        if char in "AbB":
            return "\\" + char
        if char == "Z":
            return r"\z"
        if char in "123456789" and not self._octal_follows(char):
            raise self._unsafe(f"a backreference \\{char}")
        return _lit(self._char(char))

    def _octal_follows(self, first: str) -> bool:
        following = self.src[self.i:self.i + 2]
        return first in "01234567" and len(following) == 2 and all(
            c in "01234567" for c in following)

    def _char(self, char: str) -> str:
        """The one character an escape (its letter `char`, already taken) stands for."""
        if char in _CHARS:
            return _CHARS[char]
        if char in _HEX:
            return chr(int(self._take(_HEX[char]), 16))
        if char == "N":
            end = self.src.index("}", self.i)
            name = self._take(end + 1 - self.i)[1:-1]
            return unicodedata.lookup(name)
        if char in "01234567":
            digits = char
            while len(digits) < 3 and self.src[self.i:self.i + 1] in tuple("01234567"):
                digits += self._take()
            return chr(int(digits, 8))
        return char  # escaped punctuation: itself

    def _class(self) -> str:
        negated = self.src.startswith("^", self.i)
        self.i += negated
        items: list[str] = []
        outside: list[str] = []  # \D \W \S: no single class item means them
        first = True
        while (char := self._take()) != "]" or first:
            first = False
            if char == "\\" and self.src[self.i] in _SHORTHAND:
                letter = self._take()
                (items if letter in _IN_CLASS else outside).append(
                    _IN_CLASS.get(letter, _SHORTHAND[letter]))
                continue
            low = self._class_char(char)
            if self.src.startswith("-", self.i) and self.src[self.i + 1] != "]":
                self.i += 1
                high = self._class_char(self._take())
                items.append(f"{_lit(low)}-{_lit(high)}")
            else:
                items.append(_lit(low))
        if not outside:
            return f"[{'^' if negated else ''}{''.join(items)}]"
        if negated:
            raise self._unsafe(r"a negated class holding \D, \W or \S")
        return "(?:" + "|".join(([f"[{''.join(items)}]"] if items else []) + outside) + ")"

    def _class_char(self, char: str) -> str:
        if char != "\\":
            return char
        letter = self._take()
        return "\b" if letter == "b" else self._char(letter)
