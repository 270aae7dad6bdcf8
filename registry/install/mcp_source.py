"""Skills from any MCP server speaking the Skills extension (SEP-2640): `pull mcp+...`.

The source grammar (`hubskills pull SOURCE --skill NAME`, or `SOURCE#NAME`):

- `mcp+http://HOST:PORT/PATH`, `mcp+https://HOST/PATH`: a streamable HTTP server;
- `mcp+stdio:COMMAND ARGS...`: a server run as a command on this machine (split as a shell
  would, never run through one). A command runs only when the user typed it: `pull` records
  it in `HUBSKILLS_HOME/mcp-commands.json` (`trust_command`), and `install` / `update` run a
  command a lockfile names only when it is recorded there, so a cloned project's skills.lock
  cannot make `hubskills install` run anything.

A URL holding a credential (`mcp+https://bob:pw@host/mcp`, `?token=...`: `names_credential`) is
recorded without it (`McpSource.server`, `credential_free`), and the URL as typed is kept in
`typed`: a session connects with it and, once the server accepts it, saves it in
`HUBSKILLS_HOME/mcp-credentials.json` (`save_credential`, 0600), keyed by the credential-free
URL, so `install`, `update` and every later pull reattach it (`connect_url`). Over plain `http`
to another host than this machine, a credential is refused: it would cross the network in the
clear.

`#NAME` picks a skill by its name; `#NS/NAME` by the repo the server files it under (its URI's
path, revisions left out, or hubskills' `_meta` repo: `entry_ids`), for a name that several
repos serve: such a name alone is refused, never resolved to whichever the server lists first.

`mcp_store.McpStore` answers what `pull` asks of a registry (`resolve`, `skills`, `fetch`),
over one `mcp_session.McpSession` per server. It finds the
skill in `skills/list` (the frontmatter `name`, the last segment before `SKILL.md`), checks its
manifest (every file a `resources/read`-able URI under the skill's own root, a relative path
with no `..`, a `sha256:` digest, a size within the caps) and reads every file, checking the
bytes received against the digest and size listed. Its revision (the lock's `sha`) is the first
40 hex digits of the sha256 of the manifest (`path digest` lines, sorted): the same digests,
the same revision. A server that lies, a manifest path outside the skill, a file over the caps,
a response over the byte cap, a listing over `MAX_LISTING_BYTES` in all its pages, endless
pagination or a reply slower than the deadline is refused
with a message naming the server, and nothing is installed (staging removes the folder).

Exec bits travel in hubskills' own `_meta` (`io.hubskills/registry`: `executable`, a list of
manifest paths); other servers' files are installed 0644.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import shlex
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from registry._docs import doc
from registry.config import Settings
from registry.credentials import credential_free, names_credential
from registry.errors import HubskillsError
from registry.format.skill import NAME_RE
from registry.secrets import CREDENTIAL_FILE, stored_credentials

PREFIX = "mcp+"
STDIO = "mcp+stdio:"
META_KEY = "io.hubskills/registry"  # what hubskills' own server puts under `_meta`
TIMEOUT_S = 120.0  # the most one request may take, answer included (a slow drip is cut here)
MAX_PAGES = 1000  # skills/list pages read before the listing is called endless
MAX_LISTED = 100_000  # skills listed before the listing is called endless
#: the bytes (as JSON) all pages of one skills/list may bring together: each response is capped
#: (`mcp_session.cap_of`), but 1,000 pages under that cap were 100 GiB held in memory
MAX_LISTING_BYTES = 128 * 1024 * 1024
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_TRUST_FILE = "mcp-commands.json"
HINT = ("hubskills pull mcp+https://HOST/mcp --skill NAME, or 'mcp+stdio:COMMAND ARGS' "
        f"--skill NAME (see {doc('mcp')})")


def lying(server: str) -> str:
    """The hint of every refusal a server caused."""
    return f"the MCP server {server} is malformed or hostile; nothing was installed"


@dataclass(frozen=True)
class McpSource:
    """A skill (or, with `skill` "", every skill) an MCP server serves."""

    server: str  # `http(s)://...` (never with a credential: `typed`) or `stdio:COMMAND ARGS`
    skill: str = ""
    ref: None = None  # a server serves what it serves now: the lock pins its digests
    #: the URL as typed when it held a credential: connected to, saved per user, never recorded
    typed: str = field(default="", compare=False, repr=False)

    @property
    def stdio(self) -> bool:
        """Whether the server is a command run on this machine."""
        return self.server.startswith("stdio:")

    @property
    def command(self) -> list[str]:
        """The command and its arguments (stdio only)."""
        return shlex.split(self.server.removeprefix("stdio:"))

    @property
    def url(self) -> str:
        """The server (what a git source's URL is to its namespace)."""
        return self.server

    github = False  # what code telling git sources apart asks

    @property
    def key(self) -> str:
        """The source as `skills.lock` records it: the server and the skill's name."""
        return PREFIX + self.server + (f"#{self.skill}" if self.skill else "")

    @property
    def spec(self) -> str:
        """The source as typed."""
        return self.key

    @property
    def name(self) -> str:
        """The skill's name, without the repo a `NS/NAME` pick names."""
        return self.skill.rsplit("/", 1)[-1]

    @property
    def folder_name(self) -> str:
        """The skill's name: the folder it is installed in."""
        return self.name

    def at(self, name: str) -> McpSource:
        """The skill `name` of this server."""
        return replace(self, skill=name) if name else self


def is_mcp(text: str) -> bool:
    """Whether `text` names an MCP source."""
    return text.strip().startswith(PREFIX)


def parse_mcp(text: str) -> McpSource:
    """Read `mcp+URL[#NAME]` or `mcp+stdio:COMMAND[#NAME]`.

    Raises:
        HubskillsError: no URL or command, or a skill name breaking the naming rule.
    """
    text = text.strip()
    rest, hashmark, name = text.removeprefix(PREFIX).rpartition("#")
    if not hashmark:
        rest, name = text.removeprefix(PREFIX), ""
    if name and not is_pick(name):
        raise HubskillsError(f"'{shown(text)}': '{name}' is not a skill name (lowercase letters, "
                             "digits, single hyphens) nor NS/NAME", hint=HINT)
    if rest.startswith("stdio:"):
        try:
            argv = shlex.split(rest.removeprefix("stdio:"))
        except ValueError as err:
            raise HubskillsError(f"'{text}': the command does not parse ({err})",
                                 hint=HINT) from err
        if not argv:
            raise HubskillsError(f"'{text}' names no command", hint=HINT)
        return McpSource("stdio:" + shlex.join(argv), name)
    scheme, sep, after = rest.partition("://")
    if scheme not in ("http", "https") or not sep or not after.split("/", 1)[0] \
            or any(c.isspace() for c in rest):
        raise HubskillsError(f"'{shown(text)}' is not an MCP server: mcp+ takes an http(s) URL "
                             "or stdio:COMMAND", hint=HINT)
    if not names_credential(rest):
        return McpSource(rest, name)
    server = credential_free(rest)
    if not server:
        raise HubskillsError(f"'{shown(text)}' does not parse as a URL", hint=HINT)
    if scheme == "http" and not _loopback(urlsplit(server).hostname or ""):
        raise HubskillsError(
            f"'{PREFIX}{server}': a credential in an http:// URL would cross the network "
            "unencrypted; hubskills sends one only over https (or to this machine)",
            hint=f"hubskills pull '{PREFIX}https://USER:PASSWORD@{server.partition('://')[2]}' "
                 f"--skill {name or 'NAME'}  # if the server serves https")
    return McpSource(server, name, typed=rest)


def shown(text: str) -> str:
    """An MCP source as an error may repeat it: without the credential its URL holds."""
    rest = text.strip().removeprefix(PREFIX)
    if "://" not in rest or not names_credential(rest.partition("#")[0]):
        return text
    return PREFIX + (credential_free(rest) or rest.partition("://")[0] + "://...")


def _loopback(host: str) -> bool:
    """Whether `host` is this machine (`localhost`, `127.0.0.0/8`, `::1`)."""
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}")


