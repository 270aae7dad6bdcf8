"""Fetch one skill revision from a registry into a staging folder, online or offline.

With `stores/hub.py`, the only module that imports `huggingface_hub` (lazily, so that commands
that never touch the Hub do not pay for it). For the Hub one
`model_info(revision, files_metadata=True)` gives the file list (paths, sizes, count are checked
before anything is downloaded) and the content hash the card reports; then
`snapshot_download(revision=sha)` fills the HF cache and only the skill's files are copied out
(the card and `.gitattributes` stay behind; links are followed only into the cache's own blob
store). Offline (`HF_HUB_OFFLINE=1`, or a cheap TCP probe finds the endpoint unreachable) the
cache answers alone (`local_files_only=True`), else the local registry does. `staging.prepare`
re-checks whatever any store wrote.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from registry.config import Settings
from registry.errors import (
    HubskillsError,
    RegistryError,
    SkillNotFound,
    UnsafeSkill,
    VersionNotFound,
)
from registry.install.lockfile import Marker
from registry.install.staging import HOSTILE_HINT, Limits
from registry.stores import SkillStore, local_store
from registry.stores.base import (
    Resolved,
    check_relpath,
    is_card_path,
    is_version,
    normalize_version,
    tag_for,
    write_file,
)

if TYPE_CHECKING:
    from huggingface_hub import HfApi

log = logging.getLogger(__name__)
PROBE_TIMEOUT_S = 2.0
_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


def hub_reachable(endpoint: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """A cheap probe: can a TCP connection to the endpoint's host be opened quickly?

    Behind a proxy the endpoint is not dialled directly, so the probe says yes and the real
    request decides.
    """
    parts = urlsplit(endpoint)
    if getproxies() and not proxy_bypass(parts.hostname or ""):
        return True
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return True
    except OSError:
        return False


@functools.cache
def _quiet_tqdm() -> type:
    """huggingface_hub's tqdm with the bars off: the library never prints."""
    from huggingface_hub.utils import tqdm as hf_tqdm

    class Quiet(hf_tqdm):  # type: ignore[misc]
        def __init__(self, *args: object, **kwargs: object) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

    return Quiet


class HubDownloader:
    """Download a Hub revision through the HF cache and copy the skill's files out of it."""

    def __init__(self, settings: Settings, cache_dir: Path | None = None) -> None:
        self.settings = settings
        self.cache_dir = cache_dir or settings.home / "hub-cache"
        self._infos: dict[str, tuple[list[tuple[str, int]], str | None]] = {}

    def _api(self) -> HfApi:
        from huggingface_hub import HfApi

        return HfApi(endpoint=self.settings.hf_endpoint, token=self.settings.hf_token)

    def _info(self, repo: str, revision: str) -> str:
        """One `model_info` call: remember the listing and card hash of its sha; return it."""
        info = self._api().model_info(repo, revision=revision, files_metadata=True)
        card = info.card_data.to_dict() if info.card_data else {}
        block = card.get("hubskills")
        reported = block.get("content_hash") if isinstance(block, dict) else None
        siblings = [(s.rfilename, int(s.size or 0)) for s in info.siblings or []]
        self._infos[str(info.sha)] = (siblings, str(reported) if reported else None)
        return str(info.sha)

    def resolve_version(self, repo: str, version: str) -> Resolved:
        """Resolve `v1.2.0`/`1.2.0` and list that revision in the same single request."""
        with _hub_errors(repo, self.settings.hf_endpoint):
            sha = self._info(repo, tag_for(version))
        return Resolved(repo, sha, normalize_version(version), version)

    def listing(self, repo: str, sha: str, *, offline: bool,
                verify: bool) -> tuple[list[tuple[str, int]], str | None]:
        """(path, size) of every file at `sha`, and the content hash its card reports.

        Online with `verify`, one `model_info(revision=sha, files_metadata=True)` answers both.
        Otherwise the cached tree listing answers (no request), without a reported hash.
        """
        from huggingface_hub import get_cached_repo_tree
        from huggingface_hub.errors import CachedRepoTreeNotFoundError

        if offline or not verify:
            try:
                files = get_cached_repo_tree(repo, revision=sha, cache_dir=self.cache_dir)
                return [(f.path, int(f.size or 0)) for f in files], None
            except CachedRepoTreeNotFoundError:
                if offline:
                    raise
        if sha not in self._infos:
            self._info(repo, sha)
        return self._infos[sha]

    def fetch(self, repo: str, sha: str, dest: Path, *, offline: bool, limits: Limits,
              verify: bool = True) -> str | None:
        """Write the skill's files at `sha` into the empty `dest`; returns the card's hash.

        Raises:
            UnsafeSkill: a hostile listing (before any download) or a link out of the cache.
            SkillNotFound, VersionNotFound, RegistryError: translated Hub errors.
        """
        from huggingface_hub import snapshot_download

        with _hub_errors(repo, self.settings.hf_endpoint):
            listing, reported = self.listing(repo, sha, offline=offline, verify=verify)
            wanted = [(p, n) for p, n in listing if not is_card_path(check_relpath(p))]
            limits.check(wanted)
            folder = Path(snapshot_download(
                repo, revision=sha, cache_dir=self.cache_dir, endpoint=self.settings.hf_endpoint,
                token=self.settings.hf_token, local_files_only=offline, tqdm_class=_quiet_tqdm(),
                ignore_patterns=[".gitattributes", "README.md"]))
        for rel, _ in wanted:
            write_file(dest, rel, _cached_bytes(folder, rel, limits.max_file_bytes))
        return reported


