"""What the MCP server serves, read from one store: skill entries, files, directories, search.

A `Catalog` knows nothing of MCP's transport: it turns the store's latest versions into the
Skills extension's entries (`uri`, verbatim `frontmatter`, `resources` with `sha256:` digests
and sizes) plus hubskills' own `_meta`, and answers reads by `SkillUri`. Files are fetched once
per (repo, revision) and kept in memory: a revision is immutable, so they never go stale.
What can change (new versions, new runs) is read again when the store's change token moves.
"""

from __future__ import annotations

import hashlib
import json
import logging
import mimetypes
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from registry.errors import HubskillsError
from registry.format.skill import parse_frontmatter, split_frontmatter
from registry.mcp.meta import Figures, empty_figures, is_verified, version_figures
from registry.mcp.uris import SkillUri, file_uri
from registry.stores.base import SkillInfo, SkillStore

logger = logging.getLogger(__name__)

#: the `_meta` key of hubskills' annotations (the extension leaves provenance to intermediaries
#: under their own reverse-domain prefix)
META_KEY = "io.hubskills/registry"
LISTINGS = ("latest", "verified")  # which version of each skill `skills/list` lists
_ALL = 100_000


class NotServed(LookupError):
    """The URI names nothing this server serves (the message says what is missing)."""


@dataclass(frozen=True)
class Revision:
    """One fetched revision of a skill: its files' bytes, keyed by posix path, and its
    frontmatter as the SKILL.md says it."""

    repo: str
    sha: str
    version: str | None
    name: str
    frontmatter: dict[str, Any]
    files: dict[str, bytes]
    executable: frozenset[str] = frozenset()  # paths with an exec bit

    def uri(self, path: str = "SKILL.md") -> str:
        """The `skill://` URI of `path` in this revision."""
        return file_uri(self.repo, self.sha, self.name, path)


