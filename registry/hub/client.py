"""`HubClient`: every call hubskills makes to a Hub endpoint, with errors translated.

One instance per endpoint and token; `HfApi` gets both explicitly (never `HF_ENDPOINT`, which
huggingface_hub reads once, at import). Answers are small dataclasses of ours (`RepoInfo`,
`RemoteFile`, `Refs`), so no caller handles a `huggingface_hub` type. Downloads go through the
HF cache at `cache_dir`: `read_snapshot` fills it with `snapshot_download` (parallel workers)
and reads files back, following links only into that snapshot or the cache's own blob store
(a pinned commit: one GET per file instead, `pinned.py`).
"""

from __future__ import annotations

import functools
import itertools
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from registry._io import atomic_write_text
from registry._turns import waiting
from registry.hub.discussions import Discussions
from registry.hub.errors import EntryNotFound, HubError, RefusedPath, Unreachable, translate

if TYPE_CHECKING:
    from huggingface_hub import HfApi

log = logging.getLogger(__name__)
T = TypeVar("T")
RETRY_STATUSES = frozenset({409, 429, 500, 502, 503, 504})
ATTEMPTS = 5
DOWNLOAD_WORKERS = 8
_BYTES_BAR = "huggingface_hub.snapshot_download"  # snapshot_download's bar of bytes written


@dataclass(frozen=True)
class RemoteFile:
    """One file of a revision: its path, size, git blob id and, for an LFS file, its sha256
    (None when not reported)."""

    path: str
    size: int
    blob_id: str | None = None
    lfs_sha256: str | None = None


@dataclass(frozen=True)
class RepoInfo:
    """A repo at one revision: its commit, files (when asked for) and card metadata."""

    id: str
    sha: str
    files: list[RemoteFile] = field(default_factory=list)
    card_data: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    downloads: int = 0
    likes: int = 0
    last_modified: str | None = None


@dataclass(frozen=True)
class PullRequest:
    """An open pull request: its number, who opened it, the revision holding it, its page."""

    num: int
    author: str
    revision: str
    url: str


@dataclass(frozen=True)
class Refs:
    """A repo's tags (name -> commit) and the commit `main` points at."""

    tags: dict[str, str]
    main: str | None


def with_retry(call: Callable[[], T], *, statuses: frozenset[int] = RETRY_STATUSES,
               attempts: int = ATTEMPTS) -> T:
    """Call `call`, retrying with backoff on the given HTTP statuses and on `Unreachable`."""
    for attempt in range(attempts):
        try:
            return call()
        except HubError as err:
            retryable = isinstance(err, Unreachable) or err.status in statuses
            if not retryable or attempt == attempts - 1:
                raise
            log.info("Hub answered %s; retrying (%d/%d)", err.status, attempt + 1, attempts)
        backoff(attempt)
    raise AssertionError("unreachable")


def backoff(attempt: int) -> None:
    """Sleep before retry number `attempt` (0.25 s, doubling, at most 4 s)."""
    time.sleep(min(0.25 * 2**attempt, 4.0))


@functools.cache
def _quiet_tqdm() -> type:
    """huggingface_hub's tqdm with the bars off: the library never prints."""
    from huggingface_hub.utils import tqdm as hf_tqdm

    class Quiet(hf_tqdm):
        def __init__(self, *args: object, **kwargs: object) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

    return Quiet


