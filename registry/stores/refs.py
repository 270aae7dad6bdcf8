"""Versions and refs: semantic versions, `v<version>` tags, repo ids, and ref resolution.

Both stores resolve a ref with `resolve_ref` over their tags, `main` and commits, so `latest`,
`1.2.0`, `v1.2.0`, `main`, a tag, a sha and a unique sha prefix mean the same everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from registry.errors import HubskillsError, VersionNotFound
from registry.stores.base import Resolved

_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$")
_HEX = re.compile(r"^[0-9a-f]{7,40}$")
_REPO_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
_BRANCH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def parse_version(text: str) -> tuple[int, int, int, str | None]:
    """Parse `1.2.3`, `v1.2.3` or `1.2.3-rc.1`.

    Raises:
        HubskillsError: not a semantic version.
    """
    match = _SEMVER.match(text.strip())
    if not match:
        raise HubskillsError(f"'{text}' is not a version like 1.2.0",
                             hint="pass --version X.Y.Z or --bump patch")
    major, minor, patch, pre = match.groups()
    return int(major), int(minor), int(patch), pre


def is_version(text: str) -> bool:
    """Whether `text` is a semantic version (with or without a leading `v`)."""
    return bool(_SEMVER.match(text.strip()))


def normalize_version(text: str) -> str:
    """`v1.2.0` -> `1.2.0` (validated)."""
    major, minor, patch, pre = parse_version(text)
    return f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else "")


def version_key(text: str) -> tuple:
    """Sort key in semver precedence: a pre-release sorts before its release."""
    major, minor, patch, pre = parse_version(text)
    if pre is None:
        return (major, minor, patch, 1, ())
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return (major, minor, patch, 0, parts)


def bump_version(text: str, part: str) -> str:
    """Bump `major`, `minor` or `patch` of a version (a pre-release suffix is dropped)."""
    major, minor, patch, _ = parse_version(text)
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    if part == "patch":
        return f"{major}.{minor}.{patch + 1}"
    raise HubskillsError(f"cannot bump '{part}'", hint="use --bump major|minor|patch")


def tag_for(version: str) -> str:
    """The git tag of a version: `v1.2.0`."""
    return "v" + normalize_version(version)


def version_tags(tags: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(version, tag, sha) for every `v<semver>` tag, newest first."""
    found = [(t[1:], t, sha) for t, sha in tags.items() if t.startswith("v") and is_version(t)]
    return sorted(found, key=lambda item: version_key(item[0]), reverse=True)


def resolve_ref(repo: str, ref: str | None, *, tags: Mapping[str, str], main: str | None,
                commits: Callable[[], Iterable[str]]) -> Resolved:
    """Resolve a ref against a repo's tags, `main` and commits (called only for sha refs).

    Raises:
        VersionNotFound: the ref names nothing, or a sha prefix is ambiguous.
    """
    wanted = check_ref((ref or "latest").strip())
    tagged = version_tags(tags)

    def version_of(sha: str) -> str | None:
        return next((v for v, _, target in tagged if target == sha), None)

    if wanted == "latest":
        if tagged:
            return Resolved(repo, tagged[0][2], tagged[0][0], wanted)
        if main:
            return Resolved(repo, main, None, wanted)
    elif wanted == "main" and main:
        return Resolved(repo, main, version_of(main), wanted)
    elif is_version(wanted) and tag_for(wanted) in tags:
        return Resolved(repo, tags[tag_for(wanted)], normalize_version(wanted), wanted)
    elif wanted in tags:
        return Resolved(repo, tags[wanted], version_of(tags[wanted]), wanted)
    elif _HEX.match(wanted.lower()):
        matches = sorted({sha for sha in commits() if sha.startswith(wanted.lower())})
        if len(matches) == 1:
            return Resolved(repo, matches[0], version_of(matches[0]), wanted)
        if len(matches) > 1:
            raise VersionNotFound(f"'{wanted}' matches {len(matches)} revisions of {repo}",
                                  hint=f"use a longer sha; hubskills versions {repo}")
    raise VersionNotFound(f"{repo} has no version, tag or revision '{wanted}'",
                          hint=f"hubskills versions {repo}")


def check_repo_id(repo: str) -> tuple[str, str]:
    """Split `ns/name`, refusing anything else (no traversal through a repo id).

    Raises:
        HubskillsError: not of the form `namespace/name`.
    """
    parts = repo.split("/")
    if len(parts) != 2 or not all(_REPO_PART.match(p) and ".." not in p for p in parts):
        raise HubskillsError(f"'{repo}' is not a skill id like namespace/name",
                             hint=f"hubskills search {parts[-1] or 'NAME'}  # to find the "
                                  "exact id")
    return parts[0], parts[1]


def check_ref(ref: str) -> str:
    """Accept only a ref that cannot be read as a path or an option: `latest`, a version
    (`1.2.0`, `v1.2.0`), a sha or sha prefix, or a plain branch/tag name (letters, digits,
    `.`, `_`, `-`; no `/`, no `..`, not starting with `-` or `.`).

    Raises:
        HubskillsError: any other ref (`../..`, `main/../x`, `--help`, `a b`).
    """
    if is_version(ref) or (_BRANCH.match(ref) and ".." not in ref
                           and not ref.lower().endswith(".lock")):
        return ref
    raise HubskillsError(f"{ref!r} is not a version, sha or plain branch name",
                         hint="pull NS/NAME@v1.2.0, @<sha> or @main; hubskills versions NS/NAME")


def is_full_sha(text: str) -> bool:
    """Whether `text` is a full 40-character commit sha (lowercase hex)."""
    return len(text) == 40 and _HEX.match(text) is not None