def is_pick(text: str) -> bool:
    """Whether `text` picks a skill: `NAME`, or `NS/NAME` (up to 4 segments before the name,
    each a plain word: the repo an entry's URI or `_meta` names)."""
    *where, name = text.split("/")
    return bool(NAME_RE.match(name)) and len(name) <= 64 and len(where) <= 4 \
        and all(_SEGMENT.fullmatch(part) for part in where)


def trust_command(source: McpSource, home: Path | None = None) -> None:
    """Record that the user typed `source`'s command, so `install` may run it again."""
    if not source.stdio:
        return
    path = (home or Settings.from_env().home) / _TRUST_FILE
    trusted = _trusted(path)
    if source.server not in trusted:
        from registry._io import atomic_write_text

        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(sorted({*trusted, source.server}), indent=1) + "\n")


def _trusted(path: Path) -> list[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [str(item) for item in data] if isinstance(data, list) else []


def connect_url(source: McpSource, home: Path | None = None) -> str:
    """The URL a session with `source`'s server connects to: as typed, when it held a
    credential; else the URL saved for that server (`save_credential`); else the server."""
    if source.stdio or source.typed:
        return source.typed or source.server
    return stored_credentials(_credential_path(home)).get(source.server) or source.server


def save_credential(source: McpSource, home: Path | None = None) -> None:
    """Keep the credential `source` was typed with, for every later session with its server
    (the file 0600, written whole, in the user's home: never in a project)."""
    if not source.typed:
        return
    path = _credential_path(home)
    saved = stored_credentials(path)
    if saved.get(source.server) != source.typed:
        from registry._io import atomic_write_text

        saved[source.server] = source.typed
        atomic_write_text(path, json.dumps(saved, indent=1, sort_keys=True) + "\n", mode=0o600)


def _credential_path(home: Path | None) -> Path:
    return (home or Settings.from_env().home) / CREDENTIAL_FILE


def check_trusted(source: McpSource, home: Path | None = None) -> None:
    """Refuse to run a command the user never typed (one a lockfile names).

    Raises:
        HubskillsError: the command is not recorded as typed by the user.
    """
    if source.stdio and source.server not in _trusted(
            (home or Settings.from_env().home) / _TRUST_FILE):
        typed = shlex.quote(PREFIX + source.server)
        raise HubskillsError(f"{source.key}: hubskills runs a command an MCP source names only "
                             "once you typed it yourself; this one comes from a lockfile",
                             hint=f"hubskills pull {typed} --skill {source.skill or 'NAME'}  "
                                  "# once you trust that command")


def manifest_revision(digests: dict[str, str]) -> str:
    """The lock's `sha` of a skill served over MCP: its manifest's digests, hashed."""
    lines = "".join(f"{path} {digest}\n" for path, digest in sorted(digests.items()))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()[:40]


def manifest_hash(digests: dict[str, str]) -> str:
    """The content hash (`format.skill.content_hash`) the manifest's digests promise."""
    total = hashlib.sha256()
    for path, digest in sorted(digests.items()):
        total.update(b"F" + os.fsencode(path) + b"\0")
        total.update(bytes.fromhex(digest.removeprefix("sha256:")))
    return "sha256:" + total.hexdigest()


@dataclass(frozen=True)
class Manifest:
    """One skill's entry, checked: the URI of its SKILL.md, each file's URI, digest and size,
    the files to install executable, and the version the server's `_meta` names."""

    uri: str
    files: dict[str, tuple[str, str, int | None]]  # path -> (uri, digest, size)
    executable: frozenset[str]
    version: str | None

    @property
    def digests(self) -> dict[str, str]:
        """path -> `sha256:` digest."""
        return {path: digest for path, (_, digest, _) in self.files.items()}


#: what a lock entry records of the manifests this process fetched, by the skill's URI
FETCHED: dict[str, dict[str, str]] = {}


def source_entry(repo: str, ref: str | None) -> dict[str, Any]:
    """The lock's `source` block of an MCP skill: the server, the URI, the repo the URI files
    it under (`publisher`: its namespace is the one its signer is pinned for) and every
    digest."""
    source = parse_mcp(repo)
    entry: dict[str, Any] = {"server": source.server, "uri": ref or ""}
    repo_id = publisher(ref or "")
    if repo_id:
        entry["repo"] = repo_id
    if ref in FETCHED:
        entry["digests"] = dict(FETCHED[ref])
    return entry


def publisher(uri: str) -> str | None:
    """The repo a skill's URI files it under, `NS/...` (`acme/x` of
    `skill://acme/x@REV/x/SKILL.md`, `fake/x` of `skill://fake/x/SKILL.md`); None for a URI
    naming nothing before the skill's name (`skill://x/SKILL.md`)."""
    ids = entry_ids({"uri": uri}) if uri.endswith("/SKILL.md") else []
    return ids[0] if ids and "/" in ids[0] else None


def entry_name(entry: dict[str, Any]) -> str | None:
    """A listed skill's name: the segment before `/SKILL.md` in its URI (the extension
    requires it to equal the frontmatter `name`)."""
    uri = entry.get("uri")
    if not isinstance(uri, str) or not uri.endswith("/SKILL.md"):
        return None
    return uri.removesuffix("/SKILL.md").rsplit("/", 1)[-1]


def entry_ids(entry: dict[str, Any]) -> list[str]:
    """What a listed skill answers to as `NS/NAME`, its display id first: hubskills' `_meta`
    repo when it ends with the name, the URI's path with revisions (`@...`) left out and the
    `SKILL.md` off (`zeta/dup/dup` for `skill://zeta/dup@<sha>/dup/SKILL.md`), and that path
    less its last segment when that segment is the name again (`zeta/dup`)."""
    name, uri = entry_name(entry), entry.get("uri")
    if not name or not isinstance(uri, str):
        return []
    path = "/".join(part.split("@", 1)[0] for part in uri.partition("://")[2].split("/")[:-1])
    parent = path.rpartition("/")[0]
    ids = [parent] if parent.rsplit("/", 1)[-1] == name else []
    meta = entry.get("_meta")
    ours = meta.get(META_KEY) if isinstance(meta, dict) else None
    repo = ours.get("repo") if isinstance(ours, dict) else None
    if isinstance(repo, str) and repo.endswith("/" + name):
        ids.insert(0, repo)
    return list(dict.fromkeys([*ids, path]))


def picks(entry: dict[str, Any], pick: str) -> bool:
    """Whether `pick` (`NAME` or `NS/NAME`) names the listed skill `entry`."""
    if "/" not in pick:
        return entry_name(entry) == pick
    return pick.rsplit("/", 1)[-1] == entry_name(entry) and pick in entry_ids(entry)


def uri_id(uri: str) -> str:
    """The repo path of a skill's URI (`entry_ids`' last): what a pinned URI's skill is
    followed by when its name is served twice."""
    return entry_ids({"uri": uri})[-1] if entry_name({"uri": uri}) else ""


def ambiguous(server: str, source_key: str, name: str, ids: list[str]) -> HubskillsError:
    """The refusal of a name that several listed skills go by (`ids`: their repos)."""
    shown = ", ".join(ids[:8]) + (f" (+{len(ids) - 8} more)" if len(ids) > 8 else "")
    return HubskillsError(
        f"{server} serves {len(ids)} skills named {name}: {shown}; hubskills does not "
        "guess which (any namespace can publish a name); nothing was installed",
        hint=f"hubskills pull {shlex.quote(source_key)} --skill NS/{name}  # NS/{name}: the "
             "repo you mean, one of those listed")