class HubClient(Discussions):
    """The Hub at `endpoint`, as hubskills uses it (see the module docstring); pull-request
    comments and merges are `Discussions`'."""

    def __init__(self, endpoint: str, token: str | None, cache_dir: Path) -> None:
        from huggingface_hub import HfApi

        self.endpoint, self.cache_dir = endpoint, cache_dir
        self.api: HfApi = HfApi(endpoint=endpoint, token=token, library_name="hubskills")
        self.token = token

    def _call(self, repo: str | None, call: Callable[[], T], *, repo_type: str = "model",
              revision: str | None = None) -> T:
        with waiting(), translate(self.endpoint, repo, repo_type=repo_type, revision=revision):
            return call()

    # -- identity ---------------------------------------------------------------------------

    def has_token(self) -> bool:
        """Whether a token is set here, in the environment or in the HF token file."""
        from huggingface_hub import get_token

        return bool(self.token or get_token())

    def whoami(self) -> str:
        """The token's user name."""
        return str(self._call(None, self.api.whoami)["name"])

    # -- metadata ---------------------------------------------------------------------------

    def refs(self, repo: str, *, repo_type: str = "model") -> Refs:
        """Tags and `main` in one request."""
        refs = self._call(repo, lambda: self.api.list_repo_refs(repo, repo_type=repo_type),
                          repo_type=repo_type)
        main = next((b.target_commit for b in refs.branches if b.name == "main"), None)
        return Refs({t.name: t.target_commit for t in refs.tags}, main)

    def commit_dates(self, repo: str) -> dict[str, str]:
        """Every commit of `main` with its ISO date."""
        commits = self._call(repo, lambda: self.api.list_repo_commits(repo))
        return {c.commit_id: c.created_at.isoformat() for c in commits}

    def repo_info(self, repo: str, revision: str | None = None, *, repo_type: str = "model",
                  files: bool = False) -> RepoInfo:
        """The repo at `revision` (default `main`); with `files`, every file and its size."""
        info = self._call(repo, lambda: self.api.repo_info(
            repo, revision=revision, repo_type=repo_type, files_metadata=files),
            repo_type=repo_type, revision=revision)
        return _repo_info(info)

    def list_models(self, *, tag: str, search: str | None,
                    sort: Literal["downloads", "likes", "last_modified"], limit: int | None,
                    cap: int) -> list[RepoInfo]:
        """Models tagged `tag` (with card data), at most `cap` of them."""
        def listing() -> list[RepoInfo]:
            models = self.api.list_models(filter=tag, search=search, sort=sort, limit=limit,
                                          cardData=True)
            return [_repo_info(m) for m in itertools.islice(models, cap)]

        return self._call(None, listing)

    def tree(self, repo: str, path: str | None, revision: str, *,
             repo_type: str = "model") -> list[RemoteFile]:
        """Files under `path` (None: the whole repo) at `revision`, recursively."""
        from huggingface_hub.hf_api import RepoFile

        entries = self._call(repo, lambda: list(self.api.list_repo_tree(
            repo, path_in_repo=path, recursive=True, repo_type=repo_type, revision=revision)),
            repo_type=repo_type, revision=revision)
        return [RemoteFile(e.path, int(e.size or 0), e.blob_id, e.lfs.sha256 if e.lfs else None)
                for e in entries if isinstance(e, RepoFile)]

    def file_exists(self, repo: str, path: str, *, repo_type: str = "model") -> bool:
        """Whether `path` exists at `main`."""
        return self._call(repo, lambda: self.api.file_exists(repo, path, repo_type=repo_type),
                          repo_type=repo_type)

    # -- writes -----------------------------------------------------------------------------

    def create_repo(self, repo: str, *, repo_type: str = "model", private: bool = False) -> None:
        """Create the repo (an existing one is fine)."""
        self._call(repo, lambda: self.api.create_repo(repo, repo_type=repo_type,
                                                      private=private, exist_ok=True),
                   repo_type=repo_type)

    def commit(self, repo: str, files: Mapping[str, bytes], *, message: str,
               deletes: Iterable[str] = (), parent: str | None = None,
               repo_type: str = "model") -> str:
        """One commit adding `files` and deleting `deletes`; returns the new commit's sha.

        With `parent`, the Hub refuses the commit (`StaleParent`) if `main` moved meanwhile.
        """
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        operations: list[Any] = [CommitOperationAdd(p, data) for p, data in files.items()]
        operations += [CommitOperationDelete(p) for p in deletes]
        info = self._call(repo, lambda: self.api.create_commit(
            repo, operations, commit_message=message, parent_commit=parent,
            repo_type=repo_type), repo_type=repo_type)
        return str(info.oid)

    def propose(self, repo: str, files: Mapping[str, bytes], *, message: str,
                repo_type: str = "model") -> str:
        """One commit adding `files`, opened as a pull request on `main` for the repo's owner
        to review (anyone who can read a repo may propose); returns the PR's URL."""
        from huggingface_hub import CommitOperationAdd

        operations = [CommitOperationAdd(p, data) for p, data in files.items()]
        info = self._call(repo, lambda: self.api.create_commit(
            repo, operations, commit_message=message, repo_type=repo_type, create_pr=True),
            repo_type=repo_type)
        return str(info.pr_url)

    def open_pull_requests(self, repo: str, *, repo_type: str = "model") -> list[PullRequest]:
        """The repo's open pull requests, oldest first."""
        listed = self._call(repo, lambda: list(self.api.get_repo_discussions(
            repo, discussion_type="pull_request", discussion_status="open",
            repo_type=repo_type)), repo_type=repo_type)
        return sorted((PullRequest(d.num, d.author, f"refs/pr/{d.num}", d.url)
                       for d in listed if d.is_pull_request), key=lambda p: p.num)

    def create_tag(self, repo: str, tag: str, revision: str) -> None:
        """Tag `revision`; `Conflict` when the tag exists."""
        self._call(repo, lambda: self.api.create_tag(repo, tag=tag, revision=revision),
                   revision=revision)

    # -- downloads --------------------------------------------------------------------------

    def download(self, repo: str, path: str, *, revision: str | None = None,
                 repo_type: str = "model") -> Path:
        """One file through the HF cache; returns its local path."""
        return Path(self._call(repo, lambda: self.api.hf_hub_download(
            repo, path, revision=revision, repo_type=repo_type, cache_dir=self.cache_dir),
            repo_type=repo_type, revision=revision))

    def read_text(self, repo: str, path: str, *, repo_type: str = "model") -> str | None:
        """A text file at `main` through the HF cache; None when the repo has no such file."""
        try:
            return self.download(repo, path, repo_type=repo_type).read_text("utf-8")
        except EntryNotFound:
            return None

    def cached_files(self, repo: str, sha: str) -> list[RemoteFile] | None:
        """The file listing of `sha` in the HF cache (no request); None when not cached."""
        from huggingface_hub import get_cached_repo_tree
        from huggingface_hub.errors import CachedRepoTreeNotFoundError

        try:
            files = get_cached_repo_tree(repo, revision=sha, cache_dir=self.cache_dir)
        except CachedRepoTreeNotFoundError:
            return None
        return [RemoteFile(f.path, int(f.size or 0), f.blob_id) for f in files]

    def cached_ref(self, repo: str, name: str) -> str | None:
        """The commit a branch or tag pointed at when it was last fetched (no request)."""
        path = self._repo_cache(repo) / "refs" / name
        sha = path.read_text().strip() if path.is_file() else ""
        return sha if re.fullmatch(r"[0-9a-f]{40}", sha) else None

    def remember_ref(self, repo: str, name: str, sha: str) -> None:
        """Record in the HF cache's `refs/` (its own format) that `name` is commit `sha`, so an
        offline `snapshot_download(revision=name)` and `cached_ref` find it."""
        if re.fullmatch(r"v[0-9A-Za-z.-]+", name) and re.fullmatch(r"[0-9a-f]{40}", sha):
            atomic_write_text(self._repo_cache(repo) / "refs" / name, sha)

    def _repo_cache(self, repo: str) -> Path:
        return self.cache_dir / f"models--{repo.replace('/', '--')}"

    def read_snapshot(self, repo: str, sha: str, paths: list[str], *, offline: bool,
                      max_file_bytes: int, listing: list[RemoteFile], pinned: bool = False,
                      ignore: list[str] | None = None) -> Iterator[tuple[str, bytes]]:
        """Download revision `sha` with `snapshot_download`, then yield (path, bytes) of `paths`.

        The server's `listing` (already checked against `limits`) is held to on the wire: the
        transfer stops once more bytes arrive than the listing declares in total, and a file
        whose received size differs from its declared size is refused; what such a refused
        download left in the cache is removed. Online with `pinned` (the caller checks the
        content against its own pin), each file is one GET instead (`pinned.read_pinned`).

        Raises:
            RefusedPath: a file is missing, leads outside the cache, or is not the size declared.
            NotCached: `offline` and the revision is not (fully) cached.
        """
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError

        if pinned and not offline:
            from registry.hub.pinned import read_pinned

            yield from read_pinned(self, repo, sha, paths, listing, max_file_bytes=max_file_bytes)
            return
        declared = {f.path: f.size for f in listing}
        cap = sum(declared.get(p, 0) for p in paths)
        with waiting(), translate(self.endpoint, repo, revision=sha):
            try:
                folder = Path(snapshot_download(
                    repo, revision=sha, cache_dir=self.cache_dir, endpoint=self.endpoint,
                    token=self.token, local_files_only=offline, tqdm_class=_capped_tqdm(cap),
                    ignore_patterns=ignore, max_workers=max(1, min(DOWNLOAD_WORKERS, len(paths)))))
            except (_OverCap, OSError) as err:
                if isinstance(err, HfHubHTTPError) or not (
                        isinstance(err, _OverCap) or "Consistency check" in str(err)):
                    raise
                self._drop_partial(repo)
                raise RefusedPath(f"{repo}@{sha[:12]}: the server sent other sizes than its "
                                  f"listing declares ({_first_line(err)}); the transfer was "
                                  "stopped and nothing was kept", endpoint=self.endpoint,
                                  repo_id=repo) from err
            except ValueError as err:  # huggingface_hub refuses a path that leaves its cache
                if isinstance(err, HfHubHTTPError):
                    raise
                raise RefusedPath(f"{repo}: the download was refused ({err})",
                                  endpoint=self.endpoint, repo_id=repo) from err
        for rel in paths:
            data = self._cached_bytes(repo, folder, rel, max_file_bytes)
            if rel in declared and len(data) != declared[rel]:
                raise RefusedPath(f"{rel}: received {len(data)} bytes, the listing declares "
                                  f"{declared[rel]}; refusing a damaged or lying download",
                                  endpoint=self.endpoint, repo_id=repo)
            yield rel, data

    def _drop_partial(self, repo: str) -> None:
        """Remove unfinished downloads of `repo` from the cache (never resumed, never read)."""
        blobs = self._repo_cache(repo) / "blobs"
        for partial in blobs.glob("*.incomplete") if blobs.is_dir() else ():
            partial.unlink(missing_ok=True)

    def _cached_bytes(self, repo: str, folder: Path, rel: str, max_bytes: int) -> bytes:
        """A snapshot file's bytes, following its link only into this snapshot or the blobs."""
        real = (folder / rel).resolve()
        allowed = (folder.resolve(), folder.resolve().parent.parent / "blobs")
        if not any(real.is_relative_to(base) for base in allowed) or not real.is_file():
            raise RefusedPath(f"{rel} is missing from the download or leads outside the HF "
                              "cache", endpoint=self.endpoint, repo_id=repo)
        if real.stat().st_size > max_bytes:
            raise RefusedPath(f"{rel} is over {max_bytes} bytes", endpoint=self.endpoint,
                              repo_id=repo)
        return real.read_bytes()


