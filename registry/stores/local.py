"""`LocalStore`: the embedded registry, a folder that mirrors the Hub's model.

Layout under `root` (normally `settings.store_dir`)::

    .lock                                   locked around every write (cross-process)
    .seeded                                 marker: seeding (see `seed.py`) happened
    skills/<ns>/<name>/refs.json            main, tags and the publish history (dates, messages)
    skills/<ns>/<name>/meta.json            downloads (fetch counts them), likes, private
    skills/<ns>/<name>/README.md            the card, as on the Hub (not part of a revision)
    skills/<ns>/<name>/revisions/<sha>/     tree.json (paths, sha256, sizes) + files/
    datasets/<results repo>/README.md       dataset card declaring the `evals` split
    datasets/<results repo>/data/evals/YYYY-MM/<run_id>.jsonl   (`local_results.py`)
    datasets/<results repo>/verifications/YYYY-MM/<record>.json
    cache/frame/                            parquet shards of the results frame (a cache)

A revision is content-addressed: its sha is the SHA-1 of its file listing (paths and SHA-256
digests), so the same files always give the same sha and re-publishing unchanged content reuses
the revision (as the Hub skips an empty commit). Revisions are written to a temporary folder and
renamed into place, metadata files are replaced atomically, so a failed publish leaves nothing.
"""

from __future__ import annotations

import contextlib
import difflib
import glob
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from registry._io import atomic_write_text
from registry.errors import SkillNotFound, VersionExists, VersionNotFound
from registry.format.skill import load_skill
from registry.results.runs import utc_now
from registry.scan import STORE_LIMITS, SizeLimits
from registry.stores._lock import StoreLock
from registry.stores.base import (
    Fetched,
    LiftKey,
    Published,
    Resolved,
    ResultsShorthands,
    SkillInfo,
    VersionInfo,
    check_sort,
    sort_infos,
)
from registry.stores.card import card_fields, parse_card, render_card, with_evals
from registry.stores.dataset import DEFAULT_RESULTS_NAME
from registry.stores.files import listing_digest, restore_files, skill_files, skill_layout
from registry.stores.local_results import LocalResults
from registry.stores.refs import (
    check_repo_id,
    normalize_version,
    resolve_ref,
    tag_for,
    version_tags,
)
from registry.stores.revisions import (
    read_json,
    read_revision,
    revision_bytes,
    write_json,
    write_revision,
)

_SHA = frozenset("0123456789abcdef")


