"""A Hugging Face Hub-compatible HTTP server for tests.

`FakeHub` serves the routes the unmodified `huggingface_hub` and `datasets` clients call from
memory, over real HTTP on 127.0.0.1. Point clients at it with
`HfApi(endpoint=hub.url, token=hub.token)` and, with `HF_HUB_DISABLE_XET=1`, LFS uploads go
through the legacy batch + PUT protocol served here.

    with FakeHub() as hub:
        api = HfApi(endpoint=hub.url, token=hub.token)
        api.create_repo("tester/demo")

Every request is recorded in `hub.requests` as `(method, path)` and its bearer token (or "")
in `hub.bearers` as `(method, path, token)`, and every commit's bearer token in
`hub.commit_tokens` as `(repo_id, token)`; `hub.fail_next(...)` injects failures;
requests that match no route are answered 404 and listed in `hub.unhandled`. `hub.jobs` serves
Hugging Face Jobs and runs each job locally (`jobs_server.py`). Write permissions and pull
requests (`hub.add_user`, `hub.merge_pr`) are in `hub_review.py`.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

import yaml

from .hub_review import (
    PullRequest,
    discussion_route,
    discussions_page,
    may_write,
    merged_files,
    pull_request_ref,
)
from .jobs_server import FakeJobs

TYPES_BY_PLURAL = {"models": "model", "datasets": "dataset", "spaces": "space"}
URL_PREFIXES = {"model": "", "dataset": "datasets/", "space": "spaces/"}
GITATTRIBUTES = b"".join(
    b"%s filter=lfs diff=lfs merge=lfs -text\n" % pattern
    for pattern in (b"*.7z", b"*.arrow", b"*.bin", b"*.gz", b"*.h5", b"*.joblib", b"*.npy",
                    b"*.onnx", b"*.parquet", b"*.pkl", b"*.pt", b"*.safetensors", b"*.tar",
                    b"*.zip", b"*.zst", b"*.gguf", b"*.png", b"*.jpg")
)
FRONTMATTER = re.compile(r"^(\s*---(?:\r\n|\r|\n))([\S\s]*?)((?:\r\n|\r|\n)---[ \t]*(\r\n|\n|$))")
STALE_PARENT_MESSAGE = "A commit has happened since. Please refresh and try again."
MAX_REGULAR_SIZE = 10 * 1024 * 1024


def git_blob_oid(data: bytes) -> str:
    """Return the git blob SHA-1 of `data`, as the Hub reports it for regular files."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    """Return the git-lfs pointer file stored in git in place of an LFS file."""
    return b"version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n" % (
        sha256.encode(), size)


def now_iso() -> str:
    """Current UTC time in the Hub's format (`2024-01-01T00:00:00.000Z`)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def parse_frontmatter(text: str) -> dict | None:
    """Return the YAML frontmatter of a README as a dict, or None if it has none."""
    match = FRONTMATTER.search(text)
    if not match:
        return None
    data = yaml.safe_load(match.group(2))
    return data if isinstance(data, dict) else None


class _BacklogServer(ThreadingHTTPServer):
    """A listen backlog large enough for a burst of concurrent clients (the default is 5)."""

    request_queue_size = 256
    daemon_threads = True


class HubError(Exception):
    """An error answered as `status`, `X-Error-Code: code` and `{"error": message}`."""

    def __init__(self, status: int, message: str, code: str | None = None, **extra: Any):
        super().__init__(message)
        self.status, self.message, self.code, self.extra = status, message, code, extra


@dataclass
class Commit:
    """One commit: a full snapshot of the files plus a link to its parent commit."""

    oid: str
    parent: str | None
    message: str
    date: str
    files: dict[str, bytes]
    lfs_paths: frozenset[str] = frozenset()
    description: str = ""