def _cached_bytes(folder: Path, rel: str, max_bytes: int) -> bytes:
    """A snapshot file's bytes, following its link only into this snapshot or the blob store."""
    real = (folder / rel).resolve()
    allowed = (folder.resolve(), folder.resolve().parent.parent / "blobs")
    if not any(real.is_relative_to(base) for base in allowed) or not real.is_file():
        raise UnsafeSkill(f"{rel} is missing from the download or leads outside the HF cache",
                          hint=HOSTILE_HINT)
    if real.stat().st_size > max_bytes:
        raise UnsafeSkill(f"{rel} is over {max_bytes} bytes", hint=HOSTILE_HINT)
    return real.read_bytes()


@contextlib.contextmanager
def _hub_errors(repo: str, endpoint: str) -> Iterator[None]:
    """Translate `huggingface_hub` errors raised while downloading into ours."""
    from huggingface_hub.errors import (
        CachedRepoTreeNotFoundError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )
    from huggingface_hub.utils import httpx

    try:
        yield
    except RepositoryNotFoundError as err:
        raise SkillNotFound(f"no skill '{repo}' on {endpoint}",
                            hint=f"hubskills search {repo.split('/')[-1]}") from err
    except RevisionNotFoundError as err:
        raise VersionNotFound(f"{repo} has no such revision on {endpoint}",
                              hint=f"hubskills versions {repo}") from err
    except (CachedRepoTreeNotFoundError, LocalEntryNotFoundError, OfflineModeIsEnabled) as err:
        raise RegistryError(f"offline, and {repo} at that revision is not in the HF cache",
                            hint="retry online, or pull from --registry local") from err
    except (HfHubHTTPError, httpx.TransportError) as err:
        first = (str(err) or type(err).__name__).splitlines()[0]
        raise RegistryError(f"downloading {repo} from {endpoint} failed: {first}",
                            hint="retry later (HUBSKILLS_DEBUG=1 shows details)") from err
    except ValueError as err:  # huggingface_hub refuses paths that leave its cache
        raise UnsafeSkill(f"{repo}: the download was refused ({err})",
                          hint=HOSTILE_HINT) from err


