"""The scanner's content rules: hidden text, download-and-run, exfiltration, secrets, links.

`scan_text` runs every rule on one file's text. Regexes are compiled once and stay linear on
hostile input; each rule runs only when a cheap substring prefilter says it may match.
"""

from __future__ import annotations

import bisect
import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from itertools import islice

from registry.scan.findings import Finding, Severity, sort_key

_MAX_PER_CODE = 20  # per file; the rest collapse into one "N more" finding
_MAX_PER_RULE = 1000  # bounds the work a hostile file can cause; counts past it are "N+ more"
_PROSE_EXT = {".md", ".markdown", ".mdx", ".txt", ".rst"}
_SCRIPT_EXT = {".sh", ".bash", ".zsh", ".fish", ".py", ".js", ".mjs", ".cjs", ".ts", ".ps1",
               ".psm1", ".rb", ".pl", ".php", ".bat", ".cmd", ".lua"}
# Zero-width, bidi and tag characters. ZWJ/ZWNJ pass only between two visible non-ASCII
# characters (emoji sequences, Persian, Indic scripts); next to ASCII or each other they hide text.
_HIDDEN = re.compile(r"[\u200b\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]"
                     r"|(?<![^\x00-\x7f\u200c\u200d])[\u200c\u200d]"
                     r"|[\u200c\u200d](?![^\x00-\x7f\u200c\u200d])")
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget)\b.{0,40}?\b(?:previous|prior|above|earlier|instructions?)\b"
    r"|\b(?:send|upload|curl|wget|execute|exec|run|secrets?|tokens?|passwords?|ssh|credentials?"
    r"|api[ _-]?keys?|exfiltrat\w*|system prompt|you must|do not (?:tell|mention|reveal))\b",
    re.I | re.S)
_MD_COMMENT = re.compile(
    r"^ {0,3}\[[^\]\n]*\]:[ \t]*(?:#|<>)[ \t]*(?:\(([^\n]*)\)|\"([^\n]*)\"|'([^\n]*)')[ \t]*$",
    re.M)
_FETCH = r"(?:curl|wget)\b"
# `| sh`, `| sudo -E bash`, `| python3 -`; not `|| sh x`, `| python -m json.tool`, `| shasum`.
_RUN_STDIN = re.compile(r"(?<!\|)\|(?!\|)\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:ba|z|da|k|fi)?sh\b"
                        r"(?!\s+-c\b)|(?:python[0-9.]*|perl|ruby|node|php)(?:\s+-)?"
                        r"(?=\s*(?:$|[;&|)`'\"])))")
_T = r"[ \t]"
# (code, what, needles, head, tail): a rule runs only when the lowercased file holds a needle (a
# substring test is ~100x faster than a regex pass). A tail, when given, must follow the head on
# the same line; each line is checked once from its first head, so hostile lines stay linear.
_EXEC_RULES: list[tuple[str, str, tuple[str, ...], re.Pattern[str], re.Pattern[str] | None]] = [
    ("download-and-run", "downloads code and pipes it into an interpreter", ("curl", "wget"),
     re.compile(rf"\b{_FETCH}"), _RUN_STDIN),
    ("download-and-run", "runs a downloaded script through process substitution", ("<(",),
     re.compile(rf"(?:\b(?:ba|z|k)?sh|\bsource|(?<!\S)\.){_T}+<\({_T}*{_FETCH}"), None),
    ("download-and-run", "evaluates the output of a download", ("curl", "wget"),
     re.compile(rf"\b(?:eval|(?:ba|z)?sh{_T}+-c|python[0-9.]*{_T}+-c|(?:perl|ruby|node){_T}+-e)"
                rf"{_T}+[\"']?(?:\$\(|`){_T}*{_FETCH}"), None),
    ("powershell-iex", "pipes a web request into Invoke-Expression", ("iex", "invoke-expression"),
     re.compile(r"\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|curl|wget)\b", re.I),
     re.compile(r"\|\s*(?:iex|Invoke-Expression)\b", re.I)),
    ("powershell-iex", "uses Invoke-Expression / iex to run a string as code",
     ("iex", "invoke-expression", "scriptblock"),
     re.compile(rf"\bInvoke-Expression\b|\biex{_T}*[(\"'$]|\[ScriptBlock\]::Create\(", re.I), None),
    ("base64-exec", "decodes base64 and pipes it into an interpreter", ("base64",),
     re.compile(rf"\bbase64{_T}+(?:-d|--decode|-D)\b"), _RUN_STDIN),
    ("base64-exec", "evaluates base64-decoded output", ("base64",),
     re.compile(rf"\beval{_T}+[\"']?\$\("), re.compile(rf"\bbase64{_T}+(?:-d|--decode)\b")),
    ("base64-exec", "evaluates decoded or decompressed data", ("eval", "exec", "function", "-enc"),
     re.compile(rf"\b(?:eval|exec){_T}*\({_T}*(?:compile{_T}*\({_T}*)?(?:(?:base64\.)?b64decode"
                r"|base64\.decodebytes|codecs\.decode|bytes\.fromhex|zlib\.decompress"
                rf"|marshal\.loads|__import__\({_T}*['\"](?:base64|codecs|zlib|marshal))"
                rf"|\b(?:eval|Function){_T}*\({_T}*(?:atob|Buffer\.from){_T}*\("
                rf"|-(?:EncodedCommand|enc){_T}+[A-Za-z0-9+/=]{{20,}}", re.I), None),
]
_WARNING_WORDS = re.compile(r"\b(?:never|don't|do not|avoid|instead of|dangerous|unsafe)\b", re.I)
_B64_BLOB = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{200,}={0,2}")
_KEY_FILES = (r"~/\.ssh\b|\$HOME/\.ssh\b|\.ssh/|\bid_(?:rsa|dsa|ecdsa|ed25519)\b"
              r"|\.aws/credentials|\.netrc\b|\.git-credentials|\.docker/config\.json"
              r"|\.kube/config|\.pypirc|huggingface/token|/etc/shadow")
