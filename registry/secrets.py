"""The one scrubber: every secret the process holds, masked in anything written or shown.

It knows three kinds of secret, read at the moment of scrubbing (so a key exported or typed
after start-up is known too):

- the environment's keys and tokens: any variable whose name has a word such as KEY, TOKEN,
  SECRET or PASSWORD (`ANTHROPIC_API_KEY`, `HF_TOKEN`, `OAUTH_CLIENT_SECRET`), unless it names a
  place (`HF_TOKEN_PATH`, `..._URL`);
- the credential inside a place's URL (`HF_ENDPOINT=https://user:pass@hub.example`, a gateway
  key in `OPENAI_BASE_URL`'s path or query: `url_secrets`), and the same in the endpoints a
  `Settings` carries;
- the Hugging Face token files: `HF_TOKEN_PATH` (default `$HF_HOME/token`) and the named tokens
  in `$HF_HOME/stored_tokens`; and the credentials of the MCP servers' URLs kept in
  `$HUBSKILLS_HOME/mcp-credentials.json` (`stored_credential_secrets`);
- secrets held for the current request (`holding`, `hold`): keys a Space visitor typed, the
  keys a `Settings` carries. They live in a context variable, so two requests (two visitors,
  two threads or tasks) never see each other's.

Every writer calls `scrub` just before bytes leave the process: run rows and manifests
(`results.runs.to_json`, which pushed result files go through too), the response cache,
generated skills and the teacher's raw replies, the CLI's printer, the Space's responses
(`space.keys.scrub_responses`) and log records (`scrub_logs`).
Values shorter than `MIN_LENGTH` are left alone: masking "1" or "true" would wreck any text
and such values are not credentials.

Over 400 lines because every kind of secret is read here, at the base layer every writer can
ask, and the URL rules that find one (`url_secrets`) also say what is left without it
(`credential_free`).
"""

from __future__ import annotations

import configparser
import functools
import json
import logging
import os
import re
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

# Plain text that survives every renderer it meets: rich markup eats "[...]", Markdown and HTML
# hide "<...>", and "***" is Markdown emphasis.
MASK = "(redacted)"
MIN_LENGTH = 8
_SECRET_WORDS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD",
                           "CREDENTIAL", "CREDENTIALS", "PAT"})
_PLACE_WORDS = frozenset({"PATH", "FILE", "DIR", "URL", "URI", "ENDPOINT", "HOST", "PORT",
                          "ID", "NAME", "TYPE", "SOCK"})


@functools.lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a key or token."""
    words = name.upper().replace("-", "_").split("_")
    return bool(_SECRET_WORDS.intersection(words)) and words[-1] not in _PLACE_WORDS


def _usable(values: Iterable[str | None]) -> set[str]:
    return {v.strip() for v in values if v and len(v.strip()) >= MIN_LENGTH}


def environment_secrets(environ: Mapping[str, str] | None = None) -> set[str]:
    """The values of the environment's key and token variables, and the credentials inside
    its place variables' URLs (`HF_ENDPOINT=https://user:pass@...`)."""
    env = os.environ if environ is None else environ
    # Names first: reading every value of os.environ costs more than the rest of a scrub.
    found: set[str] = set()
    for name in list(env):
        kind = _name_kind(name)
        if kind is _SECRET and (value := env.get(name)):
            found.add(value)
        elif kind is _PLACE and "://" in (value := env.get(name) or ""):
            found |= url_secrets(value)
    return _usable(found)


_SECRET, _PLACE = "secret", "place"


@functools.lru_cache(maxsize=1024)
def _name_kind(name: str) -> str | None:
    """Whether a variable holds a key (`_SECRET`), may hold a URL (`_PLACE`), or neither."""
    if is_secret_name(name):
        return _SECRET
    return _PLACE if name.upper().replace("-", "_").split("_")[-1] in _URL_WORDS else None


_URL_WORDS = frozenset({"URL", "URI", "ENDPOINT", "HOST", "PROXY", "BASE"})


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