@dataclass
class Repo:
    """A repository held in memory. `downloads`, `likes` and `trending_score` are settable."""

    repo_type: str
    id: str
    private: bool
    created_at: str = field(default_factory=now_iso)
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    downloads: int = 0
    likes: int = 0
    trending_score: int = 0
    declared_sizes: dict[str, int] = field(default_factory=dict)  # a lying listing (tests)
    pulls: dict[int, PullRequest] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    digests: dict[tuple[int, bool], tuple[bytes, str]] = field(default_factory=dict, repr=False)

    @property
    def head(self) -> Commit:
        return self.commits[self.branches["main"]]

    def resolve(self, rev: str | None) -> Commit:
        """Resolve a branch, tag or full commit sha, or raise RevisionNotFound."""
        rev = rev or "main"
        for name in (rev, rev.removeprefix("refs/heads/"), rev.removeprefix("refs/tags/")):
            oid = self.branches.get(name) or self.tags.get(name)
            if oid:
                return self.commits[oid]
        if rev in self.commits:
            return self.commits[rev]
        if rev.startswith("refs/pr/") and rev[8:].isdigit() and int(rev[8:]) in self.pulls:
            return self.commits[self.pulls[int(rev[8:])].oid]
        raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")

    def card(self, commit: Commit) -> dict | None:
        readme = commit.files.get("README.md")
        return parse_frontmatter(readme.decode("utf-8", "replace")) if readme else None

    def file_entry(self, commit: Commit, path: str, expand: bool = False) -> dict:
        """The tree / paths-info item of a file (`lfs` set for LFS files)."""
        data = commit.files[path]
        size = self.declared_sizes.get(path, len(data))
        entry: dict[str, Any] = {"type": "file", "path": path, "size": size}
        if path in commit.lfs_paths:
            sha = self.digest(data, lfs=True)
            pointer = lfs_pointer(sha, len(data))
            entry["oid"] = git_blob_oid(pointer)
            entry["lfs"] = {"oid": sha, "size": len(data), "pointerSize": len(pointer)}
        else:
            entry["oid"] = self.digest(data)
        if expand:
            last = commit
            while last.parent and self.commits[last.parent].files.get(path) == data:
                last = self.commits[last.parent]
            entry["lastCommit"] = {"id": last.oid, "title": last.message, "date": last.date}
        return entry

    def dir_entry(self, commit: Commit, path: str) -> dict:
        inside = sorted(p for p in commit.files if p.startswith(path + "/"))
        digest = hashlib.sha1("\n".join(inside).encode())
        for p in inside:
            digest.update(self.file_entry(commit, p)["oid"].encode())
        return {"type": "directory", "path": path, "oid": digest.hexdigest(), "size": 0}

    def digest(self, data: bytes, lfs: bool = False) -> str:
        """`data`'s git blob id (`lfs`: its sha256), hashed once per bytes object: the Hub
        stores them, so listing a 32 MB file costs the fake no more than the Hub (a test that
        swaps a file's bytes gets the new ones' digest)."""
        kept = self.digests.get((id(data), lfs))
        if kept is None or kept[0] is not data:
            kept = (data, hashlib.sha256(data).hexdigest() if lfs else git_blob_oid(data))
            self.digests[(id(data), lfs)] = kept
        return kept[1]

    def info(self, commit: Commit, card_data: bool = True, blobs: bool = False) -> dict:
        """The repo info JSON (`model_info` / `dataset_info` / `space_info`) at `commit`."""
        card = self.card(commit) or {}
        tags = card.get("tags") or []
        siblings = []
        for path in sorted(commit.files):
            sibling: dict[str, Any] = {"rfilename": path}
            if blobs:
                entry = self.file_entry(commit, path)
                sibling.update(size=entry["size"], blobId=entry["oid"])
                if "lfs" in entry:
                    lfs = entry["lfs"]
                    sibling["lfs"] = {"size": lfs["size"], "sha256": lfs["oid"],
                                      "pointerSize": lfs["pointerSize"]}
            siblings.append(sibling)
        info: dict[str, Any] = {
            "_id": hashlib.sha1(self.id.encode()).hexdigest()[:24], "id": self.id,
            "author": self.id.split("/")[0], "sha": commit.oid, "lastModified": commit.date,
            "createdAt": self.created_at, "private": self.private, "gated": False,
            "disabled": False, "downloads": self.downloads, "likes": self.likes,
            "trendingScore": self.trending_score, "tags": [str(t) for t in tags],
            "siblings": siblings,
        }
        if self.repo_type == "model":
            info["modelId"] = self.id
        if self.repo_type == "space":
            info["sdk"] = card.get("sdk")
        if card_data and card:
            info["cardData"] = card
        return info