# Whole-environment dumps only: os.environ["ONE_KEY"] next to an API call is normal code.
_ENV_DUMP = (r"(?<![\w.])\.env(?![\w.])|\bos\.environ\b(?!\s*(?:\[|\.get\b|\.setdefault\b))"
             r"|\bprocess\.env\b(?!\s*[.\[])|\bprintenv\b|Get-ChildItem\s+env:"
             rf"|(?:^|[;&|`(]|\$\(){_T}*env{_T}*(?:$|[|>;&)])")
_SOURCE_NEEDLES = (".ssh", "id_", "credentials", ".netrc", ".docker", ".kube", ".pypirc",
                   "huggingface/token", "/etc/shadow", "env")
_SOURCE_KEYS = re.compile(_KEY_FILES, re.M)
_SOURCE_ANY = re.compile(f"{_KEY_FILES}|{_ENV_DUMP}", re.M)
_CODE_SINK = (r"\b(?:curl|wget|nc|ncat|netcat|scp|sftp|ftp|rsync|smtplib|aiohttp|axios|urlopen"
              r"|XMLHttpRequest|Invoke-WebRequest|Invoke-RestMethod|iwr|irm)\b|/dev/(?:tcp|udp)/"
              r"|\brequests\.(?:post|put|patch|get)\b|\bhttpx\.|\burllib\b|\bfetch\s*\("
              r"|\bsocket\.|\bhttp\.client\b")
_SINK_CODE = re.compile(_CODE_SINK, re.I)
_SINK_PROSE = re.compile(rf"{_CODE_SINK}|\b(?:send|upload|post|transmit|forward|exfiltrat\w*"
                         r"|e-?mail|paste)\b", re.I)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_NA = r"(?<![\w-])"  # so `sk-sk-sk-…` cannot restart a match at every dash (quadratic)
# kind, label, needles (prefilter, lowercase), pattern, characters of the secret the message shows
_SECRETS: list[tuple[str, str, tuple[str, ...], re.Pattern[str], int]] = [
    ("huggingface", "Hugging Face token", ("hf_",), re.compile(r"\bhf_[A-Za-z0-9]{34,}\b"), 5),
    ("anthropic", "Anthropic key", ("sk-ant-",), re.compile(rf"{_NA}sk-ant-[\w-]{{20,}}"), 9),
    ("openai", "OpenAI key", ("sk-",), re.compile(rf"{_NA}sk-(?!ant-)(?:proj-)?[\w-]{{20,}}"), 5),
    ("aws", "AWS access key id", ("akia", "asia"), re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 6),
    ("aws", "AWS secret access key", ("secret",), re.compile(
        r"(?i:aws_?secret_?access_?key)[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
    ), 2),
    ("github", "GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
     re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"), 6),
    ("github", "GitHub token", ("github_pat_",), re.compile(r"\bgithub_pat_\w{22,}\b"), 13),
    ("slack", "Slack token", ("xox",), re.compile(rf"{_NA}xox[abprs]-[A-Za-z0-9-]{{10,}}"), 6),
    ("google", "Google API key", ("aiza",), re.compile(r"\bAIza[\w-]{35}\b"), 6),
    ("stripe", "Stripe live key", ("_live_",), re.compile(r"\b[sr]k_live_[0-9A-Za-z]{20,}"), 10),
]
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----\s*"
                          r"(?:Proc-Type:[^\n]*\n\s*DEK-Info:[^\n]*\n\s*)?[A-Za-z0-9+/=]{40}")