@functools.lru_cache(maxsize=256)
def url_secrets(url: str) -> frozenset[str]:
    """The credentials inside `url`, as they are written in it and percent-decoded: its
    password, a user name standing alone that looks like a key (`https://TOKEN@host`, as git
    and gateways take a token), a query value under a key's name (`?api-key=`, `?token=`,
    `?sig=`) or shaped like a key, and a path segment shaped like a key (`/hf_.../v1`); each
    at least `MIN_LENGTH` long, as every secret masked in all text is."""
    found = _credentials(url) or []
    plain = {urllib.parse.unquote(value) for value in found}
    spelled = {urllib.parse.quote(value, safe="") for value in plain}
    return frozenset(_usable([*found, *plain, *spelled]))


def names_credential(url: str) -> bool:
    """Whether `url` holds a credential by `url_secrets`' rules, however short: a password of
    any length (`https://bob:hunter2@host`), which is too short to mask in all text but is no
    less a credential to record; and an unparsable URL with a user part (`u:p@[::1`).

    For deciding where a URL may be written (a lock a project commits), not what is masked.
    """
    found = _credentials(url)
    if found is None:
        authority = url.partition("//")[2]
        return "@" in authority.split("/", 1)[0].split("?", 1)[0]
    return bool(found)


def _credentials(url: str) -> list[str] | None:
    """The credentials in `url` as `url_secrets` picks them, of any length; None when `url`
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


def _token_paths(env: Mapping[str, str]) -> tuple[str, str]:
    cache = env.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    home = os.path.expanduser(env.get("HF_HOME") or os.path.join(cache, "huggingface"))
    token = os.path.expanduser(env.get("HF_TOKEN_PATH") or os.path.join(home, "token"))
    return token, os.path.join(home, "stored_tokens")


@functools.lru_cache(maxsize=16)
def _tokens_in(path: str, stored: bool, _version: tuple[int, int, int]) -> frozenset[str]:
    """The tokens in one file; `_version` (inode, size, mtime) makes an edited file re-read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:  # vanished since its stat: then it holds nothing this process could leak
        return frozenset()
    if not stored:
        return frozenset(_usable([text]))
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return frozenset()
    return frozenset(_usable(parser.get(name, "hf_token", fallback="")
                             for name in parser.sections()))


def token_file_secrets(environ: Mapping[str, str] | None = None) -> set[str]:
    """The tokens saved by `hf auth login`: the token file and the named stored tokens.

    The paths follow huggingface_hub's (`HF_TOKEN_PATH`, `HF_HOME`, `XDG_CACHE_HOME`), read here
    without importing it: this module is at the base layer. A file is parsed again only when it
    changes, since every write scrubs.
    """
    found: set[str] = set()
    for path, stored in zip(_token_paths(os.environ if environ is None else environ),
                            (False, True), strict=True):
        try:
            info = os.stat(path)
        except OSError:  # absent or unreadable: then it holds nothing this process could leak
            continue
        found |= _tokens_in(path, stored, (info.st_ino, info.st_size, info.st_mtime_ns))
    return found


CREDENTIAL_FILE = "mcp-credentials.json"  # in HUBSKILLS_HOME: `pull mcp+https://u:p@...`


def credential_file(environ: Mapping[str, str] | None = None) -> str:
    """Where the MCP servers' credentials are kept: `CREDENTIAL_FILE` in the home
    `config.Settings` names (`HUBSKILLS_HOME`, else the user's data folder)."""
    home = ((os.environ if environ is None else environ).get("HUBSKILLS_HOME") or "").strip()
    if not home:
        from platformdirs import user_data_dir

        home = user_data_dir("hubskills", appauthor=False)
    return os.path.join(os.path.expanduser(home), CREDENTIAL_FILE)