@dataclass
class Source:
    """Resolve refs and fetch revisions from a store; the Hub goes through the HF cache.

    Offline, a Hub source answers full-sha refs from the cache, then falls back to the local
    registry when it holds the skill; `notes` records what it did, for the CLI to say.
    """

    store: SkillStore
    fallback: Callable[[], SkillStore] | None = None
    notes: list[str] = field(default_factory=list)
    _offline: bool | None = None
    _hub: HubDownloader | None = None

    @property
    def kind(self) -> str:
        """The registry kind answering now: `local` or `hub`."""
        return self.store.kind

    @property
    def offline(self) -> bool:
        """For a Hub store: HF_HUB_OFFLINE is set, or the endpoint does not answer a probe."""
        if self._offline is None:
            settings: Settings | None = getattr(self.store, "settings", None)
            if self.store.kind != "hub" or settings is None:
                self._offline = False
            else:
                from huggingface_hub import constants

                self._offline = (settings.offline or constants.HF_HUB_OFFLINE
                                 or not hub_reachable(settings.hf_endpoint))
                if self._offline:
                    self.notes.append(f"the Hub ({settings.hf_endpoint}) is offline or "
                                      "unreachable; using the HF cache")
        return self._offline

    def resolve(self, repo: str, ref: str | None, *,
                installed: Marker | None = None) -> Resolved:
        """Resolve `ref` to a revision; offline, from the cache, the install or the local registry.

        Offline, a full sha in the HF cache answers first; then `installed` (our install of
        `repo`) when it is what `ref` asks for (`latest`, its version, its sha); then the local
        registry, if it holds the skill.

        Raises:
            SkillNotFound, VersionNotFound, RegistryError: nothing can answer.
        """
        if not self.offline:
            if self.store.kind == "hub" and ref and is_version(ref):
                return self._downloader().resolve_version(repo, ref)
            return self.store.resolve(repo, ref)
        wanted = (ref or "latest").lower()
        if _FULL_SHA.match(wanted) and self._cached(repo, wanted):
            return Resolved(repo, wanted, None, ref or wanted)
        if installed is not None and (
                wanted == "latest" or installed.sha.startswith(wanted)
                or (is_version(wanted) and normalize_version(wanted) == installed.version)):
            if wanted == "latest":
                self.notes.append(f"cannot check for a newer {repo} offline; keeping "
                                  f"{installed.version or installed.sha[:12]}")
            return Resolved(repo, installed.sha, installed.version, ref or "latest")
        local = self._local(repo)
        if local is not None:
            self.store, self._offline = local, False
            self.notes.append(f"using the local registry for {repo}")
            return local.resolve(repo, ref)
        raise RegistryError(f"offline, and {repo}@{ref or 'latest'} is neither in the HF cache "
                            "nor in the local registry",
                            hint="retry online, or pin a full sha pulled before")

    def _cached(self, repo: str, sha: str) -> bool:
        from huggingface_hub import get_cached_repo_tree
        from huggingface_hub.errors import CachedRepoTreeNotFoundError

        try:
            get_cached_repo_tree(repo, revision=sha, cache_dir=self._downloader().cache_dir)
        except CachedRepoTreeNotFoundError:
            return False
        return True

    def _local(self, repo: str) -> SkillStore | None:
        if self.fallback is None:
            return None
        local = self.fallback()
        try:
            local.resolve(repo, None)
        except HubskillsError:
            return None
        return local

    def _downloader(self) -> HubDownloader:
        if self._hub is None:
            settings: Settings = self.store.settings  # type: ignore[attr-defined]
            self._hub = HubDownloader(settings, getattr(self.store, "cache_dir", None))
        return self._hub

    def fetch(self, repo: str, sha: str, dest: Path, limits: Limits,
              expected: str | None = None) -> str | None:
        """Write the revision's files into the empty `dest`; returns the reported content hash.

        With `expected` (a hash pinned in skills.lock) a Hub revision already in the HF cache
        is installed without asking the Hub for its card: the pin is the check.
        """
        if self.store.kind == "hub":
            return self._downloader().fetch(repo, sha, dest, offline=self.offline,
                                            limits=limits, verify=expected is None)
        self.store.fetch(repo, sha, dest)
        reported = getattr(self.store, "revision_content_hash", None)
        return reported(repo, sha) if callable(reported) else None


def default_source(store: SkillStore) -> Source:
    """A `Source` over `store`; a Hub store falls back to the local registry offline."""
    settings: Settings | None = getattr(store, "settings", None)
    if store.kind == "hub" and settings is not None:
        return Source(store, fallback=lambda: local_store(settings))
    return Source(store)
