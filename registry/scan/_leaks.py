"""Rules for secrets leaving the machine: credential flows to the network, committed keys.

In a script, "exfiltration" (high) needs a demonstrated path: one statement that holds both a
secret source (a key file, the whole environment) and a network sink, directly or through
variables assigned from the source (`key = read(~/.ssh/id_rsa)` ... `requests.post(data=key)`)
or connections assigned from a sink. Reading a key file with no such path is medium; copying the
environment for a subprocess is info; a local Unix socket is not a sink. Prose pairs a source and
an instruction to send within one paragraph, data files within one line.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator

from registry.scan._doc import Doc
from registry.scan.findings import Finding

_KEY_FILES = (r"~/\.ssh\b(?![\w/.-]*\.pub\b)|\$HOME/\.ssh\b(?![\w/.-]*\.pub\b)"
              r"|\.ssh/(?![\w/.-]*\.pub\b)|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)"
              r"|\.aws/credentials|\.netrc\b|\.git-credentials|\.docker/config\.json"
              r"|\.kube/config|\.pypirc|huggingface/token|/etc/shadow")
# Whole-environment dumps only: os.environ["ONE_KEY"] next to an API call is normal code.
_ENV_DUMP = (r"(?<![\w.])\.env(?![\w.])|\bos\.environ\b(?!\s*(?:\[|\.get\b|\.setdefault\b))"
             r"|\bprocess\.env\b(?!\s*[.\[])|\bprintenv\b|Get-ChildItem\s+env:"
             r"|(?:^|[;&|`(]|\$\()[ \t]*env[ \t]*(?:$|[|>;&)])")
_SOURCE_NEEDLES = (".ssh", "id_", "credentials", ".netrc", ".docker", ".kube", ".pypirc",
                   "huggingface/token", "/etc/shadow", "env")
_SOURCE_KEYS = re.compile(_KEY_FILES, re.M)
_SOURCE_ANY = re.compile(f"{_KEY_FILES}|{_ENV_DUMP}", re.M)
# Network sinks: what sends. A bare `socket.` is not one (AF_UNIX sockets stay on the
# machine), nor is `urllib` as such: `urllib.parse` only takes URLs apart; its network half is
# `urllib.request` (urlopen, Request, urlretrieve, build_opener) and Python 2's `urllib2`;
# urllib3's pools, not its `util.parse_url`.
_CODE_SINK = (r"\b(?:curl|wget|nc|ncat|netcat|scp|sftp|ftp|rsync|smtplib|aiohttp|axios|urlopen"
              r"|urlretrieve|urllib2|XMLHttpRequest|Invoke-WebRequest|Invoke-RestMethod|iwr|irm)"
              r"\b|/dev/(?:tcp|udp)/|\burllib\.request\b|(?<![\w.])(?-i:Request)\s*\("
              r"|\burllib3\.(?:PoolManager|ProxyManager|HTTPS?ConnectionPool|request)\b"
              r"|\brequests\.(?:post|put|patch|get|request|Request)\b|\bhttpx\.|\bfetch\s*\("
              r"|\bsocket\.(?:create_connection|AF_INET6?)\b|\bsocket\.socket\(\s*\)"
              r"|\bhttp\.client\b")
_SINK_CODE = re.compile(_CODE_SINK, re.I)
_SINK_PROSE = re.compile(rf"{_CODE_SINK}|\b(?:send|upload|post|transmit|forward|exfiltrat\w*"
                         r"|e-?mail|paste)\b", re.I)
_ASSIGNED = re.compile(r"[ \t]*(?:(?:const|let|var|local|my|export|readonly|declare)[ \t]+)?"
                       r"\$?(\w+)[ \t]*(?::[^=\n]{0,80})?(?<![=!<>])=(?!=)")
_BOUND = re.compile(r"\bas[ \t]+(\w+)[ \t]*:|\bfor[ \t]+(\w+)[ \t]+in\b")
_MAX_NAMES = 64  # variables followed per script; past it, flows are no longer traced
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
# Words that mark a documented or test-fixture value, and runs of one character (`000000`).
_PLACEHOLDER = re.compile(r"example|fake|dummy|placeholder|redacted|sample|changeme|change-?me"
                          r"|your[-_]?(?:key|token|secret)|replace|xxxx|(\w)\1{5}", re.I)


_HANDLE = re.compile(r"\b(?:socket\.create_connection|socket\.socket\(\s*(?:socket\.)?AF_INET"
                     r"|requests\.Session|httpx\.(?:Async)?Client|aiohttp\.ClientSession"
                     r"|smtplib\.SMTP|http\.client\.HTTPS?Connection|ftplib\.FTP"
                     r"|paramiko\.SSHClient|urllib\.request\.build_opener)\b")


def _statements(doc: Doc) -> Iterator[tuple[int, int]]:
    """(start, end) of each logical line: physical lines joined while brackets stay open or a
    line ends in a backslash, at most 50 lines per statement (strings can unbalance brackets)."""
    start = bol = depth = count = 0
    for eol in [*doc.newlines, len(doc.text)]:
        chunk = doc.text[bol:eol]
        depth += sum(map(chunk.count, "([{")) - sum(map(chunk.count, ")]}"))
        count, bol = count + 1, eol + 1
        if (depth <= 0 and not chunk.rstrip().endswith("\\")) or count >= 50:
            yield start, eol
            start, depth, count = bol, 0, 0
    if start < len(doc.text):
        yield start, len(doc.text)


def _names(names: Iterable[str], suffix: str = "") -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b" + suffix)


def _script_flows(doc: Doc) -> Iterator[Finding]:
    tainted: dict[str, str] = {}  # variable -> the source its value came from
    handles: set[str] = set()  # variables holding a network connection
    via_re: re.Pattern[str] | None = None
    via_handle: re.Pattern[str] | None = None
    loose: list[tuple[int, str]] = []  # sources with no path to a sink
    for start, end in _statements(doc):
        src = _SOURCE_ANY.search(doc.text, start, end)
        via = via_re.search(doc.text, start, end) if via_re else None
        sink = _SINK_CODE.search(doc.text, start, end) or (
            via_handle.search(doc.text, start, end) if via_handle else None)
        origin = src.group().strip() if src else (tainted[via.group()] if via else None)
        if origin and sink:
            yield doc.find("exfiltration", "high", f"sends {origin!r} out "
                           f"({sink.group().strip()!r}): a credential-theft pattern",
                           (src or via or sink).start())
        elif src:
            loose.append((src.start(), origin or ""))
        target = _ASSIGNED.match(doc.text, start, end) or _BOUND.search(doc.text, start, end)
        name = next((g for g in target.groups() if g), None) if target else None
        if name and origin and (name in tainted or len(tainted) < _MAX_NAMES):
            via_re = via_re if name in tainted else _names([*tainted, name])
            tainted[name] = origin
        elif name and _HANDLE.search(doc.text, start, end) and len(handles) < _MAX_NAMES:
            handles.add(name)
            via_handle = _names(handles, r"\.\w+\s*\(")
    for offset, source in loose:
        if _SOURCE_KEYS.match(doc.text, offset):
            yield doc.find("credential-access", "medium",
                           f"reads {source!r}; check what is done with it", offset)
        else:
            yield doc.find("environment-copy", "info", f"copies the whole environment "
                           f"({source!r}), e.g. for a subprocess; nothing here sends it out",
                           offset)


def _prose_flows(doc: Doc) -> Iterator[Finding]:
    # A paragraph for prose, a line for data files (evals.json, YAML); "send"/"upload" count
    # as sinks, and only key files (not .env or env mentions) are reported alone.
    starts = [0] + ([m.end() for m in _BLANK_LINE.finditer(doc.text)] if doc.is_prose
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
            sinks[i] = _SINK_PROSE.search(doc.text, starts[i], ends[i])
        sink, source = sinks[i], m.group().strip()
        if sink:
            yield doc.find("exfiltration", "high", f"reads {source!r} and sends data out "
                           f"({sink.group().strip()!r}): a credential-theft pattern", m.start())
        elif _SOURCE_KEYS.match(doc.text, m.start()):
            yield doc.find("credential-access", "medium",
                           f"reads {source!r}; check what is done with it", m.start())


def exfiltration(doc: Doc) -> Iterator[Finding]:
    """A secret source and a network sink connected (high); a source alone (medium or info)."""
    if not doc.has(_SOURCE_NEEDLES):
        return iter(())
    return _script_flows(doc) if doc.is_script else _prose_flows(doc)


def _is_word(value: str) -> bool:
    """`sk-some-kebab-case-name`: lowercase words, no digits: not a credential at all."""
    body = re.split(r"[_-]", value, maxsplit=1)[-1]
    return not any(c.isdigit() for c in body) and (body.lower() == body or body.upper() == body)


def _is_placeholder(value: str) -> bool:
    """`…EXAMPLE`, `sk-proj-FAKE000…`, `hf_xxxx…`, `dummy`: documented or test-fixture values."""
    body = re.split(r"[_-]", value, maxsplit=1)[-1]
    return bool(_PLACEHOLDER.search(value)) or len(set(body.lower())) < 6


def secrets(doc: Doc) -> Iterator[Finding]:
    """Committed credentials: high, redacted in the message; placeholders are info."""
    for kind, label, needles, pattern, keep in _SECRETS:
        for m in pattern.finditer(doc.text) if doc.has(needles) else ():
            value = m.group(m.lastindex or 0)
            if _is_placeholder(value):  # the message never holds more than a short prefix
                yield doc.find("placeholder-secret", "info", f"{label}-shaped placeholder "
                               f"({value[:keep]}…); not a credential", m.start())
            elif not _is_word(value):
                yield doc.find(f"secret-{kind}", "high", f"{label} committed in the file "
                               f"({value[:keep]}…, redacted); revoke it and remove it", m.start())
    for m in _PRIVATE_KEY.finditer(doc.text) if "private key" in doc.lower else ():
        yield doc.find("secret-private-key", "high", "private key block committed in the file "
                       "(redacted); revoke it and remove it", m.start())