class _OverCap(Exception):
    """More bytes arrived than the listing declared (raised from the progress callback)."""


def _first_line(err: BaseException) -> str:
    return (str(err) or type(err).__name__).splitlines()[0]


def _capped_tqdm(cap: int) -> type:
    """The quiet progress class, counting the bytes `snapshot_download` receives: past `cap`
    it raises `_OverCap`, which stops the transfer (the progress class is the library's one
    public per-chunk hook)."""
    quiet = _quiet_tqdm()

    class Capped(quiet):  # type: ignore[misc, valid-type]  # a base made at run time: `_quiet_tqdm`
        received = 0
        lock = threading.Lock()

        def __init__(self, *args: object, **kwargs: object) -> None:
            self.counts = kwargs.get("name") == _BYTES_BAR  # the bar of bytes written
            super().__init__(*args, **kwargs)

        def update(self, n: float | None = 1) -> bool | None:
            if getattr(self, "counts", False) and n:
                with Capped.lock:
                    Capped.received += int(n)
                    if Capped.received > cap:
                        raise _OverCap(f"{Capped.received} bytes received, {cap} declared")
            return super().update(n)

    return Capped


def _repo_info(info: Any) -> RepoInfo:
    """Our `RepoInfo` from a `ModelInfo`/`DatasetInfo`."""
    card = info.card_data.to_dict() if getattr(info, "card_data", None) else {}
    files = [RemoteFile(s.rfilename, int(s.size or 0), s.blob_id, s.lfs.sha256 if s.lfs else None)
             for s in getattr(info, "siblings", None) or []]
    modified = getattr(info, "last_modified", None)
    return RepoInfo(id=info.id, sha=str(info.sha or ""), files=files, card_data=card,
                    tags=list(getattr(info, "tags", None) or []),
                    downloads=int(getattr(info, "downloads", 0) or 0),
                    likes=int(getattr(info, "likes", 0) or 0),
                    last_modified=modified.isoformat() if modified else None)
