"""`HubStore`: skills as Hugging Face model repos, eval results as a dataset repo.

Every Hub call goes through `registry.hub.HubClient`; its typed errors become user errors at
this edge (`user_errors`) unless one means something here (a missing repo on first publish, a
stale parent, an existing tag). A skill is the model repo `ns/name` (layout: `files.py`).
Publish reads the tags, the files at `main` and the results summary at once, makes one commit
guarded by `parent_commit` (retried when `main` moved; `hub_publish.py`) and tags it
`v<version>`. A version is resolved and listed in one request. Fetch checks the listing before
anything is downloaded, then downloads (`snapshot_download`; pinned, a GET per file) into
`HUBSKILLS_HOME/hub-cache` (see `__init__` for why not the shared HF cache), recording
`refs/<tag>` there. Offline or unreachable, pulls are answered by that cache alone (a full sha,
or a tag fetched before); what it lacks raises `RegistryUnavailable`. Results go to one dataset
repo (`hub_results.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from registry._install import login_hint
from registry.config import Settings
from registry.errors import MissingCredentials, RegistryUnavailable, UnsafeSkill, VersionExists
from registry.format.skill import load_skill
from registry.hub import (
    Conflict,
    HubClient,
    RemoteFile,
    Unreachable,
    offline_mode,
    reachable,
    user_errors,
    with_retry,
)
from registry.scan import STORE_LIMITS, SizeLimits, write_file
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
from registry.stores.card import SKILL_TAG, render_card, reported_hash, skill_info, with_evals
from registry.stores.files import (
    CARD_FILE,
    HOSTILE_HINT,
    MANIFEST_FILE,
    RESERVED_ROOT_FILES,
    Layout,
    apply_layout,
    read_layout,
    repo_files,
    require_empty,
    skill_path,
)
from registry.stores.hub_publish import commit_files, main_head
from registry.stores.hub_results import HubResults
from registry.stores.refs import (
    check_repo_id,
    is_full_sha,
    is_version,
    normalize_version,
    resolve_ref,
    tag_for,
    version_tags,
)
from registry.stores.summary import store_lifts

log = logging.getLogger(__name__)
MAX_LISTED = 1000
Listing = tuple[list[RemoteFile], str | None]


class HubStore(ResultsShorthands):
    """A `SkillStore` on the Hugging Face Hub (see the module docstring); its results dataset
    is `results` (`HubResults`)."""

    kind = "hub"

    def __init__(self, settings: Settings, client: HubClient | None = None) -> None:
        self.settings = settings
        self.endpoint = settings.hf_endpoint
        # Not the shared HF cache: a skill repo is untrusted until a pull accepts it, so its
        # bytes stay out of the cache other tools read (and `HUBSKILLS_HOME` holds all state).
        self.cache_dir = settings.home / "hub-cache"
        self.client = client or HubClient(self.endpoint, settings.hf_token, self.cache_dir)
        self.results: HubResults = HubResults(
            self.client, configured=settings.results_repo, namespace=self._results_namespace,
            cache_dir=self.cache_dir / "frame", online=self._online,
            writable=self._write_token, verifiers=settings.verifiers)
        self._unreachable = False
        self._listings: dict[tuple[str, str], Listing] = {}
        self._tags: dict[tuple[str, str], str] = {}
        self._pool: ThreadPoolExecutor | None = None

    def _threads(self) -> ThreadPoolExecutor:
        """Threads for requests that do not depend on each other (made once, then reused)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(4, thread_name_prefix="hubskills-hub")
        return self._pool

    # -- plumbing ---------------------------------------------------------------------------

    @property
    def offline(self) -> bool:
        """HF_HUB_OFFLINE is set, or a request found the endpoint unreachable."""
        return self.settings.offline or offline_mode() or self._unreachable

    def _why_offline(self) -> str:
        return "unreachable" if self._unreachable else "offline (HF_HUB_OFFLINE=1)"

    def _cache_note(self) -> str:
        return f"the Hub ({self.endpoint}) is {self._why_offline()}; using the HF cache"

    def _online(self) -> None:
        if self.settings.offline or offline_mode():
            raise RegistryUnavailable("the Hub registry is not available offline "
                                      "(HF_HUB_OFFLINE=1)",
                                      hint="add --registry local, or unset HF_HUB_OFFLINE")

    def _write_token(self) -> None:
        self._online()
        if not self.client.has_token():
            raise MissingCredentials("writing to the Hub needs a Hugging Face token",
                                     variable="HF_TOKEN", hint=login_hint())

    def default_namespace(self) -> str:
        """`settings.namespace`, else the token's user name."""
        if self.settings.namespace:
            return self.settings.namespace
        self._write_token()
        with user_errors():
            return self.client.whoami()

    # -- publish ----------------------------------------------------------------------------

    def publish(self, skill_dir: Path, *, repo: str, version: str, private: bool = False,
                message: str | None = None) -> Published:
        """Commit the skill plus its card (guarded by `parent_commit`), then tag the commit.

        Raises:
            MissingCredentials: no token.
            VersionExists: the tag exists already (checked first, and again on a lost race).
        """
        self._write_token()
        check_repo_id(repo)
        skill = load_skill(skill_dir)
        files = repo_files(skill)
        version, tag = normalize_version(version), tag_for(version)
        with user_errors():
            summary = self._threads().submit(self._card_summary, repo)
            head = main_head(self.client, repo, tag, skill_dir)
            card = render_card(skill, repo=repo, version=version,
                               content_hash=skill.content_hash(), summary=summary.result())
            files[CARD_FILE] = card.encode("utf-8")
            sha = commit_files(self.client, repo, files, head, message or f"Publish {tag}",
                               tag=tag, skill_dir=skill_dir, private=private)
            try:
                self.client.create_tag(repo, tag, sha)
            except Conflict as err:
                raise VersionExists(f"{repo} {tag} was created concurrently; versions are "
                                    "immutable", hint=f"hubskills publish {skill_dir} "
                                    "--bump patch") from err
        return Published(repo, version, tag, sha, f"{self.endpoint}/{repo}")

    # -- resolve and fetch ------------------------------------------------------------------

    def versions(self, repo: str) -> list[VersionInfo]:
        """Published versions, newest first, dated by their commits."""
        self._online()
        check_repo_id(repo)
        with user_errors():
            tagged = version_tags(self.client.refs(repo).tags)
            dates = self.client.commit_dates(repo) if tagged else {}
        return [VersionInfo(v, tag, sha, dates.get(sha)) for v, tag, sha in tagged]

    def resolve(self, repo: str, ref: str | None = None) -> Resolved:
        """Resolve latest / version / `main` / sha / sha prefix (see `refs.resolve_ref`).

        A version is resolved and its files listed in one request. Offline, only a full sha
        whose listing is in the HF cache resolves.

        Raises:
            SkillNotFound, VersionNotFound: no such skill or ref.
            RegistryUnavailable: offline or unreachable, and the cache cannot answer.
        """
        check_repo_id(repo)
        with user_errors():
            if not self.offline:
                try:
                    resolved = self._resolve_online(repo, ref)
                    if resolved.version:  # found offline later: the HF cache's refs/<tag>
                        self._tags[(repo, resolved.sha)] = tag_for(resolved.version)
                    return resolved
                except Unreachable:
                    self._unreachable = True
            return self._resolve_cached(repo, ref)

    def _resolve_online(self, repo: str, ref: str | None) -> Resolved:
        if ref and is_version(ref):
            info = self.client.repo_info(repo, tag_for(ref), files=True)
            self._listings[(repo, info.sha)] = (info.files, reported_hash(info.card_data))
            return Resolved(repo, info.sha, normalize_version(ref), ref)
        refs = self.client.refs(repo)
        return resolve_ref(repo, ref, tags=refs.tags, main=refs.main,
                           commits=lambda: list(self.client.commit_dates(repo)))

    def _resolve_cached(self, repo: str, ref: str | None) -> Resolved:
        wanted = (ref or "latest").lower()
        version = normalize_version(wanted) if is_version(wanted) else None
        sha = self.client.cached_ref(repo, tag_for(wanted)) if version else wanted
        if sha and is_full_sha(sha) and self.client.cached_files(repo, sha) is not None:
            return Resolved(repo, sha, version, ref or wanted, notes=(self._cache_note(),))
        raise RegistryUnavailable(f"the Hub ({self.endpoint}) is {self._why_offline()}, and "
                                  f"{repo}@{ref or 'latest'} is not in the HF cache",
                                  hint="retry online, or pin a full sha pulled before")

    def fetch(self, repo: str, sha: str, dest: Path, *, limits: SizeLimits = STORE_LIMITS,
              pinned_hash: str | None = None, count: bool = True) -> Fetched:
        """Download the skill's files at `sha` into the empty folder `dest` (see `files.py`).

        Every listed path (from `resolve`, one request, or the HF cache) is checked and the
        sizes held to `limits` before anything is downloaded, and again as bytes arrive. With
        `pinned_hash` the Hub is not asked for the card's hash and each file is one GET.

        Raises:
            UnsafeSkill: an unsafe path, or files over the limits or not the size declared.
            RegistryUnavailable: offline or unreachable, and the revision is not cached.
        """
        with user_errors():
            files, reported = self._listing(repo, sha, pinned=pinned_hash is not None)
            wanted, layout = self._read(repo, sha, files, limits, pinned=pinned_hash is not None,
                                        each=lambda rel, data: write_file(dest, rel, data),
                                        ready=lambda: require_empty(dest))
            apply_layout(dest, layout)
        notes = (self._cache_note(),) if self.offline else ()
        return Fetched(dest, wanted, reported, notes)

    def read_files(self, repo: str, sha: str, *,
                   limits: SizeLimits = STORE_LIMITS) -> tuple[dict[str, bytes], frozenset[str]]:
        """The skill's files at `sha` as bytes, checked as `fetch` checks them (the listing
        against `limits` first, then the bytes as they arrive, through the same HF cache) but
        written into no folder of ours, and the paths with an exec bit: what a server handing
        files out reads (`hubskills mcp --registry hub`).

        Raises:
            UnsafeSkill: as for `fetch`, or two repository paths naming one file or a file
                and a folder at once (a folder could not hold both).
            RegistryUnavailable: as for `fetch`.
        """
        read: dict[str, bytes] = {}

        def keep(rel: str, data: bytes) -> None:
            if rel in read:
                raise UnsafeSkill(f"{repo}@{sha[:12]} holds {rel!r} twice", hint=HOSTILE_HINT)
            read[rel] = data

        with user_errors():
            files, _ = self._listing(repo, sha, pinned=False)
            _, layout = self._read(repo, sha, files, limits, pinned=False, each=keep)
        folders = {rel.rsplit("/", i)[0] for rel in read for i in range(1, rel.count("/") + 1)}
        for rel in read:
            if rel in folders:
                raise UnsafeSkill(f"{repo}@{sha[:12]} holds {rel!r} as a file and as a folder",
                                  hint=HOSTILE_HINT)
        return read, frozenset(layout.executable)

    def _read(self, repo: str, sha: str, files: list[RemoteFile], limits: SizeLimits, *,
              pinned: bool, each: Callable[[str, bytes], object],
              ready: Callable[[], object] = lambda: None) -> tuple[list[str], Layout]:
        """Hand `each` (skill path, bytes) of every skill file at `sha`, once the listing is
        checked against `limits` (and `ready()` called); the skill paths and the manifest's
        layout."""
        wanted = {f.path: rel for f in files if (rel := skill_path(f.path)) is not None}
        limits.check([(f.path, f.size) for f in files if f.path in wanted], hint=HOSTILE_HINT)
        ready()
        layout = read_layout(None, [], limits)  # a repository without a manifest
        manifest = [MANIFEST_FILE] if any(f.path == MANIFEST_FILE for f in files) else []
        for path, data in self.client.read_snapshot(
                repo, sha, [*wanted, *manifest], offline=self.offline, listing=files,
                max_file_bytes=limits.max_file_bytes, ignore=sorted(RESERVED_ROOT_FILES),
                pinned=pinned):
            if path == MANIFEST_FILE:
                layout = read_layout(data, list(wanted.values()), limits)
            else:
                each(wanted[path], data)
        if (repo, sha) in self._tags:
            self.client.remember_ref(repo, self._tags[(repo, sha)], sha)
        return list(wanted.values()), layout

    def _listing(self, repo: str, sha: str, *, pinned: bool) -> Listing:
        """The files at `sha` and the content hash the card reports (None from the cache)."""
        if (repo, sha) in self._listings:
            return self._listings[(repo, sha)]
        if self.offline or pinned:
            cached = self.client.cached_files(repo, sha)
            if cached is not None:
                return cached, None
        if not self.offline:
            try:
                if pinned:  # the caller's pin is the check: the file tree alone will do
                    return self.client.tree(repo, None, sha), None
                info = self.client.repo_info(repo, sha, files=True)
                self._listings[(repo, sha)] = (info.files, reported_hash(info.card_data))
                return self._listings[(repo, sha)]
            except Unreachable:
                self._unreachable = True
        raise RegistryUnavailable(f"the Hub ({self.endpoint}) is {self._why_offline()}, and "
                                  f"{repo}@{sha[:12]} is not in the HF cache",
                                  hint="retry online, or pull from --registry local")

    # -- browse -----------------------------------------------------------------------------

    def search(self, query: str = "", *, sort: str = "downloads", limit: int = 50,
               lift_key: LiftKey | None = None) -> list[SkillInfo]:
        """Models tagged `agent-skill`, after the reachability probe (listing retries long)."""
        self._online()
        check_sort(sort)
        if not reachable(self.endpoint):
            raise RegistryUnavailable(f"cannot reach {self.endpoint}: the Hub is unreachable",
                                      hint="check the network, or add --registry local")
        with user_errors():
            models = self.client.list_models(
                tag=SKILL_TAG, search=query or None,
                sort="likes" if sort == "likes" else "downloads",
                limit=None if sort == "lift" else limit, cap=MAX_LISTED)
        return sort_infos([skill_info(m) for m in models], sort, limit,
                          lambda: store_lifts(self, lift_key))

    def info(self, repo: str) -> SkillInfo:
        """The skill's card, metadata, counters and versions."""
        self._online()
        check_repo_id(repo)
        with user_errors():
            model = self.client.repo_info(repo)
            card = self.client.read_text(repo, CARD_FILE) or ""
        versions = self.versions(repo)
        info = skill_info(model, card)
        latest = versions[0].version if versions else info.version
        return replace(info, version=latest, versions=versions)

    def _card_summary(self, repo: str) -> list[dict[str, Any]]:
        from registry.stores.verifications import badges

        return self.results.card_summary(repo, badges(self))

    def refresh_card(self, repo: str) -> None:
        """Rewrite the card's evaluation section from the results dataset (one commit)."""
        self._write_token()
        with user_errors():
            card = self.client.read_text(repo, CARD_FILE) or ""
            updated = with_evals(card, self._card_summary(repo))
            if updated != card:
                with_retry(lambda: self.client.commit(
                    repo, {CARD_FILE: updated.encode("utf-8")},
                    message="Update the evaluation summary"))

    # -- results (see `hub_results.py`) ----------------------------------------------------

    def results_repo(self) -> str:
        """The results dataset id (see `HubResults.repo`); `datasets.load_dataset` reads it."""
        return self.results.repo()

    def change_token(self) -> tuple[str, str]:
        """(results, skills) as `LocalStore.change_token`, in two metadata calls: the results
        dataset's head (each append commits) and the skill modified last, with its date."""
        head = self.results.change_token()
        with user_errors():
            newest = self.client.list_models(tag=SKILL_TAG, search=None, sort="last_modified",
                                             limit=1, cap=1)
        return head, ";".join(f"{m.id}@{m.last_modified}" for m in newest)

    def _results_namespace(self) -> str:
        """Where the results dataset goes by default: the namespace, else the token's user."""
        if self.settings.namespace:
            return self.settings.namespace
        return self.default_namespace() if self.client.has_token() else "hubskills"

