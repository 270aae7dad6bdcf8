"""Rules for commands that run code nobody reviewed, or destroy files: high wherever they stand,
low when prose quotes them in backticks on a line that warns against them."""

from __future__ import annotations

import re
from collections.abc import Iterator

from registry.scan._doc import Doc, clip
from registry.scan.findings import Finding

_FETCH = r"(?:curl|wget)\b"
# `| sh`, `| sudo -E bash`, `| python3 -`; not `|| sh x`, `| python -m json.tool`, `| shasum`.
_RUN_STDIN = re.compile(r"(?<!\|)\|(?!\|)\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:ba|z|da|k|fi)?sh\b"
                        r"(?!\s+-c\b)|(?:python[0-9.]*|perl|ruby|node|php)(?:\s+-)?"
                        r"(?=\s*(?:$|[;&|)`'\"])))")
_T = r"[ \t]"
Rule = tuple[str, str, tuple[str, ...], re.Pattern[str], re.Pattern[str] | None]
# (code, what, needles, head, tail): a rule runs only when the lowercased file holds a needle (a
# substring test is ~100x faster than a regex pass). A tail, when given, must follow the head on
# the same line; each line is checked once from its first head, so hostile lines stay linear.
_EXEC_RULES: list[Rule] = [
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
# The home folder or a system root, as a whole argument (`~/.cache/x` or `/tmp/x` are not).
_ROOT = (r"[\"']?(?:/(?:bin|boot|etc|home|lib|opt|root|usr|var)?/?\*?|~/?\*?|\$HOME/?\*?"
         r"|\$\{HOME\}/?\*?)[\"']?(?=[\s;&|)`]|$)")
_PY_ROOT = (r"(?:[\"'](?:/|~/?)[\"']|os\.path\.expanduser\(\s*[\"']~/?[\"']\s*\)"
            r"|(?:pathlib\.)?Path\.home\(\)|os\.environ\[\s*[\"']HOME[\"']\s*\])")
_DISK = (r"/dev/(?:sd[a-z]+|nvme\d+(?:n\d+)?|hd[a-z]|disk\d+|mmcblk\d+|xvd[a-z]|vd[a-z])"
         r"(?:[ps]?\d+)?")
_DESTRUCTIVE_RULES: list[Rule] = [
    ("destructive-command", "deletes the home folder or the system", ("rm",),
     re.compile(rf"\brm{_T}+(?:-{{1,2}}[\w-]+{_T}+){{0,8}}?"
                rf"(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive){_T}+(?:-{{1,2}}[\w-]+{_T}+){{0,8}}"
                rf"{_ROOT}"), None),
    ("destructive-command", "deletes the home folder or the system", ("rmtree",),
     re.compile(rf"\bshutil\.rmtree\(\s*{_PY_ROOT}\s*[,)]"), None),
    ("destructive-command", "formats a disk", ("mkfs",), re.compile(rf"\bmkfs(?:\.\w+)?{_T}+\S"),
     None),
    ("destructive-command", "overwrites a disk device", ("of=/dev/",), re.compile(r"\bdd\b"),
     re.compile(r"\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b|tty\b|fd/)\w")),
    ("destructive-command", "overwrites a disk device", ("shred", "wipefs"),
     re.compile(r"\b(?:shred|wipefs)\b"), re.compile(rf"{_DISK}\b")),
    ("destructive-command", "overwrites a disk device", ("/dev/",),
     re.compile(rf">{_T}*{_DISK}\b"), None),
    ("destructive-command", "is a fork bomb", (":|:",),
     re.compile(r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"), None),
]
_B64_BLOB = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{200,}={0,2}")


def _matches(doc: Doc, rules: list[Rule]) -> Iterator[Finding]:
    text = doc.text.replace("\\\n", "  ")  # join continuations; same length keeps line numbers
    seen: set[tuple[str, int]] = set()
    for code, what, needles, head, tail in rules:
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
            is_low = doc.is_warning(text, m.start(), eol)
            message = f"{what}: {clip(text[m.start():eol])}"
            yield doc.find(code, "low" if is_low else "high",
                           f"{message} (quoted in a warning)" if is_low else message, m.start())


def exec_patterns(doc: Doc) -> Iterator[Finding]:
    """Download-and-run, PowerShell Invoke-Expression, decoding then executing."""
    return _matches(doc, _EXEC_RULES)


def destructive(doc: Doc) -> Iterator[Finding]:
    """`rm -rf ~`, `rm -rf /`, `mkfs`, `dd of=/dev/sda`...: the message names the command."""
    return _matches(doc, _DESTRUCTIVE_RULES)


def base64_blobs(doc: Doc) -> Iterator[Finding]:
    """Long base64 strings in scripts: medium (nobody can review what they hold)."""
    for m in _B64_BLOB.finditer(doc.text) if doc.is_script else ():
        yield doc.find("base64-blob", "medium", f"{len(m.group())}-character base64 blob in a "
                       "script; decode it and check what it holds", m.start())