_LINK = re.compile(r"\]\([ \t]*<?([^()\[\]\s>]+)|\b(?:src|href)=[\"']([^\"']+)"
                   r"|^ {0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)", re.M)
_FRONTMATTER = re.compile(r"---[ \t]*\n(.*?)\n---[ \t]*(?:\n|$)", re.S)
_ALLOWED_TOOLS = re.compile(r"^allowed-tools:([^\n]*(?:\n[ \t-][^\n]*)*)", re.M)  # + list lines
_TOOL = re.compile(r"[A-Za-z_][\w.-]*(?:\([^)\n]*\))?|\*")


class _Doc:
    """One text file plus what the rules share: its kind and an offset-to-line index."""

    def __init__(self, path: str, text: str) -> None:
        self.path, self.text, self.lower = path, text, text.lower()
        self.ext = posixpath.splitext(path)[1].lower()
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.is_prose = self.ext in _PROSE_EXT
        self.is_script = self.ext in _SCRIPT_EXT or path.startswith("scripts/")

    def has(self, needles: Iterable[str]) -> bool:
        return any(needle in self.lower for needle in needles)

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.newlines, offset - 1) + 1

    def find(self, code: str, severity: Severity, message: str, offset: int) -> Finding:
        return Finding(code, severity, message, self.path, self.line(offset))


def scan_text(path: str, text: str) -> list[Finding]:
    """Run the content rules on one file's text; `path` is the posix path inside the skill."""
    doc = _Doc(path, text)
    findings: list[Finding] = []
    per_code: dict[str, list[Finding]] = {}
    for rule in _RULES:  # defined after the rules, below
        for finding in islice(rule(doc), _MAX_PER_RULE):
            per_code.setdefault(finding.code, []).append(finding)
    for code, found in per_code.items():
        findings += found[:_MAX_PER_CODE]
        if len(found) > _MAX_PER_CODE:
            more = f"{len(found) - _MAX_PER_CODE}{'+' if len(found) >= _MAX_PER_RULE else ''}"
            findings.append(Finding(code, found[0].severity, f"{more} more '{code}' findings "
                                    "not listed", path))
    return sorted(findings, key=sort_key)


def _hidden_unicode(doc: _Doc) -> Iterator[Finding]:
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


def _comment(doc: _Doc, kind: str, body: str, offset: int) -> Finding:
    what = kind.replace("-", " ")
    if m := _INSTRUCTION.search(body):
        return doc.find(f"{kind}-instructions", "high", f"hidden {what} contains instructions "
                        f"({m.group().lower()!r}); agents read it, people do not", offset)
    return doc.find(kind, "low", f"hidden {what} (invisible when rendered)", offset)


def _comments(doc: _Doc) -> Iterator[Finding]:
    pos = 0
    while (start := doc.text.find("<!--", pos)) >= 0:
        end = doc.text.find("-->", start + 4)
        end = len(doc.text) if end < 0 else end  # unterminated: hides the rest of the file
        yield _comment(doc, "html-comment", doc.text[start + 4:end], start)
        pos = end + 3
    for m in _MD_COMMENT.finditer(doc.text) if doc.is_prose else ():
        yield _comment(doc, "markdown-comment", next(g for g in m.groups() if g), m.start())


def _is_warning(text: str, offset: int, eol: int) -> bool:
    """Whether the command is quoted in backticks on a line that warns against it."""
    bol = text.rfind("\n", 0, offset) + 1
    return text.count("`", bol, offset) % 2 == 1 and bool(_WARNING_WORDS.search(text, bol, eol))


def _exec_patterns(doc: _Doc) -> Iterator[Finding]:
    # Documented choice: in prose, a backticked command on a line that warns against it
    # ("never", "do not", "avoid"...) is low; everywhere else, backticks or not, it is high.
    text = doc.text.replace("\\\n", "  ")  # join continuations; same length keeps line numbers
    seen: set[tuple[str, int]] = set()
    for code, what, needles, head, tail in _EXEC_RULES:
        if not doc.has(needles):
            continue
        pos = 0
        while m := head.search(text, pos):
            eol = text.find("\n", m.end())
            eol = pos = len(text) if eol < 0 else eol
            key = (code, doc.line(m.start()))
            if (tail and not tail.search(text, m.end(), eol)) or key in seen:
                continue
            seen.add(key)
            is_low = doc.is_prose and _is_warning(text, m.start(), eol)
            message = f"{what}: {clip(text[m.start():eol])}"
            yield doc.find(code, "low" if is_low else "high",
                           f"{message} (quoted in a warning)" if is_low else message, m.start())


def _base64_blobs(doc: _Doc) -> Iterator[Finding]:
    for m in _B64_BLOB.finditer(doc.text) if doc.is_script else ():
        yield doc.find("base64-blob", "medium", f"{len(m.group())}-character base64 blob in a "
                       "script; decode it and check what it holds", m.start())


