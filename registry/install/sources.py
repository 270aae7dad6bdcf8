"""Where a skill comes from, as users type it: a Hub id, a local folder, or a git source.

The grammar (`hubskills pull SOURCE`, and `info`, `scan`, `eval`, `suite show`, `publish`):

- `ns/name[@version|@sha]`: a skill in the registry (the Hub or the local one), as before.
- `./folder`, `../folder`, `/abs/folder`, `~/folder`: a folder on this machine (a string
  starting with `.`, `/` or `~` is never a registry id).
- `github:OWNER/REPO[/PATH][@REF]`: a GitHub repository, a folder inside it, a branch, tag or
  commit (`https://github.com/OWNER/REPO.git`).
- Any git URL (`https://`, `http://`, `ssh://`, `git://`, `file://`, each also with `git+`
  before it, and `git@HOST:OWNER/REPO`) takes the same suffixes: `URL[//PATH][@REF]`, as in
  `https://host/team/skills.git//skills/pdf@v1.2.0` (the `//` starts the folder inside the
  repository, the first `@` after the host the ref). A web link to a folder,
  `https://HOST/OWNER/REPO/tree/REF/PATH`, is read as that repository, ref and folder.

A source has a `key` (the source without its ref): what `skills.lock` and the install marker
record as the skill's `repo`, so pulling the same folder at another ref updates that install.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from registry._docs import doc
from registry.credentials import bare_url, names_credential
from registry.errors import HubskillsError
from registry.install.mcp_source import McpSource, is_mcp, parse_mcp
from registry.install.mcp_source import source_entry as mcp_entry
from registry.scan import check_relpath

GITHUB_URL = "https://github.com"
_SCHEMES = ("https://", "http://", "ssh://", "git://", "file://")
_GITHUB = re.compile(r"^github:([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})"
                     r"(?:/([^@]*))?(?:@(.*))?$")
_WEB_TREE = re.compile(r"^/([^/]+)/([^/]+?)(?:\.git)?/(?:-/)?tree/([^/]+)(?:/(.*))?$")
_REF = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/+-]{0,199}$")
_HINT = ("hubskills pull github:OWNER/REPO/PATH@REF, or URL//PATH@REF for any git URL "
         f"(see {doc('pulling')})")


@dataclass(frozen=True)
class GitSource:
    """A folder in a git repository at a ref (`ref` None: the default branch)."""

    url: str  # the clone URL; for `github:` sources the path after the GitHub base
    subdir: str = ""
    ref: str | None = None
    github: bool = False

    @property
    def key(self) -> str:
        """The source without its ref, as `skills.lock` records it."""
        if self.github:
            return f"github:{self.url}" + (f"/{self.subdir}" if self.subdir else "")
        return self.url + (f"//{self.subdir}" if self.subdir else "")

    @property
    def spec(self) -> str:
        """The source as typed, ref included."""
        return self.key + (f"@{self.ref}" if self.ref else "")

    @property
    def folder_name(self) -> str:
        """The name of the folder the skill sits in (the repository's, at its root)."""
        if self.subdir:
            return self.subdir.rsplit("/", 1)[-1]
        return re.split(r"[/:]", self.url.rstrip("/"))[-1].removesuffix(".git")

    @property
    def is_file(self) -> bool:
        """Whether git reads it from this machine (`file://`): only then is that allowed."""
        return self.url.startswith("file://")

    def clone_url(self, github_url: str = GITHUB_URL) -> str:
        """The URL git fetches (`github:` sources under `github_url`)."""
        return f"{github_url.rstrip('/')}/{self.url}.git" if self.github else self.url

    def at(self, subdir: str) -> GitSource:
        """The same repository and ref, a folder inside this one."""
        return replace(self, subdir="/".join(p for p in (self.subdir, subdir) if p))


@dataclass(frozen=True)
class FolderSource:
    """A folder on this machine: `./PATH` (relative to the project), `/PATH` or `~/PATH`."""

    text: str
    ref: None = None  # a folder has no refs

    @property
    def key(self) -> str:
        """The folder, as `skills.lock` records it."""
        return self.text

    @property
    def spec(self) -> str:
        """The folder, as typed."""
        return self.text

    @property
    def folder_name(self) -> str:
        """The folder's own name."""
        return Path(self.text).expanduser().resolve().name

    def at(self, subdir: str) -> FolderSource:
        """A folder inside this one."""
        return FolderSource(f"{self.text.rstrip('/')}/{subdir}") if subdir else self

    def resolved(self, root: Path) -> Path:
        """The folder as an absolute path (a relative one is relative to `root`)."""
        path = Path(self.text).expanduser()
        return path if path.is_absolute() else (root / path)

    def keyed(self, root: Path) -> FolderSource:
        """The folder as the lock records it: `./PATH` inside `root`, else absolute."""
        path, top = Path(self.text).expanduser().resolve(), root.resolve()
        if path.is_relative_to(top) and path != top:
            return FolderSource("./" + path.relative_to(top).as_posix())
        return FolderSource(str(path))


Source = GitSource | FolderSource | McpSource  # `mcp+...`: mcp_source.py


def is_source(text: str) -> bool:
    """Whether `text` names a folder or a git source rather than a registry id `ns/name`."""
    text = text.strip()
    return text.startswith((".", "/", "~", "github:", "git@", "git+", "mcp+")) or "://" in text


def is_folder(text: str) -> bool:
    """Whether `text` (a source, or a lock's key for one) names a folder on this machine."""
    return text.strip().startswith((".", "/", "~"))


def parse_source(text: str) -> Source:
    """Read a folder or git source (see the module docstring).

    Raises:
        HubskillsError: not a source, or a folder or ref that is not a plain path or name.
    """
    text = text.strip()
    if is_folder(text):
        return FolderSource(text)
    if is_mcp(text):
        return parse_mcp(text)
    match = _GITHUB.match(text)
    if match:
        owner, repo, subdir, ref = match.groups()
        return _checked(GitSource(f"{owner}/{repo.removesuffix('.git')}",
                                  (subdir or "").strip("/"), ref, github=True), text)
    url = text.removeprefix("git+")
    # The whole URL: a password of any length, and a token after `//PATH` too, where `git`
    # never reads it but the lock would record it as the folder.
    if url.startswith(_SCHEMES) and names_credential(url):
        raise HubskillsError(
            f"'{_unechoed(url)}' (as typed, with a credential in it) would be recorded in "
            "skills.lock and the install marker, which a project commits: no source holds one",
            hint="pull it without the credential, and let git supply it: gh auth setup-git (for "
                 "GitHub), or git config --global credential.helper store")
    if url.startswith(_SCHEMES):
        scheme, _, rest = url.partition("://")
        host, slash, path = rest.partition("/")
        return _split_path(f"{scheme}://{host}", slash + path, text)
    if url.startswith("git@") and ":" in url:
        host, _, path = url.partition(":")
        return _split_path(f"{host}:", path, text)
    # as typed (`HTTPS://` is no source, `https://` is), less what holds the credential
    shown = re.sub(r"//[^/?#]*@", "//", text, count=1).partition("?")[0] \
        if "://" in text and names_credential(text) else text
    raise HubskillsError(f"'{shown}' is not a folder or a git source", hint=_HINT)


def _unechoed(url: str) -> str:
    """``url`` without its credential, for an error to repeat (`bare_url`; one that does not
    parse, `https://u:p@[::1/x`, without what comes before the `@` of its host part)."""
    return bare_url(url) or re.sub(r"//[^/?#]*@", "//", url, count=1).partition("?")[0]


def _split_path(prefix: str, path: str, text: str) -> GitSource:
    """`PATH[//SUBDIR][@REF]` (or a web `/OWNER/REPO/tree/REF/PATH`) after the host."""
    path, at, ref = path.partition("@")
    repo, double, subdir = path[1:].partition("//") if path.startswith("/") \
        else path.partition("//")
    repo = ("/" if path.startswith("/") else "") + repo
    web = _WEB_TREE.match(repo) if prefix.startswith(("https://", "http://")) else None
    if web and not (at or double):
        owner, name, ref, subdir = web.groups()
        repo, at = f"/{owner}/{name}.git", "@"
    if not repo.strip("/"):
        raise HubskillsError(f"'{text}' names no repository", hint=_HINT)
    url = prefix + repo.rstrip("/")
    github = re.fullmatch(r"https://github\.com/([^/]+)/([^/]+?)(?:\.git)?", url)
    if github:
        return _checked(GitSource(f"{github[1]}/{github[2]}", (subdir or "").strip("/"),
                                  ref if at else None, github=True), text)
    return _checked(GitSource(url, (subdir or "").strip("/"), ref if at else None), text)


def _checked(source: GitSource, text: str) -> GitSource:
    if source.subdir:
        try:
            check_relpath(source.subdir)
        except HubskillsError as err:
            raise HubskillsError(f"'{text}': the folder '{source.subdir}' is not a plain "
                                 "relative path", hint=_HINT) from err
    if source.ref is not None:
        check_git_ref(source.ref, text)
    return source


def check_git_ref(ref: str, text: str | None = None) -> str:
    """Refuse a ref that is no plain branch, tag or sha (options, `..`, spaces, `@{`).

    Raises:
        HubskillsError: the ref, and what to type instead.
    """
    if not _REF.match(ref) or ".." in ref or "//" in ref or ref.endswith(("/", ".lock", ".")):
        raise HubskillsError(f"'{ref}' is not a branch, tag or commit sha"
                             + (f" (in '{text}')" if text else ""),
                             hint="name a branch, a tag or a commit after @, or leave @REF out "
                                  "for the default branch")
    return ref


def folder_name(repo: str) -> str:
    """The folder a skill from `repo` (a registry id or a source key) must be named after."""
    return parse_source(repo).folder_name if is_source(repo) else repo.split("/")[1]


def source_entry(repo: str, ref: str | None) -> dict[str, Any] | None:
    """What `skills.lock` records of a source besides its key; None for a registry id."""
    if not is_source(repo):
        return None
    if is_mcp(repo):
        return mcp_entry(repo, ref)
    source = parse_source(repo)
    if isinstance(source, FolderSource):
        return {"path": source.key}
    if isinstance(source, McpSource):  # taken above (`is_mcp`)
        return mcp_entry(repo, ref)
    return {"url": source.clone_url(), "subdir": source.subdir, "ref": ref or "HEAD"}
