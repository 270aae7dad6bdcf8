"""What is a credential: by the name it goes under (an environment variable, a query key), and
inside a URL (a password, a token as the user, a key-shaped query value or path segment).

The scrubber (`secrets`) masks what these find; the places a URL may be written or sent ask
them too: a Job's public environment and its plan (`carries_secret`), a lock a project commits
(`names_credential`, `credential_free`), a link shown to a person (`bare_url`).
"""

from __future__ import annotations

import functools
import re
import urllib.parse

_SECRET_WORDS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD",
                           "CREDENTIAL", "CREDENTIALS", "PAT"})
_PLACE_WORDS = frozenset({"PATH", "FILE", "DIR", "URL", "URI", "ENDPOINT", "HOST", "PORT",
                          "ID", "NAME", "TYPE", "SOCK"})


@functools.lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a key or token."""
    words = name.upper().replace("-", "_").split("_")
    return bool(_SECRET_WORDS.intersection(words)) and words[-1] not in _PLACE_WORDS


def carries_secret(url: str | None) -> bool:
    """Whether `url` holds a credential: a user or password, a query string, or a path segment
    that looks like a key (`/hf_.../v1`, `/token/sk-.../`: see `_is_key_segment`).

    Broader than `url_secrets` on purpose: this decides where a URL may travel (a Job's public
    environment, a plan file), so any query counts; that decides what is masked in every text,
    so only what is a credential is.
    """
    if not url:
        return False
    try:
        parts = urllib.parse.urlsplit(url)
        named = parts.username or parts.password
    except ValueError:  # a port that is no number, a bracket left open: keep it to secrets
        return True
    return bool(named or parts.query or any(map(_is_key_segment, parts.path.split("/"))))


def names_credential(url: str) -> bool:
    """Whether `url` holds a credential by `url_secrets`' rules, however short: a password of
    any length (`https://bob:hunter2@host`), which is too short to mask in all text but is no
    less a credential to record; and an unparsable URL with a user part (`u:p@[::1`).

    For deciding where a URL may be written (a lock a project commits), not what is masked.
    """
    found = credentials(url)
    if found is None:
        authority = url.partition("//")[2]
        return "@" in authority.split("/", 1)[0].split("?", 1)[0]
    return bool(found)


def credentials(url: str) -> list[str] | None:
    """The credentials in `url` (what `secrets.url_secrets` masks), of any length; None when `url`
    does not parse."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        user, password = parts.username, parts.password
    except ValueError:  # unparsable: nothing can be picked out of it safely
        return None
    # A user name alone is a credential when it looks like one (git's `https://TOKEN@host`);
    # a plain name (`https://alice@host`, the password asked for) stays readable elsewhere.
    alone = user if user and (_is_key_segment(user) or len(user) >= 24) else None
    found = [password] if password else [alone]
    found += [value for key, value in urllib.parse.parse_qsl(parts.query)
              if _holds_credential(key, value)]
    found += [segment for segment in parts.path.split("/") if _is_key_segment(segment)]
    return [value for value in found if value]


def bare_url(url: str) -> str:
    """`url` without what may be a credential (user and password, query, fragment, key-shaped
    path segments), for a link shown to a person: `https://u:p@hub.example/x?k=v` is
    `https://hub.example/x`."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # unparsable: nothing of it is safe to show
        return ""
    host = f"[{host}]" if ":" in host else host
    path = "/".join(segment for segment in parts.path.split("/") if not _is_key_segment(segment))
    return urllib.parse.urlunsplit((parts.scheme, host + port, path, "", ""))


def credential_free(url: str) -> str:
    """`url` less what `names_credential` finds in it, the rest as typed: no user or password,
    no query parameter holding a credential (the others kept, in order), and a key-shaped path
    segment as `(credential)`; "" for a URL that does not parse. What a lock may record of a
    URL whose credential is kept elsewhere (`https://bob:pw@host/mcp?token=t&v=2` is
    `https://host/mcp?v=2`)."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        _ = parts.port  # a port that is no number raises here
    except ValueError:
        return ""
    kept = [item for item in parts.query.split("&") if item and not _holds_credential(
        *(urllib.parse.unquote_plus(half) for half in item.partition("=")[::2]))]
    path = "/".join("(credential)" if _is_key_segment(segment) else segment
                    for segment in parts.path.split("/"))
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], path,
                                    "&".join(kept), parts.fragment))


def _holds_credential(key: str, value: str) -> bool:
    """Whether a query parameter holds a credential by `url_secrets`' rules."""
    return is_secret_name(key) or key.lower() in _QUERY_KEYS or _is_key_segment(value)


# Query keys that carry a credential though `is_secret_name` does not read them as one.
_QUERY_KEYS = frozenset({"key", "sig", "signature", "auth", "code", "access_token", "apikey",
                         "api-key", "x-api-key", "password", "pass", "pwd", "token"})

# Keys by their issuer's prefix: Hugging Face, OpenAI and Anthropic (the keys a run holds),
# GitHub, Slack and Google; the body at least as long as a real one's shortest form.
_KEY_PREFIXED = re.compile(r"(?<![A-Za-z0-9])(hf_[A-Za-z0-9]{20,}|sk-[\w-]{20,}"
                           r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
                           r"|xox[abprs]-[\w-]{10,}|AIza[\w-]{30,})")
# A bare random key: 32 or more letters and digits, upper and lower case and digits all in it.
_KEY_RANDOM = re.compile(r"(?=.*[a-z])(?=.*[A-Z])(?=.*[0-9])[A-Za-z0-9]{32,}")


def _is_key_segment(segment: str) -> bool:
    """Whether one path segment (percent-decoded) looks like a credential.

    Conservative both ways, since a miss puts a key on a public Job page and in the results
    dataset, while a false alarm only moves the URL to the Job secrets and asks for
    `--base-url` again on a resume: a known issuer's prefix with a body that is not a plain
    word (`sk-learn-helpers` is a name), or a 32+ character run of mixed-case letters and
    digits. Ids that base URLs really hold are left alone: hex account ids and commit shas
    (one case), UUIDs and model or deployment names (hyphenated), numbers.
    """
    segment = urllib.parse.unquote(segment)
    for match in _KEY_PREFIXED.finditer(segment):
        body = re.split(r"[_-]", match.group(), maxsplit=1)[1]
        if any(c.isdigit() for c in body) or (body.lower() != body and body.upper() != body):
            return True
    return _KEY_RANDOM.fullmatch(segment) is not None