class Catalog:
    """The skills of `store` as MCP serves them; thread-safe, one per server.

    `listing` says which version of each skill is listed: "latest", or "verified" (the newest
    whose best leaderboard entry is replayed or spot-checked; a skill with none is not listed,
    yet `skills/get` and reads still answer for every revision).
    """

    def __init__(self, store: SkillStore, *, listing: str = "latest") -> None:
        if listing not in LISTINGS:
            raise ValueError(f"listing must be one of {LISTINGS}, not {listing!r}")
        self.store = store
        self.listing = listing
        self._lock = threading.Lock()
        self._revisions: dict[tuple[str, str], Revision] = {}
        self._token: tuple[str, str] | None = None
        self._latest: list[tuple[SkillInfo, str]] = []
        self._figures: Figures = {}
        self._licenses: dict[str, str | None] = {}
        self._results_error: str | None = None
        self._scans: dict[tuple[str, str], dict[str, Any]] = {}

    def listed(self) -> list[Revision]:
        """The latest version of every skill, by repo id."""
        self._refresh()
        return [self.revision(info.repo, sha, info.version) for info, sha in self._latest]

    def figures(self, rev: Revision) -> dict[str, Any]:
        """What the results say about `rev`'s version (`meta.version_figures`)."""
        return self._figures.get((rev.repo, rev.version)) or empty_figures()

    def entry(self, rev: Revision) -> dict[str, Any]:
        """The extension's `Skill` entry of `rev`, with hubskills' `_meta`."""
        if self._token is None:  # a skills/get before any listing: read the figures once
            self._refresh()
        resources = [{"uri": rev.uri(path), "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
                      "size": len(data)} for path, data in sorted(rev.files.items())]
        meta: dict[str, Any] = {
            "repo": rev.repo, "revision": rev.sha, "version": rev.version,
            "license": self._licenses.get(rev.repo), **self.figures(rev),
            "scan": self._scan(rev), "executable": sorted(rev.executable)}
        if self._results_error:
            meta["results_error"] = self._results_error
        return {"uri": rev.uri(), "frontmatter": rev.frontmatter, "resources": resources,
                "_meta": {META_KEY: meta}}

    def revision(self, repo: str, sha: str, version: str | None = None) -> Revision:
        """The files and frontmatter of `repo` at `sha`, fetched once.

        Raises:
            NotServed: no such skill or revision in the store.
        """
        key = (repo, sha)
        with self._lock:
            if key in self._revisions:
                return self._revisions[key]
        try:
            resolved = self.store.resolve(repo, sha)
        except HubskillsError as err:
            raise NotServed(f"no revision {sha} of {repo} is served here: {err}") from err
        if resolved.sha != sha:
            raise NotServed(f"no revision {sha} of {repo} is served here")
        rev = self._fetch(repo, sha, version or resolved.version)
        with self._lock:
            return self._revisions.setdefault(key, rev)

    def lookup(self, uri: SkillUri) -> Revision:
        """The revision `uri` names, checking that its name is that revision's own.

        Raises:
            NotServed: unknown repo or revision, or the name of another skill.
        """
        rev = self.revision(uri.repo, uri.revision)
        if rev.name != uri.name:
            raise NotServed(f"{uri.repo}@{uri.revision} is the skill {rev.name!r}, "
                            f"not {uri.name!r}")
        return rev

    def read(self, uri: SkillUri) -> tuple[bytes, str]:
        """The bytes and MIME type of the file `uri` names (only a file of its manifest).

        Raises:
            NotServed: not a file of that revision.
        """
        rev = self.lookup(uri)
        data = rev.files.get(uri.path)
        if data is None:
            raise NotServed(f"{uri.path!r} is not a file of {rev.repo}@{rev.sha}")
        return data, mime_type(uri.path)

    def directory(self, uri: SkillUri) -> list[tuple[str, str, str]]:
        """(uri, name, mimeType) of each direct child of the directory `uri` names.

        Raises:
            NotServed: not a directory of that revision.
        """
        rev = self.lookup(uri)
        prefix = f"{uri.path}/" if uri.path else ""
        children: dict[str, str] = {}
        for path in rev.files:
            if path.startswith(prefix):
                head, sep, _ = path[len(prefix):].partition("/")
                children[head] = "inode/directory" if sep else mime_type(head)
        if not children:
            raise NotServed(f"{uri.root}/{uri.path} is not a directory resource")
        return [(rev.uri(prefix + child), child, kind) for child, kind in sorted(children.items())]

    def search(self, query: str, limit: int) -> list[tuple[SkillInfo, Revision]]:
        """Skills for a task in words: every word found first, then the most of them."""
        self._refresh()
        words = [w for w in query.lower().split() if len(w) > 2] or query.lower().split()
        scored = []
        for info, sha in self._latest:
            text = f"{info.repo} {info.name} {info.description} {' '.join(info.tags)}".lower()
            hits = sum(word in text for word in words)
            if hits or not words:
                lift = self._figures.get((info.repo, info.version), {}).get("best_lift_lo")
                scored.append((-hits, -(lift if lift is not None else -1.0), info.repo, info, sha))
        scored.sort(key=lambda item: item[:3])
        return [(info, self.revision(info.repo, sha, info.version))
                for *_, info, sha in scored[:limit]]

    def _refresh(self) -> None:
        token = self.store.change_token()
        with self._lock:
            if token == self._token:
                return
        infos = self.store.search("", limit=_ALL)
        figures, error = version_figures(self.store)
        listed = []
        for info in infos:
            chosen = self._chosen(info, figures)
            if chosen is not None:
                listed.append(chosen)
        with self._lock:
            self._token, self._latest, self._figures = token, listed, figures
            self._licenses = {info.repo: info.license for info in infos}
            self._results_error = error

    def _chosen(self, info: SkillInfo, figures: Figures) -> tuple[SkillInfo, str] | None:
        """(info, revision) of the version of `info` the listing names, None for none."""
        if self.listing == "latest":
            return info, self.store.resolve(info.repo, info.version or None).sha
        for version in self.store.versions(info.repo):  # newest first
            if is_verified(figures.get((info.repo, version.version), {})):
                return replace(info, version=version.version), version.sha
        return None

    def _fetch(self, repo: str, sha: str, version: str | None) -> Revision:
        with tempfile.TemporaryDirectory(prefix="hubskills-mcp-") as tmp:
            dest = Path(tmp) / "skill"
            fetched = self.store.fetch(repo, sha, dest, count=False)
            files = {rel: (dest / rel).read_bytes() for rel in fetched.files}
            executable = frozenset(rel for rel in fetched.files
                                   if (dest / rel).stat().st_mode & 0o111)
        if "SKILL.md" not in files:
            raise NotServed(f"{repo}@{sha} has no SKILL.md")
        yaml_text, _, _ = split_frontmatter(files["SKILL.md"].decode("utf-8"))
        frontmatter, _ = parse_frontmatter(yaml_text)
        frontmatter = json.loads(json.dumps(frontmatter, default=str))  # YAML dates -> strings
        return Revision(repo, sha, version, str(frontmatter.get("name", "")), frontmatter, files,
                        executable)

    def _scan(self, rev: Revision) -> dict[str, Any]:
        """The scan's findings on `rev`, by severity (what `hubskills scan` would say)."""
        from registry.scan import scan_folder

        key = (rev.repo, rev.sha)
        if key in self._scans:
            return self._scans[key]

        with tempfile.TemporaryDirectory(prefix="hubskills-mcp-scan-") as tmp:
            root = Path(tmp) / rev.name
            for rel, data in rev.files.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_bytes(data)
            findings = scan_folder(root)
        counts: dict[str, int] = {}
        for finding in findings:
            counts[finding.severity] = counts.get(finding.severity, 0) + 1
        self._scans[key] = {"findings": len(findings), "by_severity": counts}
        return self._scans[key]


def mime_type(path: str) -> str:
    """The MIME type a file is served with (markdown and unknown text as the extension says)."""
    if path.endswith(".md"):
        return "text/markdown"
    guessed, _ = mimetypes.guess_type(path)
    return guessed or "application/octet-stream"
