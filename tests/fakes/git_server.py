"""Git repositories for tests: built in a folder with git's plumbing, served over smart HTTP.

`GitServer` serves the bare repositories under its root read-only through `git http-backend`
(CGI, behind a `ThreadingHTTPServer` on 127.0.0.1), as GitHub serves `https://github.com/o/r.git`,
and counts the bytes it sends (`sent`); the same repositories are reachable as `file://` URLs.
A repository serves partial clones (`git fetch --filter`, any object by id) as GitHub's do, or,
made with `partial=False`, refuses filters as an old or minimal server does. `commit_tree`
writes any tree, including what a working tree cannot hold (`..`, absolute-looking or
control-character names, links, submodule entries), so hostile repositories are crafted exactly.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

_IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
             "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
             "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}

#: a tree entry: file bytes, ("link", target), ("exec", bytes) or ("submodule", sha)
Content = bytes | tuple[str, Any]


def git(repo: Path, *args: str, data: bytes | None = None) -> str:
    """Run git in the bare repository `repo` (fixed identity, no user config); its stdout."""
    env = {**os.environ, **_IDENTITY}
    done = subprocess.run(["git", "--git-dir", str(repo), *args], input=data, env=env,
                          capture_output=True, check=True)
    return done.stdout.decode().strip()


def bare_repo(path: Path, *, partial: bool = True) -> Path:
    """An empty bare repository at `path` whose default branch is `main`.

    `partial`: its upload-pack honours `--filter` and sends any object asked for by id.
    """
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "--quiet", "--bare", "--template=", str(path)], check=True,
                   env={**os.environ, **_IDENTITY})
    git(path, "symbolic-ref", "HEAD", "refs/heads/main")
    for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"):
        git(path, "config", key, "true" if partial else "false")
    return path


def _tree(repo: Path, files: Mapping[str, Content]) -> str:
    """Write a tree holding `files` (paths split on `/`, every name taken as is)."""
    children: dict[str, dict[str, Content]] = {}
    lines = []
    for path, content in files.items():
        head, slash, rest = path.partition("/")
        if slash and rest:
            children.setdefault(head, {})[rest] = content
            continue
        if isinstance(content, tuple) and content[0] == "submodule":
            lines.append(f"160000 commit {content[1]}\t{path}")
            continue
        mode = {"link": "120000", "exec": "100755"}.get(
            content[0] if isinstance(content, tuple) else "", "100644")
        data = content[1] if isinstance(content, tuple) else content
        blob = git(repo, "hash-object", "-w", "--stdin",
                   data=data.encode() if isinstance(data, str) else data)
        lines.append(f"{mode} blob {blob}\t{path}")
    lines += [f"040000 tree {_tree(repo, sub)}\t{name}" for name, sub in children.items()]
    return git(repo, "mktree", "-z", data=b"".join(line.encode() + b"\0" for line in lines))


def commit_tree(repo: Path, files: Mapping[str, Content], *, branch: str = "main",
                tag: str | None = None, message: str = "commit") -> str:
    """Commit exactly `files` on `branch` (on top of its head), optionally tagged; the sha."""
    parent = git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}") \
        if (repo / "refs/heads" / branch).exists() else ""
    args = ["commit-tree", _tree(repo, files), "-m", message, *(["-p", parent] if parent else [])]
    sha = git(repo, *args)
    git(repo, "update-ref", f"refs/heads/{branch}", sha)
    if tag:
        git(repo, "tag", "-f", tag, sha)
    return sha


class GitServer:
    """The bare repositories under `root`, served by `git http-backend` at `url`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[str] = []
        self.sent = 0  # response bytes, all requests together
        self._count = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's names)
                server._serve(self)

            def do_POST(self) -> None:  # noqa: N802
                server._serve(self)

            def log_message(self, *args: object) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    def __enter__(self) -> GitServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()

    def repo(self, name: str, *, partial: bool = True) -> Path:
        """The bare repository `name` (`owner/repo.git`), made on first use (see `bare_repo`)."""
        path = self.root / name
        return path if (path / "HEAD").exists() else bare_repo(path, partial=partial)

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        path, _, query = handler.path.partition("?")
        self.requests.append(f"{handler.command} {path}")
        body = _body(handler)
        env = {"PATH": os.environ.get("PATH", ""), "GIT_PROJECT_ROOT": str(self.root),
               "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": unquote(path), "QUERY_STRING": query,
               "REQUEST_METHOD": handler.command, "REMOTE_ADDR": "127.0.0.1",
               "CONTENT_TYPE": handler.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(body)), **_IDENTITY}
        for header, variable in (("Git-Protocol", "GIT_PROTOCOL"),
                                 ("Content-Encoding", "HTTP_CONTENT_ENCODING")):
            if handler.headers.get(header):
                env[variable] = handler.headers[header]
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = out.partition(b"\n\n")
        headers = [line.split(":", 1) for line in head.decode().splitlines() if ":" in line]
        status = next((int(v.split()[0]) for k, v in headers if k.lower() == "status"), 200)
        handler.send_response(status)
        for key, value in headers:
            if key.lower() != "status":
                handler.send_header(key, value.strip())
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
        with self._count:
            self.sent += len(payload)


def _body(handler: BaseHTTPRequestHandler) -> bytes:
    """The request body, plain or chunked."""
    if handler.headers.get("Transfer-Encoding", "").lower() != "chunked":
        return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
    chunks = []
    while True:
        size = int(handler.rfile.readline().strip().split(b";")[0], 16)
        chunk = handler.rfile.read(size + 2)[:size]
        if not size:
            return b"".join(chunks)
        chunks.append(chunk)
