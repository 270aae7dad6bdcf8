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
and such values are not credentials. What counts as a credential, by name or inside a URL,
is `credentials`'.
"""

from __future__ import annotations

import configparser
import functools
import json
import logging
import os
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from registry.credentials import credentials, is_secret_name

# Plain text that survives every renderer it meets: rich markup eats "[...]", Markdown and HTML
# hide "<...>", and "***" is Markdown emphasis.
MASK = "(redacted)"
MIN_LENGTH = 8
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


@functools.lru_cache(maxsize=256)
def url_secrets(url: str) -> frozenset[str]:
    """The credentials inside `url`, as they are written in it and percent-decoded: its
    password, a user name standing alone that looks like a key (`https://TOKEN@host`, as git
    and gateways take a token), a query value under a key's name (`?api-key=`, `?token=`,
    `?sig=`) or shaped like a key, and a path segment shaped like a key (`/hf_.../v1`); each
    at least `MIN_LENGTH` long, as every secret masked in all text is."""
    found = credentials(url) or []
    plain = {urllib.parse.unquote(value) for value in found}
    spelled = {urllib.parse.quote(value, safe="") for value in plain}
    return frozenset(_usable([*found, *plain, *spelled]))


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