class FakeHub:
    """In-memory Hub on a background HTTP server; see the module docstring.

    Args:
        user: the name `whoami` reports and the default namespace of `create_repo`.
        token: the token tests should pass; any bearer token is accepted.
        page_size: items per page on list/tree/commits routes before a `Link: rel="next"`.
    """

    def __init__(self, user: str = "tester", token: str = "hf_fake_token", page_size: int = 1000):
        self.user, self.token, self.page_size = user, token, page_size
        self.url = ""
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs_objects: dict[str, bytes] = {}
        self.requests: list[tuple[str, str]] = []
        self.commit_tokens: list[tuple[str, str]] = []
        self.bearers: list[tuple[str, str, str]] = []
        self.users: dict[str, tuple[str, set[str]]] = {}  # token -> (user, repos granted)
        self.unhandled: list[tuple[str, str]] = []
        self._failures: list[list] = []  # [remaining, status, path_contains, message]
        self._lock = threading.RLock()
        self._oids = itertools.count()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.jobs = FakeJobs(user)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> FakeHub:
        """Start serving on an ephemeral port of 127.0.0.1; sets `url`."""
        self._server = _BacklogServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.hub = self  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the server (idempotent)."""
        self.jobs.stop_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- test helpers ----------------------------------------------------------------------

    def reset_counts(self) -> None:
        """Forget the recorded requests (and unhandled ones)."""
        self.requests.clear()
        self.unhandled.clear()

    def count(self, method: str | None = None, path_contains: str | None = None) -> int:
        """Number of recorded requests matching `method` and containing `path_contains`."""
        return sum(1 for m, p in list(self.requests)
                   if (method is None or m == method)
                   and (path_contains is None or path_contains in p))

    def fail_next(self, n: int = 1, status: int = 500, path_contains: str | None = None,
                  message: str | None = None) -> None:
        """Answer the next `n` requests whose path contains `path_contains` with `status`."""
        with self._lock:
            self._failures.append([n, status, path_contains, message or f"Injected {status}"])

    def add_user(self, name: str, token: str, writes: tuple[str, ...] = ()) -> None:
        """Register `token` as user `name`, who may write only their namespace and `writes`
        (other tokens stay the hub's own user, who may write everything)."""
        self.users[token] = (name, set(writes))

    def user_of(self, token: str) -> tuple[str, set[str] | None]:
        """The user a bearer token is, and the repos they may write (None: every repo)."""
        name, grants = self.users.get(token, (self.user, None))
        return name, grants

    def merge_pr(self, repo_id: str, num: int, repo_type: str = "model") -> None:
        """Merge an open pull request into `main` (what the repo's owner does on the Hub)."""
        repo = self.repo(repo_id, repo_type)
        with repo.lock:
            pr = repo.pulls[num]
            head = repo.head
            files = merged_files(head.files, repo.commits[pr.base].files,
                                 repo.commits[pr.oid].files)
            commit = self._new_commit(repo, head.oid, f"Merge pull request #{num}", files,
                                      head.lfs_paths | repo.commits[pr.oid].lfs_paths)
            repo.branches["main"], pr.status = commit.oid, "merged"

    def close_pr(self, repo_id: str, num: int, repo_type: str = "model") -> None:
        """Close a pull request without merging it."""
        self.repo(repo_id, repo_type).pulls[num].status = "closed"

    def repo(self, repo_id: str, repo_type: str = "model") -> Repo:
        """The stored repo (KeyError if absent); set `downloads`/`likes` on it for sorting."""
        return self.repos[(repo_type, repo_id)]

    def create_repo(self, repo_id: str, repo_type: str = "model", private: bool = False) -> Repo:
        """Create a repo with an initial commit holding `.gitattributes` (409 if it exists)."""
        with self._lock:
            if (repo_type, repo_id) in self.repos:
                raise HubError(409, f"You already created this {repo_type} repo",
                               url=self.repo_url(repo_type, repo_id))
            repo = Repo(repo_type=repo_type, id=repo_id, private=private)
            commit = self._new_commit(repo, None, "initial commit",
                                      {".gitattributes": GITATTRIBUTES}, frozenset())
            repo.branches["main"] = commit.oid
            self.repos[(repo_type, repo_id)] = repo
            return repo

    def repo_url(self, repo_type: str, repo_id: str) -> str:
        return f"{self.url}/{URL_PREFIXES[repo_type]}{repo_id}"

    # -- internals -------------------------------------------------------------------------

    def _new_commit(self, repo: Repo, parent: str | None, message: str, files: dict[str, bytes],
                    lfs_paths: frozenset[str], description: str = "") -> Commit:
        seed = f"{repo.id}\0{parent}\0{message}\0{now_iso()}\0{next(self._oids)}"
        commit = Commit(oid=hashlib.sha1(seed.encode()).hexdigest(), parent=parent,
                        message=message, date=now_iso(), files=files, lfs_paths=lfs_paths,
                        description=description)
        repo.commits[commit.oid] = commit
        return commit

    def _take_failure(self, path: str) -> tuple[int, str] | None:
        with self._lock:
            for rule in self._failures:
                if rule[0] > 0 and (rule[2] is None or rule[2] in path):
                    rule[0] -= 1
                    return rule[1], rule[3]
        return None

    def _get_repo(self, repo_type: str, repo_id: str, authed: bool) -> Repo:
        repo = self.repos.get((repo_type, repo_id))
        if repo is None or (repo.private and not authed):
            raise HubError(404, "Repository not found", "RepoNotFound")
        return repo


class _Handler(BaseHTTPRequestHandler):
    """Routes one request to the `FakeHub` attached to the server."""

    protocol_version = "HTTP/1.1"
    server_version = "FakeHub/1.0"
    disable_nagle_algorithm = True  # otherwise each reused connection waits ~40 ms (delayed ACK)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = lambda self: self._dispatch()  # noqa: E731

    @property
    def hub(self) -> FakeHub:
        return self.server.hub  # type: ignore[attr-defined]

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _dispatch(self) -> None:
        split = urlsplit(self.path)
        self.body = self._read_body()
        self.query = parse_qs(split.query)
        self.authed = self.headers.get("Authorization", "").startswith("Bearer ")
        method, hub = self.command, self.hub
        hub.requests.append((method, split.path))
        hub.bearers.append((method, split.path, self._bearer()))
        try:
            failure = hub._take_failure(split.path)
            if failure:
                raise HubError(failure[0], failure[1])
            segments = [unquote(s) for s in split.path.split("/")[1:]]
            result = self._route(method, segments)
            if result is None:
                hub.unhandled.append((method, split.path))
                raise HubError(404, f"Not found: {method} {split.path}")
            self._send(*result) if isinstance(result, tuple) else self._send(200, result)
        except HubError as err:
            headers = {"X-Error-Message": err.message}
            if err.code:
                headers["X-Error-Code"] = err.code
            self._send(err.status, {"error": err.message, **err.extra}, headers)

    def _send(self, status: int, body: Any, headers: dict | None = None) -> None:
        headers = dict(headers or {})
        if isinstance(body, bytes):
            data = body
            headers.setdefault("Content-Type", "application/octet-stream")
        else:
            data = json.dumps(body, default=str).encode()
            headers.setdefault("Content-Type", "application/json")
        headers.setdefault("Content-Length", str(len(data)))
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _json(self) -> Any:
        return json.loads(self.body or b"{}")

    def _bearer(self) -> str:
        return self.headers.get("Authorization", "").removeprefix("Bearer ")

    def _require_write(self, repo_id: str) -> None:
        user, grants = self.hub.user_of(self._bearer())
        if grants is not None and not may_write(user, grants, repo_id):
            raise HubError(403, f"You don't have the rights to write to {repo_id}: open a "
                                "pull request instead")

    def _require_auth(self) -> None:
        if not self.authed:
            raise HubError(401, "Invalid username or password.")

    def _q(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name) or self.query.get(name + "[]")
        return values[0] if values else default

    def _flag(self, name: str) -> bool:
        return (self._q(name) or "").lower() in ("1", "true")

    # -- routing ---------------------------------------------------------------------------

    def _route(self, method: str, seg: list[str]) -> Any:
        hub = self.hub
        if seg[:1] == ["api"]:
            rest = seg[1:]
            if rest == ["whoami-v2"] and method == "GET":
                self._require_auth()
                user, _ = hub.user_of(self._bearer())
                return {"type": "user", "id": "0" * 24, "name": user, "fullname": user,
                        "email": f"{user}@example.com", "orgs": [], "isPro": False,
                        "auth": {"type": "access_token",
                                 "accessToken": {"displayName": "fake", "role": "write"}}}
            if rest == ["agent-harnesses"] and method == "GET":  # hub 2.4 progress-bar probe
                return {"standardEnvVars": [], "harnesses": {}}
            if rest[:1] == ["jobs"]:
                self._require_auth()
                return hub.jobs.route(method, rest[1:], self._json() if method == "POST" else {},
                                      self.query)
            if rest == ["repos", "create"] and method == "POST":
                return self._create_repo()
            if rest == ["repos", "delete"] and method == "DELETE":
                return self._delete_repo()
            if rest == ["validate-yaml"] and method == "POST":
                try:
                    parse_frontmatter(self._json().get("content", ""))
                except yaml.YAMLError as err:
                    raise HubError(400, f"Invalid YAML: {err}") from err
                return {"errors": [], "warnings": []}
            if len(rest) == 1 and rest[0] in TYPES_BY_PLURAL and method == "GET":
                return self._list_repos(TYPES_BY_PLURAL[rest[0]], "/" + "/".join(seg))
            if len(rest) >= 3 and rest[0] in TYPES_BY_PLURAL:
                repo_type, repo_id = TYPES_BY_PLURAL[rest[0]], "/".join(rest[1:3])
                return self._repo_api(method, repo_type, repo_id, rest[3:])
            return None
        if seg[:1] == ["_lfs"] and len(seg) == 2 and method == "PUT":
            data = self.body
            if hashlib.sha256(data).hexdigest() != seg[1]:
                raise HubError(400, "sha256 mismatch")
            hub.lfs_objects[seg[1]] = data
            return {}
        repo_type = TYPES_BY_PLURAL.get(seg[0], "model") if seg else "model"
        if repo_type != "model":
            seg = seg[1:]
        if len(seg) == 6 and seg[1].endswith(".git") and seg[2:] == [
                "info", "lfs", "objects", "batch"] and method == "POST":
            return self._lfs_batch(repo_type, f"{seg[0]}/{seg[1][:-4]}")
        if len(seg) >= 5 and seg[2] == "resolve" and method in ("GET", "HEAD"):
            return self._resolve(repo_type, "/".join(seg[:2]), seg[3], "/".join(seg[4:]))
        return None

    def _repo_api(self, method: str, repo_type: str, repo_id: str, rest: list[str]) -> Any:
        hub = self.hub
        repo = hub._get_repo(repo_type, repo_id, self.authed)
        action, args = (rest[0], rest[1:]) if rest else ("", [])
        if method == "GET" and (not rest or (action == "revision" and len(args) == 1)):
            commit = repo.resolve(args[0] if args else None)
            return repo.info(commit, blobs=self._flag("blobs"))
        if method == "GET" and action == "tree" and args:
            return self._tree(repo, repo.resolve(args[0]), "/".join(args[1:]).strip("/"))
        if method == "POST" and action == "paths-info" and len(args) == 1:
            return self._paths_info(repo, repo.resolve(args[0]))
        if method == "GET" and action == "refs":
            refs = {kind: [{"name": n, "ref": f"refs/{prefix}/{n}", "targetCommit": oid}
                           for n, oid in sorted(names.items())]
                    for kind, prefix, names in (("branches", "heads", repo.branches),
                                                ("tags", "tags", repo.tags))}
            pulls = [{"name": f"refs/pr/{n}", "ref": f"refs/pr/{n}", "targetCommit": p.oid}
                     for n, p in sorted(repo.pulls.items())]
            return {**refs, "converts": [], "pullRequests": pulls}
        if method == "GET" and action == "discussions" and not args:
            return discussions_page(list(repo.pulls.values()), repo.id, repo.repo_type,
                                    self._q("status"))
        if action == "discussions" and args and args[0].isdigit():
            return discussion_route(self, repo, method, int(args[0]), args[1:])
        if method == "GET" and action == "commits" and len(args) == 1:
            history, commit = [], repo.resolve(args[0])
            while commit:
                history.append({"id": commit.oid, "title": commit.message,
                                "message": commit.description, "date": commit.date,
                                "authors": [{"user": hub.user}]})
                commit = repo.commits.get(commit.parent) if commit.parent else None
            return self._paginate(history, f"/api/{repo_type}s/{repo_id}/commits/{args[0]}")
        if method == "GET" and action == "auth-check" and args in ([], ["write"]):
            if args:  # `auth_check(write=True)`: may this token write the repo? 403 if not
                self._require_auth()
                self._require_write(repo.id)
            return {}
        if method in ("POST", "DELETE"):
            self._require_auth()
        if method == "POST" and action == "preupload" and len(args) == 1:
            return self._preupload(repo, repo.resolve(args[0]))
        if method == "POST" and action == "commit" and len(args) == 1:
            return self._commit(repo, args[0])
        if action in ("tag", "branch") and len(args) == 1 and method in ("POST", "DELETE"):
            self._require_write(repo.id)
            return self._ref(repo, method, action, args[0])
        if action == "like" and not args and method in ("POST", "DELETE"):
            repo.likes += 1 if method == "POST" else -1
            return {}
        return None

    # -- repos -----------------------------------------------------------------------------

    def _repo_id_from_body(self) -> tuple[str, str, dict]:
        body = self._json()
        repo_id = f"{body.get('organization') or self.hub.user}/{body['name']}"
        return body.get("type") or "model", repo_id, body

    def _create_repo(self) -> dict:
        self._require_auth()
        repo_type, repo_id, body = self._repo_id_from_body()
        if (repo_type, repo_id) not in self.hub.repos:  # an existing one answers 409 first
            self._require_write(repo_id)
        private = body.get("visibility") == "private" or bool(body.get("private"))
        self.hub.create_repo(repo_id, repo_type, private)
        return {"url": self.hub.repo_url(repo_type, repo_id), "name": repo_id, "id": repo_id}

    def _delete_repo(self) -> dict:
        self._require_auth()
        repo_type, repo_id, _ = self._repo_id_from_body()
        with self.hub._lock:
            self.hub._get_repo(repo_type, repo_id, True)
            del self.hub.repos[(repo_type, repo_id)]
        return {}

    def _list_repos(self, repo_type: str, path: str) -> tuple:
        search = (self._q("search") or "").lower()
        author, filters = self._q("author"), self.query.get("filter", [])
        items = []
        for (kind, repo_id), repo in list(self.hub.repos.items()):
            if kind != repo_type or (repo.private and not self.authed):
                continue
            info = repo.info(repo.head, card_data=self._flag("cardData") or self._flag("full"))
            if search and search not in repo_id.lower():
                continue
            if author and repo_id.split("/")[0] != author:
                continue
            if any(f not in info["tags"] for f in filters):
                continue
            items.append(info)
        sort_key = {"downloads": "downloads", "likes": "likes", "lastModified": "lastModified",
                    "createdAt": "createdAt", "trendingScore": "trendingScore"}.get(
                        self._q("sort") or "")
        if sort_key:
            items.sort(key=lambda i: i[sort_key], reverse=True)
        if self._q("limit"):
            items = items[: int(self._q("limit") or 0)]
        return self._paginate(items, path)

    def _paginate(self, items: list, path: str) -> tuple:
        """Slice `items` per `?cursor=`; add a GitHub-style `Link: <…>; rel="next"` header."""
        start, size = int(self._q("cursor") or 0), self.hub.page_size
        headers = {}
        if start + size < len(items):
            query = {k: v for k, v in self.query.items() if k != "cursor"}
            query["cursor"] = [str(start + size)]
            headers["Link"] = f'<{self.hub.url}{path}?{urlencode(query, doseq=True)}>; rel="next"'
        return 200, items[start : start + size], headers

    # -- files -----------------------------------------------------------------------------

    def _tree(self, repo: Repo, commit: Commit, path: str) -> tuple:
        recursive, expand = self._flag("recursive"), self._flag("expand")
        prefix = path + "/" if path else ""
        if path and not any(p.startswith(prefix) for p in commit.files):
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        files, dirs = [], set()
        for p in sorted(commit.files):
            if not p.startswith(prefix):
                continue
            parts = p[len(prefix):].split("/")
            for depth in range(1, len(parts) if recursive else min(2, len(parts))):
                dirs.add(prefix + "/".join(parts[:depth]))
            if recursive or len(parts) == 1:
                files.append(repo.file_entry(commit, p, expand))
        entries = [repo.dir_entry(commit, d) for d in sorted(dirs)] + files
        rev_path = f"/api/{repo.repo_type}s/{repo.id}/tree/{commit.oid}/{path}".rstrip("/")
        return self._paginate(entries, rev_path)

    def _paths_info(self, repo: Repo, commit: Commit) -> list:
        if self.headers.get("Content-Type", "").startswith("application/json"):
            body = self._json()
            paths, expand = body.get("paths", []), bool(body.get("expand"))
        else:
            form = parse_qs(self.body.decode())
            paths, expand = form.get("paths", []), form.get("expand", [""])[0] in ("True", "true")
        entries = []
        for path in paths:
            path = path.strip("/")
            if path in commit.files:
                entries.append(repo.file_entry(commit, path, expand))
            elif any(p.startswith(path + "/") for p in commit.files):
                entries.append(repo.dir_entry(commit, path))
        return entries

    def _resolve(self, repo_type: str, repo_id: str, rev: str, path: str) -> tuple:
        repo = self.hub._get_repo(repo_type, repo_id, self.authed)
        commit = repo.resolve(rev)
        if path not in commit.files:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        data, entry = commit.files[path], repo.file_entry(commit, path)
        etag = entry["lfs"]["oid"] if "lfs" in entry else entry["oid"]
        headers = {"X-Repo-Commit": commit.oid, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
        if "lfs" in entry:
            headers.update({"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(data))})
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "").strip())
        if not match or match.groups() == ("", ""):
            return 200, data, headers
        first, last = match.groups()
        start = int(first) if first else max(len(data) - int(last), 0)
        end = min(int(last), len(data) - 1) if first and last else len(data) - 1
        if start >= len(data) and len(data):
            raise HubError(416, "Range not satisfiable")
        headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
        return 206, data[start : end + 1], headers

    # -- writes ----------------------------------------------------------------------------

    def _is_lfs_path(self, commit: Commit, path: str) -> bool:
        attributes = commit.files.get(".gitattributes", b"").decode("utf-8", "replace")
        for line in attributes.splitlines():
            pattern, _, attrs = line.strip().partition(" ")
            if "filter=lfs" in attrs and (fnmatch.fnmatch(path, pattern)
                                          or fnmatch.fnmatch(path.rsplit("/", 1)[-1], pattern)):
                return True
        return False

    def _preupload(self, repo: Repo, commit: Commit) -> dict:
        answers = []
        for item in self._json().get("files", []):
            path, sample = item["path"], base64.b64decode(item.get("sample", ""))
            lfs = (path in commit.lfs_paths or self._is_lfs_path(commit, path)
                   or b"\0" in sample or item.get("size", 0) > MAX_REGULAR_SIZE)
            oid = None
            if path in commit.files:
                entry = repo.file_entry(commit, path)
                oid = entry["lfs"]["oid"] if "lfs" in entry else entry["oid"]
            answers.append({"path": path, "uploadMode": "lfs" if lfs else "regular",
                            "shouldIgnore": False, "oid": oid})
        return {"files": answers, "commitOid": commit.oid}

    def _lfs_batch(self, repo_type: str, repo_id: str) -> tuple:
        self._require_auth()
        self.hub._get_repo(repo_type, repo_id, True)
        objects = []
        for obj in self._json().get("objects", []):
            answer = {"oid": obj["oid"], "size": obj["size"]}
            if obj["oid"] not in self.hub.lfs_objects:
                answer.update(authenticated=True, actions={
                    "upload": {"href": f"{self.hub.url}/_lfs/{obj['oid']}", "expires_in": 3600}})
            objects.append(answer)
        body = {"transfer": "basic", "objects": objects, "hash_algo": "sha256"}
        return 200, body, {"Content-Type": "application/vnd.git-lfs+json"}

    def _commit(self, repo: Repo, branch: str) -> dict:
        bearer = self._bearer()
        self.hub.commit_tokens.append((repo.id, bearer))
        create_pr = self._flag("create_pr")
        pull = pull_request_ref(repo, branch)  # a push to an open pull request's refs/pr/N
        if pull is not None:
            self._require_auth()
            if self.hub.user_of(bearer)[0] != pull.author:
                self._require_write(repo.id)
        elif not create_pr:
            self._require_write(repo.id)
        lines = [json.loads(line) for line in self.body.splitlines() if line.strip()]
        header = next((line["value"] for line in lines if line["key"] == "header"), {})
        with repo.lock:
            if pull is None and branch.removeprefix("refs/heads/") not in repo.branches:
                raise HubError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
            branch = branch.removeprefix("refs/heads/")
            head = repo.commits[pull.oid if pull else repo.branches[branch]]
            parent = header.get("parentCommit")
            if parent and parent != head.oid:
                raise HubError(412, STALE_PARENT_MESSAGE)
            files, lfs_paths = dict(head.files), set(head.lfs_paths)
            for line in lines:
                key, value = line["key"], line["value"]
                path = value.get("path", "").strip("/")
                if key == "file":
                    content = value["content"]
                    files[path] = (base64.b64decode(content) if value.get("encoding") == "base64"
                                   else content.encode())
                    lfs_paths.discard(path)
                elif key == "lfsFile":
                    if value["oid"] not in self.hub.lfs_objects:
                        raise HubError(422, f"LFS object {value['oid']} was not uploaded")
                    files[path] = data = self.hub.lfs_objects[value["oid"]]
                    repo.digests[(id(data), True)] = (data, value["oid"])  # checked at upload
                    lfs_paths.add(path)
                elif key == "deletedFile":
                    if files.pop(path, None) is None:
                        raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
                    lfs_paths.discard(path)
                elif key == "deletedFolder":
                    for p in [p for p in files if p.startswith(path + "/")]:
                        del files[p]
                        lfs_paths.discard(p)
            commit = self.hub._new_commit(repo, head.oid, header.get("summary", ""), files,
                                          frozenset(lfs_paths), header.get("description", ""))
            pr_url = None
            if pull is not None:
                pull.oid = commit.oid
            elif create_pr:  # main stays; the commit waits on refs/pr/N for review
                num = len(repo.pulls) + 1
                repo.pulls[num] = PullRequest(num, header.get("summary", ""),
                                              self.hub.user_of(bearer)[0], commit.oid, head.oid,
                                              now_iso())
                pr_url = f"{self.hub.repo_url(repo.repo_type, repo.id)}/discussions/{num}"
            else:
                repo.branches[branch] = commit.oid
        url = f"{self.hub.repo_url(repo.repo_type, repo.id)}/commit/{commit.oid}"
        return {"success": True, "commitOid": commit.oid, "commitUrl": url,
                "hookOutput": "", "pullRequestUrl": pr_url}

    def _ref(self, repo: Repo, method: str, kind: str, name: str) -> dict:
        refs = repo.tags if kind == "tag" else repo.branches
        with repo.lock:
            if method == "DELETE":
                if refs.pop(name, None) is None:
                    raise HubError(404, f"Invalid rev id: {name}", "RevisionNotFound")
                return {}
            body = self._json()
            if kind == "tag":  # POST /tag/{revision} {"tag": name}
                target, name = repo.resolve(name), body["tag"]
            else:  # POST /branch/{name} {"startingPoint": revision}
                target = repo.resolve(body.get("startingPoint"))
            if name in refs:
                raise HubError(409, f"{kind.capitalize()} {name} already exists")
            refs[name] = target.oid
        return {}