def _exfiltration(doc: _Doc) -> Iterator[Finding]:
    # A secret source and a sink in one scope: the whole file for scripts, a paragraph for prose,
    # a line for data files (evals.json, YAML). Outside scripts "send"/"upload" count as sinks,
    # and only key files (not .env or env mentions) are reported alone.
    if not doc.has(_SOURCE_NEEDLES):
        return
    sink_re = _SINK_CODE if doc.is_script else _SINK_PROSE
    starts = [0] if doc.is_script else [0] + (
        [m.end() for m in _BLANK_LINE.finditer(doc.text)] if doc.is_prose
        else [n + 1 for n in doc.newlines])
    ends = [*starts[1:], len(doc.text)]
    sinks: dict[int, re.Match[str] | None] = {}
    seen: set[int] = set()
    for m in _SOURCE_ANY.finditer(doc.text):
        if (line := doc.line(m.start())) in seen:
            continue
        seen.add(line)
        i = bisect.bisect_right(starts, m.start()) - 1
        if i not in sinks:  # each paragraph is searched once, however many sources it holds
            sinks[i] = sink_re.search(doc.text, starts[i], ends[i])
        sink = sinks[i]
        source = m.group().strip()
        if sink:
            yield doc.find("exfiltration", "high", f"reads {source!r} and sends data out "
                           f"({sink.group().strip()!r}): a credential-theft pattern", m.start())
        elif doc.is_script or _SOURCE_KEYS.match(doc.text, m.start()):
            yield doc.find("credential-access", "medium",
                           f"reads {source!r}; check what is done with it", m.start())


def _is_placeholder(value: str) -> bool:
    """`hf_xxxx…`, AWS's documented `…EXAMPLE` keys and kebab-case words are not secrets."""
    body = re.split(r"[_-]", value, maxsplit=1)[-1]
    is_mixed = any(c.isdigit() for c in body) or (body.lower() != body != body.upper())
    return "EXAMPLE" in value.upper() or len(set(body.lower())) < 6 or not is_mixed


def _secrets(doc: _Doc) -> Iterator[Finding]:
    for kind, label, needles, pattern, keep in _SECRETS:
        for m in pattern.finditer(doc.text) if doc.has(needles) else ():
            value = m.group(m.lastindex or 0)
            if not _is_placeholder(value):  # the message never holds more than a short prefix
                yield doc.find(f"secret-{kind}", "high", f"{label} committed in the file "
                               f"({value[:keep]}…, redacted); revoke it and remove it", m.start())
    for m in _PRIVATE_KEY.finditer(doc.text) if "private key" in doc.lower else ():
        yield doc.find("secret-private-key", "high", "private key block committed in the file "
                       "(redacted); revoke it and remove it", m.start())


def _allowed_tools(doc: _Doc) -> Iterator[Finding]:
    # `*`, `Bash`, `Bash(*)` grant everything; `Bash(git status:*)` is scoped and fine.
    front = _FRONTMATTER.match(doc.text) if doc.path == "SKILL.md" else None
    m = _ALLOWED_TOOLS.search(front.group(1)) if front else None
    for tool in _TOOL.findall(m.group(1)) if front and m else ():
        name, _, args = tool.partition("(")
        if "*" in name or tool == "Bash" or args.rstrip(")").strip() in {"*", ":*"}:
            yield Finding("wildcard-allowed-tools", "medium", f"allowed-tools grants {tool!r}, "
                          "which is unrestricted; scope it, e.g. Bash(git status:*)",
                          doc.path, front.group(1).count("\n", 0, m.start()) + 2)


def _links_outside(doc: _Doc) -> Iterator[Finding]:
    for m in _LINK.finditer(doc.text) if doc.is_prose or doc.ext in {".html", ".htm"} else ():
        target = next(g for g in m.groups() if g)
        is_file_url = target.lower().startswith("file:")
        if not is_file_url and (":" in target.split("/")[0] or target[:1] in "#?"):
            continue  # https:, mailto:, anchors
        inside = posixpath.join(posixpath.dirname(doc.path), re.split(r"[#?]", target)[0])
        if is_file_url or target[:1] in "/~" or posixpath.normpath(inside).startswith(".."):
            yield doc.find("path-outside", "medium",
                           f"links to {clip(target)!r}, outside the skill folder", m.start())


_RULES: tuple[Callable[[_Doc], Iterator[Finding]], ...] = (
    _hidden_unicode, _comments, _exec_patterns, _base64_blobs, _exfiltration, _secrets,
    _allowed_tools, _links_outside)


def clip(text: str, limit: int = 80) -> str:
    """`text` on one line, cut to `limit` characters."""
    text = " ".join(text[: limit * 4].split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
