"""`skill://` URIs of the registry: one immutable revision each, parsed strictly.

A file of a published skill is `skill://NS/REPO@REVISION/NAME/PATH`: `NS/REPO` is the skill's
repo in the registry, `REVISION` the full 40-hex commit its version tag points at, `NAME` the
`name` of its frontmatter (the Skills extension, SEP-2640, requires the last segment of the
skill path to be the name) and `PATH` the file inside the skill. The skill path
`NS/REPO@REVISION/NAME` is the extension's "server-chosen prefix" plus the name, so a host that
records a URI has pinned the bytes it read.

Parsing refuses, before any store is asked, what could name something outside one skill: `.`
and `..` segments, empty segments, percent-encoding (an encoded `/` or `..` is never decoded),
backslashes, control characters, a query or a fragment, and a revision that is not 40
lowercase hex digits. What survives is only looked up in the revision's own manifest: the
server never turns a URI into a filesystem path.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

SCHEME = "skill://"
_SEGMENT = re.compile(r"[A-Za-z0-9._-]+")  # ns, repo, name: the Hub's repo id characters
_FILE_SEGMENT = re.compile(r"[^\x00-\x1f\x7f/\\%?#]+")
_REVISION = re.compile(r"[0-9a-f]{40}")
_REFUSED = re.compile(r"[\x00-\x1f\x7f\\%?#]")  # in a path segment (`_FILE_SEGMENT`'s)
MAX_URI = 2048  # characters: a repo id, a revision, a name and a path inside a skill fit


class BadSkillUri(ValueError):
    """A `skill://` URI this server cannot serve (the message says why)."""


@dataclass(frozen=True)
class SkillUri:
    """A parsed URI: the repo, its revision, the skill's name and a path inside it ("" for the
    skill's root directory)."""

    repo: str
    revision: str
    name: str
    path: str

    @property
    def root(self) -> str:
        """The skill's root directory resource (no trailing slash)."""
        return skill_root(self.repo, self.revision, self.name)


def skill_root(repo: str, revision: str, name: str) -> str:
    """`skill://NS/REPO@REVISION/NAME`: the root directory of one revision of a skill."""
    return f"{SCHEME}{repo}@{revision}/{name}"


def file_uri(repo: str, revision: str, name: str, path: str) -> str:
    """The URI of the file `path` (posix, relative) of one revision of a skill."""
    return f"{skill_root(repo, revision, name)}/{path}"


def parse(uri: str) -> SkillUri:
    """Parse a file or directory URI of this server (the URIs parsed last are kept: a
    `SkillUri` is immutable, and a host reads the same URIs again; a refused one is checked
    anew every time). One over `MAX_URI` characters is refused unread, so what is kept stays
    bounded (`MAX_URI` x the cache's size): any client may send one.

    Raises:
        BadSkillUri: too long, not of the form above, or with a segment that could escape the
            skill.
    """
    if len(uri) > MAX_URI:
        raise BadSkillUri(f"{uri[:60]!r}… is over {MAX_URI} characters")
    return _parse(uri)


@functools.lru_cache(maxsize=8192)
def _parse(uri: str) -> SkillUri:
    if not uri.startswith(SCHEME):
        raise BadSkillUri(f"{uri!r} is not a skill:// URI")
    segments = uri[len(SCHEME):].split("/")
    if len(segments) < 3:
        raise BadSkillUri(f"{uri!r} names no skill: expected skill://NS/REPO@REVISION/NAME/PATH")
    ns, pinned, name, *rest = segments
    repo_name, at, revision = pinned.partition("@")
    if not at or not _REVISION.fullmatch(revision):
        raise BadSkillUri(f"{uri!r} names no revision: the second segment must be "
                          "REPO@REVISION with the full 40-hex commit")
    for part in (ns, repo_name, name):
        if not _SEGMENT.fullmatch(part) or part in (".", ".."):
            raise BadSkillUri(f"{uri!r}: {part!r} is not a valid skill segment")
    for part in rest:
        if part in ("", ".", "..") or not _FILE_SEGMENT.fullmatch(part):
            raise BadSkillUri(f"{uri!r}: the path segment {part!r} is refused (no '.', '..', "
                              "empty segments, percent-encoding, backslashes or control "
                              "characters)")
    return SkillUri(f"{ns}/{repo_name}", revision, name, "/".join(rest))


def servable(paths: Iterable[str]) -> bool:
    """Whether `parse` gives back each of `paths` from its file URI under a skill root that
    parses (one search over them all): a server that parsed a URI of the root may then answer
    those exact URI strings without parsing each."""
    joined = f"/{'/'.join(paths)}/"  # every segment between slashes: none empty, "." or ".."
    return (not _REFUSED.search(joined) and "//" not in joined and "/./" not in joined
            and "/../" not in joined)
