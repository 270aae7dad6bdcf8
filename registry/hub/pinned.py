"""Pinned downloads: the files of a known commit, one plain GET each, into the HF cache.

A pinned revision needs nothing `snapshot_download` asks the Hub first: the sha is known (no
`repo_info`), the caller has the listing already (no second tree request) and it holds every
file's size and git blob id or LFS sha256 (no HEAD per file for the ETag). So each file is one
GET of its `resolve/<sha>/<path>` URL (`hf_hub_url`, through huggingface_hub's own session and
retry loop, `http_stream_backoff`), with no progress bars, per-skill threads or file locks
(every cache write is a rename).

Nothing weaker than the library's path: a transfer stops as soon as more bytes arrive than the
listing declares, a short file is refused, and every file must match its blob id (sha1 of the git
blob) or LFS sha256 before a byte of it is kept. What is kept goes into the HF cache in the
library's documented layout (`blobs/<etag>`, `snapshots/<sha>/<path>` -> blob, and the tree
listing `trees/<sha>.json`, format 1, which `get_cached_repo_tree` and an offline
`snapshot_download` read), so offline pulls and later installs are answered from it as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

from registry._turns import waiting
from registry.hub.errors import RefusedPath, translate

CHUNK_BYTES = 64 * 1024
LFS_POINTER = b"version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n"
TREE_FORMAT = 1  # the `format_version` of huggingface_hub's `trees/<sha>.json`


class HubClient(Protocol):
    """What is read of `client.HubClient` (a protocol, so this module never imports it)."""

    endpoint: str
    token: str | None
    cache_dir: Path


class RemoteFile(Protocol):
    """What is read of a `client.RemoteFile`: one entry of the listing."""

    @property
    def path(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def blob_id(self) -> str | None: ...
    @property
    def lfs_sha256(self) -> str | None: ...


def read_pinned(client: HubClient, repo: str, sha: str, paths: list[str],
                listing: Sequence[RemoteFile], *,
                max_file_bytes: int) -> Iterator[tuple[str, bytes]]:
    """Yield (path, bytes) of `paths` at commit `sha`: from the HF cache, else one GET each.

    Raises:
        RefusedPath: a file is not in the listing, not the size declared, over
            `max_file_bytes`, or does not match its blob id.
        HubError: (typed, via `translate`) the Hub refused a GET or could not be reached.
    """
    from huggingface_hub.utils import build_hf_headers

    cache = _Cache(client.cache_dir / f"models--{repo.replace('/', '--')}", sha)
    entries = {f.path: f for f in listing}
    headers = build_hf_headers(token=client.token, library_name="hubskills",
                               headers={"Accept-Encoding": "identity"})
    fetched = False
    for rel in paths:
        entry = entries.get(rel)
        if entry is None or entry.size > max_file_bytes:
            raise _refused(client, repo, f"{rel}: not in the listing of {repo}@{sha[:12]}, or "
                           f"over {max_file_bytes} bytes")
        data = cache.read(rel, entry)
        if data is None:
            data, blob = _get(client, repo, sha, entry, headers)
            cache.keep(rel, blob, data)
            fetched = True
        yield rel, data
    if fetched:
        cache.keep_listing(listing)


def _get(client: HubClient, repo: str, sha: str, entry: RemoteFile,
         headers: dict[str, str]) -> tuple[bytes, str]:
    """One GET of `entry` at `sha`, held to its declared size and blob id; (bytes, blob name).

    The listing, not the response's ETag, is what the bytes are held to: a large file's answer
    is a redirect to a CDN whose headers say nothing about the git blob.
    """
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils import hf_raise_for_status, http_stream_backoff

    url = hf_hub_url(repo, entry.path, revision=sha, endpoint=client.endpoint)
    where = f"{repo}@{sha[:12]}: {entry.path}"
    chunks, received = [], 0
    with waiting(), translate(client.endpoint, repo, revision=sha), http_stream_backoff(
            "GET", url, headers=headers, follow_redirects=True) as response:
        hf_raise_for_status(response)
        for chunk in response.iter_bytes(CHUNK_BYTES):
            received += len(chunk)
            if received > entry.size:  # stop the transfer: never read past the listing
                raise _refused(client, repo, f"{where}: the server sent other sizes than its "
                               f"listing declares (more than {entry.size} bytes); the "
                               "transfer was stopped and nothing was kept")
            chunks.append(chunk)
    data = b"".join(chunks)
    if len(data) != entry.size:
        raise _refused(client, repo, f"{where}: received {len(data)} bytes, the listing "
                       f"declares {entry.size}; refusing a damaged or lying download")
    blob = _blob_name(entry, data)
    if blob is None:
        raise _refused(client, repo, f"{where}: the bytes received do not match the listing's "
                       "blob id; refusing a damaged or lying download")
    return data, blob


def _refused(client: HubClient, repo: str, message: str) -> RefusedPath:
    return RefusedPath(message, endpoint=client.endpoint, repo_id=repo)


def _blob_name(entry: RemoteFile, data: bytes) -> str | None:
    """The name the HF cache gives `data` (its LFS sha256, else its git blob id), or None when
    `data` is not what the listing describes.

    A listing read back from the HF cache carries no LFS sha256, but an LFS file's git blob id
    is that of its pointer file, which its sha256 and size determine.
    """
    digest = hashlib.sha256(data).hexdigest()
    if entry.lfs_sha256:
        return digest if digest == entry.lfs_sha256 else None
    oid = _git_oid(data)
    if entry.blob_id in (None, oid):
        return oid
    pointer = LFS_POINTER % (digest.encode(), len(data))
    return digest if entry.blob_id == _git_oid(pointer) else None


def _git_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class _Cache:
    """One repo's folder in the HF cache, at one commit."""

    def __init__(self, repo_dir: Path, sha: str) -> None:
        self.repo_dir, self.sha = repo_dir, sha
        self.snapshot = repo_dir / "snapshots" / sha
        self.blobs = repo_dir / "blobs"
        self._made: set[Path] = set()

    def read(self, rel: str, entry: RemoteFile) -> bytes | None:
        """The cached bytes of `rel` at this commit, if there and as declared; links are
        followed only into this snapshot or the blobs."""
        pointer = self.snapshot / rel
        if not (pointer.exists() or pointer.is_symlink()):
            return None
        real = pointer.resolve()
        if not any(real.is_relative_to(base) for base in (self.snapshot.resolve(),
                                                           self.blobs.resolve())):
            return None  # not ours to read: fetched again, and the link replaced
        if not real.is_file() or real.stat().st_size != entry.size:
            return None  # damaged or partial: fetch it again
        data = real.read_bytes()
        return data if _blob_name(entry, data) else None

    def keep(self, rel: str, blob: str, data: bytes) -> None:
        """Store `data` as `blobs/<blob>` and link `snapshots/<sha>/<rel>` to it (relative, as
        HF does). Only called for a file that was fetched, so what was there is replaced."""
        self._folder(self.blobs)
        _write(self.blobs / blob, data)
        pointer = self.snapshot / rel
        self._folder(pointer.parent)
        link = "../" * (2 + rel.count("/")) + f"blobs/{blob}"
        try:
            os.symlink(link, pointer)
        except FileExistsError:  # a stale link (or a racing install's, to the same blob)
            pointer.unlink(missing_ok=True)
            with contextlib.suppress(FileExistsError):
                os.symlink(link, pointer)
        except OSError:  # no symlinks here (Windows without developer mode): a copy, as HF does
            _write(pointer, data)

    def _folder(self, folder: Path) -> None:
        if folder not in self._made:  # one mkdir per folder and skill, not per file
            folder.mkdir(parents=True, exist_ok=True)
            self._made.add(folder)

    def keep_listing(self, listing: Sequence[RemoteFile]) -> None:
        """Write `trees/<sha>.json` (what `get_cached_repo_tree` answers offline) unless there."""
        path = self.repo_dir / "trees" / f"{self.sha}.json"
        if path.is_file():
            return
        files = {}
        for f in sorted(listing, key=lambda f: f.path):
            files[f.path] = {"size": f.size, "blob_id": f.blob_id or ""}
            if f.lfs_sha256:
                files[f.path].update(lfs_sha256=f.lfs_sha256, lfs_size=f.size)
        text = json.dumps({"format_version": TREE_FORMAT, "files": files}, indent=1)
        self._folder(path.parent)
        _write(path, text.encode("utf-8"))


def _write(path: Path, data: bytes) -> None:
    """Write via a sibling temp file and `os.replace` (no fsync: a cache entry that is lost is
    fetched again, and a damaged one fails its size and blob-id check)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
