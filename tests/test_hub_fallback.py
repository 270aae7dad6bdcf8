"""FallbackStore (the Hub, then the local registry when the Hub cannot answer) and the size limit
that HubStore.fetch enforces before any download, on the fake Hub over real HTTP.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.errors import RegistryUnavailable, SkillNotFound, UnsafeSkill  # noqa: E402
from registry.format.skill import content_hash  # noqa: E402
from registry.registries import get_store  # noqa: E402
from registry.scan import SizeLimits  # noqa: E402
from registry.stores import FallbackStore, LocalStore  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from tests.fakes.hub_server import FakeHub  # noqa: E402
from tests.hub_setup import online_hub  # noqa: E402
from tests.test_hub import closed_port_url  # noqa: E402
from tests.test_store_contract import make_skill  # noqa: E402


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeHub]:
    yield from online_hub()


def hub_store(fake: FakeHub, home: Path, *, offline: bool = False,
              endpoint: str | None = None) -> HubStore:
    return HubStore(Settings(home=home, hf_endpoint=endpoint or fake.url, hf_token=fake.token,
                             namespace="tester", results_repo="tester/evals", offline=offline))


@pytest.fixture
def local(tmp_path: Path) -> LocalStore:
    store = LocalStore(tmp_path / "local")
    store.publish(make_skill(tmp_path / "lsrc", "both"), repo="tester/both", version="1.0.0")
    return store


def test_online_the_hub_answers_and_the_fallback_is_never_built(fake: FakeHub, tmp_path: Path):
    primary = hub_store(fake, tmp_path / "h")
    folder = make_skill(tmp_path / "src", "online")
    published = primary.publish(folder, repo="tester/online", version="1.0.0")
    built = []
    store = FallbackStore(primary, lambda: built.append(1) or LocalStore(tmp_path / "x"))
    resolved = store.resolve("tester/online")
    assert (resolved.sha, resolved.notes, resolved.registry) == (published.sha, (), None)
    fetched = store.fetch("tester/online", resolved.sha, tmp_path / "out")
    assert content_hash(fetched.folder) == content_hash(folder) == fetched.reported_hash
    with pytest.raises(SkillNotFound):  # an answer, not unavailability: never masked
        store.resolve("tester/not-there")
    assert built == []


def test_offline_the_local_registry_answers_with_a_note(fake: FakeHub, tmp_path: Path,
                                                        local: LocalStore):
    store = FallbackStore(hub_store(fake, tmp_path / "h", offline=True), lambda: local)
    fake.reset_counts()
    resolved = store.resolve("tester/both")
    assert resolved.sha == local.resolve("tester/both").sha and resolved.registry == "local"
    assert any("offline" in n and "using the local registry" in n for n in resolved.notes)
    fetched = store.fetch("tester/both", resolved.sha, tmp_path / "out")
    assert (fetched.folder / "SKILL.md").is_file()
    assert fake.requests == []  # offline means offline: not one request
    with pytest.raises(RegistryUnavailable, match="not in the HF cache"):
        store.resolve("tester/only-on-the-hub")


def test_unreachable_falls_back_and_says_so(fake: FakeHub, tmp_path: Path, local: LocalStore):
    primary = hub_store(fake, tmp_path / "h", endpoint=closed_port_url())
    resolved = FallbackStore(primary, lambda: local).resolve("tester/both", "1.0.0")
    assert resolved.version == "1.0.0"
    assert any("unreachable" in n and "local registry" in n for n in resolved.notes)


def test_writes_and_browsing_never_fall_back(fake: FakeHub, tmp_path: Path, local: LocalStore):
    store = FallbackStore(hub_store(fake, tmp_path / "h", offline=True), lambda: local)
    with pytest.raises(RegistryUnavailable):
        store.search("both")
    with pytest.raises(RegistryUnavailable):
        store.publish(make_skill(tmp_path / "p", "pub"), repo="tester/pub", version="1.0.0")
    assert [i.repo for i in local.search("pub")] == []
    assert store.results is store.primary.results  # the results are the primary's alone
    for results_call in (store.check_writable, store.results_frame, store.change_token):
        with pytest.raises(RegistryUnavailable):
            results_call()


def test_get_store_composes_the_fallback_for_pulls_only(tmp_path: Path):
    settings = Settings(home=tmp_path, registry="hub")
    assert isinstance(get_store(settings), HubStore)
    pulls = get_store(settings, offline_fallback=True)
    assert isinstance(pulls, FallbackStore) and pulls.kind == "hub"
    assert isinstance(get_store(settings, "local", offline_fallback=True), LocalStore)


def test_the_size_limit_refuses_before_any_download(fake: FakeHub, tmp_path: Path):
    store = hub_store(fake, tmp_path / "h")
    folder = make_skill(tmp_path / "src", "sized", files={"references/big.md": "x" * 5000})
    sha = store.publish(folder, repo="tester/sized", version="1.0.0").sha
    fake.reset_counts()
    dest = tmp_path / "out"
    with pytest.raises(UnsafeSkill, match=r"references/big.md is 5000 bytes \(max 4000"):
        store.fetch("tester/sized", sha, dest, limits=SizeLimits(max_file_bytes=4000))
    with pytest.raises(UnsafeSkill, match="the skill has 2 files"):
        store.fetch("tester/sized", sha, dest, limits=SizeLimits(max_files=1))
    assert fake.count(path_contains="/resolve/") == 0 and not dest.exists()
    local = LocalStore(tmp_path / "local")
    local_sha = local.publish(folder, repo="tester/sized", version="1.0.0").sha
    with pytest.raises(UnsafeSkill, match="bytes in total"):
        local.fetch("tester/sized", local_sha, dest, limits=SizeLimits(max_total_bytes=3000))
    assert not dest.exists()


def test_size_limits_budget_counts_files_bytes_and_total():
    budget = SizeLimits(max_file_bytes=10, max_total_bytes=15, max_files=2).budget()
    budget.take("a", 10)
    with pytest.raises(UnsafeSkill, match="over 15 bytes in total"):
        budget.take("b", 6)
    counted = SizeLimits(max_files=2).budget()
    counted.take("f0", 1)
    counted.take("f1", 1)
    with pytest.raises(UnsafeSkill, match="more than 2 files"):
        counted.take("f2", 1)
    with pytest.raises(UnsafeSkill, match="c is 11 bytes"):
        SizeLimits(max_file_bytes=10).check([("c", 11)])