class LocalStore(ResultsShorthands):
    """A folder-backed `SkillStore` with the Hub's semantics (see the module docstring); its
    results dataset is `results` (`LocalResults`)."""

    kind = "local"

    def __init__(self, root: Path, *, namespace: str = "local",
                 results_repo: str = DEFAULT_RESULTS_NAME, limits: SizeLimits = STORE_LIMITS,
                 seed: Callable[[LocalStore], object] | None = None) -> None:
        """A store in `root`; `seed`, if given, fills it on first use (see `seed.py`)."""
        self.root = Path(root)
        self.namespace = namespace
        self.results_repo = results_repo
        self.limits = limits
        self._seed = seed
        self._lock = StoreLock(self.root / ".lock")
        self._seeding = False
        self.results: LocalResults = LocalResults(self.root, results_repo, lock=self._lock,
                                              ready=self._ensure_seeded)

    # -- paths ----------------------------------------------------------------------------

    def _skill_dir(self, repo: str) -> Path:
        ns, name = check_repo_id(repo)
        return self.root / "skills" / ns / name

    def _existing(self, repo: str) -> Path:
        self._ensure_seeded()  # whatever is asked first (`info`, `fetch`...) sees the examples
        folder = self._skill_dir(repo)
        if not (folder / "refs.json").is_file():
            close = difflib.get_close_matches(repo, self._repos(), n=1, cutoff=0.85)
            raise SkillNotFound(f"no skill '{repo}' in the local registry ({self.root})",
                                hint=f"hubskills info {close[0]}  # the closest name here"
                                if close else f"hubskills search {repo.split('/')[-1]}")
        return folder

    def _repos(self) -> list[str]:
        return [f"{path.parent.parent.name}/{path.parent.name}"
                for path in sorted(self.root.glob("skills/*/*/refs.json"))]

    @property
    def dataset_dir(self) -> Path:
        """The results dataset folder (loadable with `datasets.load_dataset(path)`)."""
        return self.results.dataset_dir

    def default_namespace(self) -> str:
        """The namespace `publish` uses when no repo is given."""
        return self.namespace

    # -- seeding ----------------------------------------------------------------------------

    @property
    def seed_marker(self) -> Path:
        """The file whose presence says the store was seeded."""
        return self.root / ".seeded"

    @contextlib.contextmanager
    def seeding(self) -> Iterator[None]:
        """Hold the lock while seeding; publishes made meanwhile do not seed again."""
        with self._lock:
            self._seeding = True
            try:
                yield
            finally:
                self._seeding = False

    def _ensure_seeded(self) -> None:
        if self._seed is not None and not self._seeding and not self.seed_marker.exists():
            with self.seeding():
                if not self.seed_marker.exists():  # another process may have seeded meanwhile
                    self._seed(self)

    # -- skills -----------------------------------------------------------------------------

    def publish(self, skill_dir: Path, *, repo: str, version: str, private: bool = False,
                message: str | None = None) -> Published:
        """Store a revision of the skill, tag it `v<version>`, move `main`, write the card.

        Raises:
            VersionExists: the tag exists (versions are immutable).
        """
        self._ensure_seeded()
        skill = load_skill(skill_dir)
        files = skill_files(skill)
        version, tag, folder = normalize_version(version), tag_for(version), self._skill_dir(repo)
        with self._lock:
            refs = read_json(folder / "refs.json", {"main": None, "tags": {}, "history": []})
            if tag in refs["tags"]:
                raise VersionExists(f"{repo} {tag} already exists; versions are immutable",
                                    hint=f"hubskills publish {skill_dir} --bump patch")
            sha, created = write_revision(folder / "revisions", files,
                                          skill_layout(skill, files), self.limits)
            derived = [folder / "README.md", folder / "meta.json"]
            previous = {path: path.read_bytes() if path.exists() else None for path in derived}
            try:
                tree = read_json(folder / "revisions" / sha / "tree.json", {})
                atomic_write_text(folder / "README.md", render_card(
                    skill, repo=repo, version=version, content_hash=tree["content_hash"],
                    summary=self._card_summary(repo)))
                meta = read_json(folder / "meta.json", {"downloads": 0, "likes": 0,
                                                         "created": utc_now()})
                write_json(folder / "meta.json", {**meta, "private": private})
                refs["main"], refs["tags"][tag] = sha, sha
                refs["history"].append({"sha": sha, "tag": tag, "date": utc_now(),
                                        "message": message or f"Publish {tag}"})
                write_json(folder / "refs.json", refs)  # the commit point
            except BaseException:
                restore_files(previous)
                if created:
                    shutil.rmtree(folder / "revisions" / sha, ignore_errors=True)
                raise
        return Published(repo, version, tag, sha, f"file://{folder}")

    def versions(self, repo: str) -> list[VersionInfo]:
        """Published versions, newest first."""
        self._ensure_seeded()
        refs = read_json(self._existing(repo) / "refs.json", {})
        dates = {h["tag"]: h["date"] for h in refs.get("history", []) if h.get("tag")}
        return [VersionInfo(v, tag, sha, dates.get(tag))
                for v, tag, sha in version_tags(refs.get("tags", {}))]

    def resolve(self, repo: str, ref: str | None = None) -> Resolved:
        """Resolve latest / version / `main` / sha / sha prefix (see `base.resolve_ref`)."""
        self._ensure_seeded()
        folder = self._existing(repo)
        refs = read_json(folder / "refs.json", {})

        def commits() -> list[str]:
            return [p.name for p in (folder / "revisions").iterdir() if set(p.name) <= _SHA]

        return resolve_ref(repo, ref, tags=refs.get("tags", {}), main=refs.get("main"),
                           commits=commits)

    def fetch(self, repo: str, sha: str, dest: Path, *, limits: SizeLimits = STORE_LIMITS,
              pinned_hash: str | None = None, count: bool = True) -> Fetched:
        """Write the skill's files at `sha` into the empty folder `dest`, checking each one.

        Raises:
            VersionNotFound: no such revision.
            UnsafeSkill: an unsafe path, a link, files over `limits`, or a file whose digest
                does not match.
        """
        self._ensure_seeded()
        rev = self._existing(repo) / "revisions" / sha
        if len(sha) != 40 or not set(sha) <= _SHA or not (rev / "tree.json").is_file():
            raise VersionNotFound(f"{repo} has no revision '{sha}'",
                                  hint=f"hubskills versions {repo}")
        paths, digest = read_revision(rev, f"{repo}@{sha[:12]}", dest, limits)
        if not count:  # a look (scan), not a download
            return Fetched(dest, paths, digest)
        with self._lock:
            meta_path = self._skill_dir(repo) / "meta.json"
            meta = read_json(meta_path, {})
            write_json(meta_path, {**meta, "downloads": int(meta.get("downloads", 0)) + 1})
        return Fetched(dest, paths, digest)

    def read_files(self, repo: str, sha: str, *, limits: SizeLimits = STORE_LIMITS,
                   digests: dict[str, str] | None = None
                   ) -> tuple[dict[str, bytes], frozenset[str]]:
        """The skill's files at `sha` as bytes, checked as `fetch` checks them but written
        nowhere, and the paths with an exec bit (for a server handing them out: writing and
        removing a folder per revision would cost more than the reading). `digests`, when
        given, receives each file's SHA-256 (hex), checked against the bytes returned.

        Raises:
            VersionNotFound: no such revision; UnsafeSkill: as for `fetch`.
        """
        self._ensure_seeded()
        rev = self._existing(repo) / "revisions" / sha
        if len(sha) != 40 or not set(sha) <= _SHA or not (rev / "tree.json").is_file():
            raise VersionNotFound(f"{repo} has no revision '{sha}'",
                                  hint=f"hubskills versions {repo}")
        files, layout, _ = revision_bytes(rev, f"{repo}@{sha[:12]}", limits, digests)
        return files, frozenset(layout.executable)

    def search(self, query: str = "", *, sort: str = "downloads", limit: int = 50,
               lift_key: LiftKey | None = None) -> list[SkillInfo]:
        """Skills whose id, name or description contain every word of `query`."""
        self._ensure_seeded()
        check_sort(sort)
        words = query.lower().split()
        found = []
        for refs_file in sorted(self.root.glob("skills/*/*/refs.json")):
            info = self._basic_info(refs_file.parent, f"{refs_file.parent.parent.name}/"
                                                      f"{refs_file.parent.name}")
            text = f"{info.repo} {info.name} {info.description}".lower()
            if all(w in text for w in words):
                found.append(info)
        return sort_infos(found, sort, limit, lambda: _summary().store_lifts(self, lift_key))

    def _basic_info(self, folder: Path, repo: str) -> SkillInfo:
        card_path = folder / "README.md"
        card = card_path.read_text(encoding="utf-8") if card_path.is_file() else ""
        meta = read_json(folder / "meta.json", {})
        history = read_json(folder / "refs.json", {}).get("history", [])
        fields = card_fields(parse_card(card), repo)
        return SkillInfo(repo=repo, downloads=int(meta.get("downloads", 0)),
                         likes=int(meta.get("likes", 0)),
                         updated=history[-1]["date"] if history else None, card=card, **fields)

    def info(self, repo: str) -> SkillInfo:
        """One skill with its card and versions (`version` = the newest version tag)."""
        folder = self._existing(repo)
        versions = self.versions(repo)
        info = self._basic_info(folder, repo)
        latest = versions[0].version if versions else info.version
        return replace(info, version=latest, versions=versions)

    def _card_summary(self, repo: str) -> list[dict[str, Any]]:
        from registry.stores.verifications import badges

        return _summary().card_summary(self.results_frame(), repo, badges(self))

    def refresh_card(self, repo: str) -> None:
        """Rewrite the card's evaluation section from the results dataset."""
        folder = self._existing(repo)
        with self._lock:
            card = (folder / "README.md").read_text(encoding="utf-8")
            summary = self._card_summary(repo)
            atomic_write_text(folder / "README.md", with_evals(card, summary))

    def change_token(self) -> tuple[str, str]:
        """(results, skills): digests of file listings, no file read, that change when a run
        is appended / when a skill is published or its card rewritten (downloads do not
        count). For readers that keep what they built from `results_frame` and `search`."""
        results = self.results.change_token()  # seeds the store first
        folders = sorted(glob.glob(os.path.join(glob.escape(str(self.root)), "skills", "*", "*")))
        skills = [os.path.join(f, name) for f in folders for name in ("refs.json", "README.md")]
        return results, listing_digest(skills)

    def revision_content_hash(self, repo: str, sha: str) -> str | None:
        """The content hash of a stored revision (None when there is no such revision)."""
        tree = read_json(self._skill_dir(repo) / "revisions" / sha / "tree.json", {})
        return tree.get("content_hash")


def _summary() -> Any:
    """`stores.summary`, imported on first use: it loads pandas, which `eval` never needs."""
    from registry.stores import summary

    return summary
