"""`install` from skills.lock against the fake Hub: what a pinned skill asks the Hub (read from
the fake's request log), that the bytes are held to the lock's content hash and to the listing,
and that what a pinned install cached serves later installs and pulls offline.
"""

from __future__ import annotations

import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import hashlib  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.errors import HubskillsError, UnsafeSkill  # noqa: E402
from registry.hub import HubClient, RefusedPath, RemoteFile  # noqa: E402
from registry.install import install, pull  # noqa: E402
from registry.install.lockfile import MARKER_FILE, Lockfile  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from tests.fakes.hub_server import FakeHub  # noqa: E402
from tests.hub_setup import require_online  # noqa: E402
from tests.test_install import tree  # noqa: E402

NAMES = ("alpha-skill", "beta-skill", "gamma-skill")


@pytest.fixture(scope="module")
def hub() -> Iterator[FakeHub]:
    with FakeHub() as server:
        yield server


@pytest.fixture
def settings(hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    require_online()
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    (tmp_path / "user").mkdir()
    return Settings(home=tmp_path / "home", hf_endpoint=hub.url, hf_token="hf_test",
                    namespace="tester", results_repo="tester/evals")


def make_skill(root: Path, name: str, extra: dict[str, bytes] | None = None) -> Path:
    folder = root / name
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f'---\nname: {name}\ndescription: "Pinned {name}. Use when testing installs."\n'
        f'metadata:\n  version: "1.0.0"\n---\n\nRead `references/guide.md`.\n')
    (folder / "references/guide.md").write_text(f"# {name}\n\nStep one.\n")
    for rel, data in (extra or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return folder


def project(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    (folder / ".claude").mkdir(parents=True)
    return folder


def locked(hub: FakeHub, settings: Settings, tmp_path: Path, names: tuple[str, ...] = NAMES,
           extra: dict[str, bytes] | None = None) -> Path:
    """Publish `names` as `tester/<name>` and pull them into a project; its skills.lock."""
    store = HubStore(replace(settings, home=tmp_path / "publisher"))
    first = project(tmp_path, "first")
    for name in names:
        repo = f"tester/{name}"
        if repo not in {r.id for r in hub.repos.values()}:
            store.publish(make_skill(tmp_path / "src", name, extra), repo=repo, version="1.0.0")
        pull(repo, project=first, store=store)
    return first / "skills.lock"


def fresh(tmp_path: Path, lock: Path, name: str) -> Path:
    folder = project(tmp_path, name)
    shutil.copy(lock, folder / "skills.lock")
    return folder


def test_a_pinned_skill_costs_one_listing_and_one_get_per_file(
        hub: FakeHub, settings: Settings, tmp_path: Path):
    lock = locked(hub, settings, tmp_path)
    target, cold = fresh(tmp_path, lock, "cold"), HubStore(settings)
    hub.reset_counts()
    results = install(target, stores=lambda _: cold, frozen=True)
    assert sorted(r.name for r in results) == list(NAMES)
    assert all(r.status == "installed" for r in results)
    requests = list(hub.requests)
    for name in NAMES:
        sha = Lockfile.read(lock).entries[name].sha
        mine = [(m, p) for m, p in requests if f"/tester/{name}/" in p]
        files = [p for p in hub.repo(f"tester/{name}").commits[sha].files
                 if p not in ("README.md", ".gitattributes")]
        assert sorted(mine) == sorted(
            [("GET", f"/api/models/tester/{name}/tree/{sha}")]
            + [("GET", f"/tester/{name}/resolve/{sha}/{p}") for p in files])
    assert len(requests) == 4 * len(NAMES)  # the listing, SKILL.md, the guide, the manifest
    assert not [r for r in requests if r[0] == "HEAD" or "/refs" in r[1]
                or "/revision/" in r[1]]
    again = fresh(tmp_path, lock, "warm")  # the same cache: nothing to ask
    hub.reset_counts()
    install(again, stores=lambda _: cold, frozen=True)
    assert hub.requests == []
    assert placed(again) == placed(target)


def test_what_a_pinned_install_cached_serves_offline(hub: FakeHub, settings: Settings,
                                                     tmp_path: Path):
    lock = locked(hub, settings, tmp_path)
    first = fresh(tmp_path, lock, "online")
    install(first, stores=lambda _: HubStore(settings), frozen=True)
    offline = HubStore(replace(settings, offline=True))
    second = fresh(tmp_path, lock, "offline")
    hub.reset_counts()
    install(second, stores=lambda _: offline, frozen=True)
    entry = Lockfile.read(lock).entries["beta-skill"]
    result = pull(f"{entry.repo}@{entry.sha}", project=project(tmp_path, "pulled"),
                  store=offline)
    assert hub.requests == [] and result.sha == entry.sha
    assert placed(second) == placed(first)


def test_files_that_do_not_hash_as_the_lock_pins_are_refused_and_nothing_is_placed(
        hub: FakeHub, settings: Settings, tmp_path: Path):
    lock = locked(hub, settings, tmp_path)
    sha = Lockfile.read(lock).entries["beta-skill"].sha
    commit = hub.repo("tester/beta-skill").commits[sha]
    original = commit.files["references/guide.md"]
    commit.files["references/guide.md"] = b"# beta-skill\n\nStep one, then curl it.\n"
    try:
        target = fresh(tmp_path, lock, "tampered")
        before = tree(target)
        with pytest.raises(UnsafeSkill) as info:
            install(target, stores=lambda _: HubStore(settings), frozen=True)
    finally:
        commit.files["references/guide.md"] = original
    assert "beta-skill" in info.value.message and "skills.lock pins" in info.value.message
    assert info.value.hint.startswith("hubskills update beta-skill")
    assert tree(target) == before  # no skill placed, not even the two that hash as pinned


@pytest.mark.parametrize(("declared", "actual", "message"), [
    (10, 3 * 1024 * 1024, r"other sizes than its listing declares.*transfer was stopped"),
    (5000, 10, r"received 10 bytes, the listing declares 5000"),
])
def test_a_size_the_listing_lies_about_is_refused_on_the_pinned_path(
        hub: FakeHub, settings: Settings, tmp_path: Path, declared: int, actual: int,
        message: str):
    name = f"liar-{declared}"
    lock = locked(hub, settings, tmp_path, (name,), extra={"assets/blob.txt": b"a" * 100})
    repo = hub.repo(f"tester/{name}")
    commit = repo.commits[Lockfile.read(lock).entries[name].sha]
    commit.files["assets/blob.txt"] = b"a" * actual
    repo.declared_sizes["assets/blob.txt"] = declared
    store, target = HubStore(settings), fresh(tmp_path, lock, "liar")
    before = tree(target)
    with pytest.raises(HubskillsError, match=message):
        install(target, stores=lambda _: store, frozen=True)
    assert tree(target) == before
    kept = [p for p in store.cache_dir.rglob("*") if p.is_file()]
    assert all(p.stat().st_size < 1024 * 1024 for p in kept)  # the big transfer stopped


def test_bytes_that_do_not_match_the_listed_blob_id_are_never_kept(hub: FakeHub,
                                                                   settings: Settings,
                                                                   tmp_path: Path):
    lock = locked(hub, settings, tmp_path, ("alpha-skill",))
    sha = Lockfile.read(lock).entries["alpha-skill"].sha
    data = hub.repo("tester/alpha-skill").commits[sha].files["SKILL.md"]
    client = HubClient(hub.url, "hf_test", tmp_path / "cache")
    honest = [RemoteFile("SKILL.md", len(data), _git_oid(data))]
    assert list(client.read_snapshot("tester/alpha-skill", sha, ["SKILL.md"], offline=False,
                                     max_file_bytes=1 << 20, listing=honest, pinned=True)) \
        == [("SKILL.md", data)]
    lying = [RemoteFile("SKILL.md", len(data), _git_oid(b"something else"))]
    with pytest.raises(RefusedPath, match="do not match the listing's blob id"):
        list(HubClient(hub.url, "hf_test", tmp_path / "cache2").read_snapshot(
            "tester/alpha-skill", sha, ["SKILL.md"], offline=False, max_file_bytes=1 << 20,
            listing=lying, pinned=True))
    assert not [p for p in (tmp_path / "cache2").rglob("*") if p.is_file()]


def test_an_lfs_file_is_held_to_its_sha256_online_and_offline(hub: FakeHub, settings: Settings,
                                                              tmp_path: Path):
    logo = bytes(range(256)) * 64
    lock = locked(hub, settings, tmp_path, ("lfs-skill",), extra={"assets/logo.bin": logo})
    sha = Lockfile.read(lock).entries["lfs-skill"].sha
    repo = hub.repo("tester/lfs-skill")
    repo.commits[sha] = replace(repo.commits[sha], lfs_paths=frozenset({"assets/logo.bin"}))
    first = fresh(tmp_path, lock, "lfs-online")
    install(first, stores=lambda _: HubStore(settings), frozen=True)
    assert (first / ".agents/skills/lfs-skill/assets/logo.bin").read_bytes() == logo
    blobs = HubStore(settings).cache_dir / "models--tester--lfs-skill" / "blobs"
    assert (blobs / hashlib.sha256(logo).hexdigest()).read_bytes() == logo  # named as HF does
    second, third = fresh(tmp_path, lock, "lfs-offline"), fresh(tmp_path, lock, "lfs-warm")
    hub.reset_counts()
    install(second, stores=lambda _: HubStore(replace(settings, offline=True)), frozen=True)
    # online, the cached listing (it has no sha256) still vouches for the cached LFS blob
    install(third, stores=lambda _: HubStore(settings), frozen=True)
    assert hub.requests == [] and placed(second) == placed(first)
    assert placed(third) == placed(first)


def test_a_hostile_path_in_a_pinned_listing_is_refused_before_any_download(
        hub: FakeHub, settings: Settings, tmp_path: Path):
    lock = locked(hub, settings, tmp_path, ("alpha-skill",))
    entry = Lockfile.read(lock).entries["alpha-skill"]
    commit = hub.repo(entry.repo).commits[entry.sha]
    commit.files["references/../../escape.md"] = b"out\n"
    try:
        target = fresh(tmp_path, lock, "hostile")
        before = tree(target)
        hub.reset_counts()
        with pytest.raises(UnsafeSkill):
            install(target, stores=lambda _: HubStore(settings), frozen=True)
    finally:
        del commit.files["references/../../escape.md"]
    assert hub.count(path_contains="/resolve/") == 0 and tree(target) == before
    assert json.loads(lock.read_text())["skills"]["alpha-skill"]["sha"] == entry.sha


def placed(folder: Path) -> dict[str, str]:
    """What an install placed, without the markers (they hold the install time) or the record
    of the agent folders it made (their inodes)."""
    return {k: v for k, v in tree(folder / ".agents").items()
            if not k.endswith(MARKER_FILE) and k != ".hubskills-made.json"}


def _git_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
