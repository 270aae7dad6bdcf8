"""Publish then pull gives back the same folder: bytes, executable bits, empty folders, a
top-level README.md, through the local registry and the fake Hub (over HTTP, through the
unmodified huggingface_hub); a lying size is stopped; a tag pulled online resolves offline.
"""

from __future__ import annotations

import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import hashlib  # noqa: E402
import json  # noqa: E402
import stat  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.errors import HubskillsError, UnsafeSkill  # noqa: E402
from registry.install import pull, remove  # noqa: E402
from registry.install.lockfile import MARKER_FILE  # noqa: E402
from registry.publishing.publish import publish_skill  # noqa: E402
from registry.stores import LocalStore, SkillStore  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from tests.fakes.hub_server import FakeHub  # noqa: E402
from tests.hub_setup import require_online  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4 + b"\x00\xff" * 100


@pytest.fixture(scope="module")
def hub() -> Iterator[FakeHub]:
    with FakeHub() as server:
        yield server


def _hub_store(hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HubStore:
    require_online()
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    return HubStore(Settings(home=tmp_path / "home", hf_endpoint=hub.url, hf_token="hf_test",
                             namespace="tester", results_repo="tester/evals"))


@pytest.fixture(params=["local", "hub"])
def store(request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> SkillStore:
    if request.param == "local":
        return LocalStore(tmp_path / "store", namespace="tester")
    return _hub_store(request.getfixturevalue("hub"), tmp_path, monkeypatch)


def make_full_skill(root: Path, name: str) -> Path:
    """A skill with its own README.md, scripts (two executable), an empty folder, a binary
    asset and a nested `evals/files/` tree with two same-named inputs."""
    folder = root / name
    files: dict[str, tuple[bytes, int]] = {
        "SKILL.md": (f'---\nname: {name}\ndescription: "Round-trip {name}. Use when testing '
                     f'pulls."\nmetadata:\n  version: "1.0.0"\n---\n\nRun `scripts/run.py`.\n'
                     .encode(), 0o644),
        "README.md": (b"# My own README\n\nNot the registry card.\n", 0o644),
        "scripts/run.py": (b"#!/usr/bin/env python3\nprint('ok')\n", 0o755),
        "scripts/build.sh": (b"#!/bin/sh\necho built\n", 0o755),
        "scripts/lib.py": (b"X = 1\n", 0o644),
        "assets/logo.png": (PNG, 0o644),
        "evals/evals.json": (b'{"cases": []}\n', 0o644),
        "evals/files/a/data.csv": (b"x,y\n1,2\n", 0o644),
        "evals/files/b/data.csv": (b"x,y\n3,4\n", 0o644),
        "evals/files/b/deep/blob.bin": (bytes(range(256)), 0o644),
    }
    for rel, (data, mode) in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
        (folder / rel).chmod(mode)
    (folder / "assets/empty").mkdir()
    (folder / "output").mkdir()
    return folder


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every path under root (markers aside): (sha256 or `dir`, permission bits)."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath, name)
            if name == MARKER_FILE:
                continue
            mode = stat.S_IMODE(full.lstat().st_mode)
            rel = full.relative_to(root).as_posix()
            found[rel] = (("dir", 0) if full.is_dir() else
                          (hashlib.sha256(full.read_bytes()).hexdigest(), mode))
    return found


def test_round_trip_is_byte_and_mode_identical(store: SkillStore, tmp_path: Path):
    source = make_full_skill(tmp_path / "src", "round-trip")
    publish_skill(store, source, runs_dir=tmp_path / "runs", repo="tester/round-trip")
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    result = pull("tester/round-trip", project=project, store=store, agents=["claude"],
                  copy=True)
    expected = snapshot(source)
    assert expected["scripts/run.py"][1] == 0o755 and expected["output"] == ("dir", 0)
    for installed in (project / ".agents/skills/round-trip", project / ".claude/skills/round-trip"):
        assert snapshot(installed) == expected
    assert result.name == "round-trip"


def test_the_hub_repo_keeps_the_card_and_the_skills_readme_apart(
        hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    store = _hub_store(hub, tmp_path, monkeypatch)
    source = make_full_skill(tmp_path / "src", "apart")
    store.publish(source, repo="tester/apart", version="1.0.0")
    files = hub.repo("tester/apart").head.files
    assert files["README.md"].startswith(b"---\n") and b"agent-skill" in files["README.md"]
    assert files[".hubskills/README.md"] == (source / "README.md").read_bytes()
    manifest = json.loads(files[".hubskills/manifest.json"])
    assert manifest["executable"] == ["scripts/build.sh", "scripts/run.py"]
    assert manifest["empty_dirs"] == ["assets/empty", "output"]
    assert files["scripts/run.py"] == (source / "scripts/run.py").read_bytes()


def test_a_skill_folder_named_hubskills_is_refused_at_publish(store: SkillStore,
                                                             tmp_path: Path):
    source = make_full_skill(tmp_path / "src", "reserved")
    (source / ".hubskills").mkdir()
    (source / ".hubskills/x.md").write_text("x\n")
    with pytest.raises(HubskillsError, match="reserved"):
        publish_skill(store, source, runs_dir=tmp_path / "runs", repo="tester/reserved")


def test_a_tag_pulled_online_resolves_offline(hub: FakeHub, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch):
    store = _hub_store(hub, tmp_path, monkeypatch)
    source = make_full_skill(tmp_path / "src", "offline-tag")
    sha = store.publish(source, repo="tester/offline-tag", version="1.0.0").sha
    project = tmp_path / "proj"
    project.mkdir()
    pull("tester/offline-tag@v1.0.0", project=project, store=store)
    remove(project, "offline-tag")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = HubStore(replace(store.settings, offline=True))
    hub.reset_counts()
    result = pull("tester/offline-tag@v1.0.0", project=project, store=offline)
    assert result.sha == sha and result.version == "1.0.0"
    assert hub.requests == []
    assert snapshot(project / ".agents/skills/offline-tag") == snapshot(source)
    with pytest.raises(HubskillsError, match="not in the HF cache"):
        offline.resolve("tester/offline-tag", "v2.0.0")


@pytest.mark.parametrize(("declared", "actual", "message"), [
    (10, 5000, r"other sizes than its listing declares"),
    (10, 25 * 1024 * 1024, r"other sizes than its listing declares"),
    (5000, 10, r"received 10 bytes, the listing declares 5000"),
])
def test_a_size_the_server_lies_about_is_refused_cleanly(
        hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, declared: int,
        actual: int, message: str):
    store = _hub_store(hub, tmp_path, monkeypatch)
    repo_id = f"tester/liar-{declared}-{actual}"
    store.publish(make_full_skill(tmp_path / "src", repo_id.split("/")[1]), repo=repo_id,
                  version="1.0.0")
    repo = hub.repo(repo_id)
    repo.head.files["assets/blob.txt"] = b"a" * actual
    repo.declared_sizes["assets/blob.txt"] = declared
    project = tmp_path / "proj"
    project.mkdir()
    with pytest.raises(UnsafeSkill, match=message):
        pull(repo_id, project=project, store=store)
    assert not (project / ".agents/skills").exists() or not any(
        (project / ".agents/skills").iterdir())
    cached = [p for p in store.cache_dir.rglob("*") if p.is_file()]
    assert all(p.stat().st_size < 1024 * 1024 for p in cached)  # the big transfer stopped
    assert not [p for p in cached if p.name.endswith(".incomplete")]