def stored_credentials(path: str | os.PathLike[str]) -> dict[str, str]:
    """The credential file's map, credential-free URL -> the URL as typed ({} when absent or
    unreadable)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return {key: value for key, value in data.items() if isinstance(key, str)
            and isinstance(value, str)} if isinstance(data, dict) else {}


@functools.lru_cache(maxsize=16)
def _stored_in(path: str, _version: tuple[int, int, int]) -> frozenset[str]:
    """The credentials in one credential file; `_version` makes an edited file re-read."""
    return frozenset().union(*map(url_secrets, stored_credentials(path).values()))


def stored_credential_secrets(environ: Mapping[str, str] | None = None) -> set[str]:
    """The credentials of the MCP servers' URLs `credential_file` keeps (each as `url_secrets`
    finds it), known whether or not a server is being asked now."""
    path = credential_file(environ)
    try:
        info = os.stat(path)
    except OSError:  # absent: nothing kept
        return set()
    return set(_stored_in(path, (info.st_ino, info.st_size, info.st_mtime_ns)))


class SecretScope:
    """The secrets held for one request; an inner scope also sees its outer scopes' secrets."""

    def __init__(self, values: Iterable[str | None] = (), parent: SecretScope | None = None):
        self._values = _usable(values)
        self._parent = parent

    def add(self, *values: str | None) -> None:
        """Hold more secrets in this scope (a key the visitor typed, their sign-in token)."""
        self._values |= _usable(values)

    def values(self) -> set[str]:
        """This scope's secrets and its outer scopes'."""
        inherited = self._parent.values() if self._parent else set()
        return self._values | inherited

    @contextmanager
    def active(self) -> Iterator[SecretScope]:
        """Make this the current scope for the block (in this thread or task only)."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)


_CURRENT: ContextVar[SecretScope | None] = ContextVar("hubskills_secret_scope", default=None)


def current_scope() -> SecretScope | None:
    """The innermost active scope, or None outside any."""
    return _CURRENT.get()


@contextmanager
def holding(*values: str | None) -> Iterator[SecretScope]:
    """A new scope, inside the current one, that also holds `values` for the block."""
    with SecretScope(values, parent=_CURRENT.get()).active() as scope:
        yield scope


def hold(*values: str | None) -> None:
    """Add secrets to the current scope.

    Raises:
        RuntimeError: outside any scope; there is no process-wide list a request's key could
            be left in for the next visitor.
    """
    scope = _CURRENT.get()
    if scope is None:
        raise RuntimeError("hold() needs a scope: run the request inside secrets.holding()")
    scope.add(*values)


def known_secrets(extra: Iterable[str | None] = ()) -> list[str]:
    """Every secret the process holds now, longest first (so a key containing another is
    masked whole)."""
    scope = _CURRENT.get()
    found = environment_secrets() | token_file_secrets() | stored_credential_secrets() \
        | _usable(extra)
    if scope is not None:
        found |= scope.values()
    return sorted(found, key=len, reverse=True)


def scrubber(extra: Iterable[str | None] = ()) -> Callable[[str], str]:
    """A `scrub` over the secrets known now, to apply to many strings (a table's cells).

    Each secret is also masked in its JSON-escaped spelling, so scrubbing serialized JSON is
    as safe as scrubbing each string before serializing.
    """
    spellings: list[str] = []
    for secret in known_secrets(extra):
        escaped = json.dumps(secret)[1:-1]
        spellings += [secret, escaped] if escaped != secret else [secret]

    def apply(text: str) -> str:
        for spelling in spellings:
            if spelling in text:
                text = text.replace(spelling, MASK)
        return text

    return apply


def scrub(text: str, extra: Iterable[str | None] = ()) -> str:
    """`text` with every known secret (and `extra`) replaced by `MASK`."""
    return scrubber(extra)(text) if text else text


def scrub_data(value: Any, apply: Callable[[str], str] | None = None) -> Any:
    """`value` with every string inside it (in dicts, lists and tuples) scrubbed."""
    apply = apply or scrubber()
    if isinstance(value, str):
        return apply(value)
    if isinstance(value, dict):
        return {key: scrub_data(item, apply) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub_data(item, apply) for item in value)
    return value


def scrub_logs() -> None:
    """Scrub every log record this process creates, from now on (idempotent).

    A record factory, not a handler filter: it covers records of every logger and handler,
    including those libraries add later. The traceback of `exc_info` is rendered and scrubbed
    too, since an exception's message can quote a request.
    """
    previous = logging.getLogRecordFactory()
    if getattr(previous, "hubskills_scrubs", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format string: keep both parts, scrubbed
            message = f"{record.msg} {record.args!r}"
        record.msg, record.args = scrub(message), None
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        if record.exc_info:
            record.exc_text = scrub(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return record

    factory.hubskills_scrubs = True  # type: ignore[attr-defined]  # a mark on the function
    logging.setLogRecordFactory(factory)
