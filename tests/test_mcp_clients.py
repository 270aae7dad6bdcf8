"""Real MCP clients against `hubskills mcp`, over stdio and streamable HTTP: the MCP Inspector's
CLI (`@modelcontextprotocol/inspector`, its SEP-2640 `--verify`: conformance and every digest
checked against the bytes it read) and fast-agent (`fast-agent-mcp`: its skill registry scan and
its verified installer). The oracle for every byte is the registry's own fetch.

Both are pinned and installed by `make mcp-clients` (tests/mcp_clients); a missing one skips
here and fails under HUBSKILLS_REQUIRE_MCP_CLIENTS=1 (CI).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from registry.config import Settings  # noqa: E402
from registry.registries import get_store  # noqa: E402
from tests.mcp_clients import FAST_AGENT_PROBE, fast_agent_python, inspector  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(600)


def _env(home: Path) -> dict[str, str]:
    return {"HUBSKILLS_HOME": str(home), "HF_HUB_OFFLINE": "1", "NO_COLOR": "1",
            "PYTHONPATH": str(ROOT), "HUBSKILLS_REGISTRY": "local"}


def _command() -> list[str]:
    return [sys.executable, "-m", "registry.cli", "mcp"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _http_server(home: Path) -> Iterator[str]:
    """`hubskills mcp --http` on a free port, until the block ends: yields its URL."""
    port = _free_port()
    proc = subprocess.Popen([*_command(), "--http", f"127.0.0.1:{port}"], cwd=ROOT,
                            env={**os.environ, **_env(home)})
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "hubskills mcp --http exited"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _oracle(home: Path, tmp: Path) -> dict[str, dict[str, str]]:
    """name -> {path: sha256} of every listed skill, from the registry's own fetch."""
    os.environ["HUBSKILLS_HOME"] = str(home)
    store = get_store(Settings.from_env())
    found = {}
    for info in store.search("", limit=100):
        dest = tmp / "oracle" / info.name
        fetched = store.fetch(info.repo, store.resolve(info.repo).sha, dest, count=False)
        found[info.name] = {rel: hashlib.sha256((dest / rel).read_bytes()).hexdigest()
                            for rel in fetched.files}
    return found


def _inspect(target: list[str], home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    envs = [arg for key, value in _env(home).items() for arg in ("-e", f"{key}={value}")]
    return subprocess.run([str(inspector()), "--cli", "-q", "--protocol-era", "auto", *args,
                           *(envs if target[0] != "url" else []), "--", *target[1:]],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **_env(home)})


def _inspector_checks(target: list[str], home: Path, tmp: Path) -> None:
    verified = _inspect(target, home, "--method", "skills/list", "--verify",
                        "--require-digests")
    assert verified.returncode == 0, verified.stderr + verified.stdout
    reports = [json.loads(line) for line in verified.stdout.splitlines() if line.strip()]
    oracle = _oracle(home, tmp)
    assert sorted(r["name"] for r in reports) == sorted(oracle)
    for report in reports:
        assert report["ok"] and report["outcome"] == "verified", report
        assert report["conformance"] == [] and report["frontmatter"] == [], report
        digests = {f["uri"].split(f"/{report['name']}/", 1)[1]: f["actualDigest"]
                   for f in report["files"]}
        assert {p: d.removeprefix("sha256:") for p, d in digests.items()} == oracle[
            report["name"]]
        assert all(f["status"] == "verified" for f in report["files"])
    skill_md = reports[0]["uri"]
    read = _inspect(target, home, "--format", "json", "--method", "resources/read",
                    "--uri", skill_md)
    assert read.returncode == 0, read.stderr
    (content,) = json.loads(read.stdout)["result"]["contents"]
    text = content["text"].encode("utf-8")
    assert hashlib.sha256(text).hexdigest() == oracle[reports[0]["name"]]["SKILL.md"]


def test_inspector_verifies_every_skill_over_stdio(tmp_path: Path) -> None:
    _inspector_checks(["stdio", *_command()], tmp_path / "home", tmp_path)


def test_inspector_verifies_every_skill_over_http(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with _http_server(home) as url:
        _inspector_checks(["url", url], home, tmp_path)


def _fast_agent(config: dict, home: Path, tmp: Path) -> dict[str, dict[str, str]]:
    """What fast-agent installed from the server named "hubskills": name -> {path: sha256}."""
    import yaml

    path = tmp / "fastagent.config.yaml"
    path.write_text(yaml.safe_dump({"mcp": {"servers": {"hubskills": config}}}), "utf-8")
    done = subprocess.run([str(fast_agent_python()), str(FAST_AGENT_PROBE), str(path),
                           "hubskills", str(tmp / "installed")], cwd=tmp, capture_output=True,
                          text=True, timeout=300,
                          env={**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
                               "HOME": str(tmp)})
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("HUBSKILLS-PROBE "))
    found = json.loads(line.removeprefix("HUBSKILLS-PROBE "))["skills"]
    for skill in found:  # fast-agent's own provenance file aside
        skill["files"].pop(".skill-source.json", None)
    return {skill["name"]: skill["files"] for skill in found}


def test_fast_agent_lists_and_installs_every_skill_over_stdio(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = {"command": _command()[0], "args": _command()[1:], "env": _env(home)}
    assert _fast_agent(config, home, tmp_path) == _oracle(home, tmp_path)


def test_fast_agent_lists_and_installs_every_skill_over_http(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with _http_server(home) as url:
        installed = _fast_agent({"transport": "http", "url": url}, home, tmp_path)
    assert installed == _oracle(home, tmp_path)
