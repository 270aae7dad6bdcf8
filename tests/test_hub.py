"""registry.hub: the one error translator, the one probe, and the only huggingface_hub importer.

Every case talks real HTTP to the fake Hub (or to a closed port on 127.0.0.1) through the
unmodified client; the typed error carries the repo id, and the edge maps it to the user error
with a hint naming the next command.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import re  # noqa: E402
import socket  # noqa: E402
from pathlib import Path  # noqa: E402

import huggingface_hub.constants  # noqa: E402
import pytest  # noqa: E402

from registry import hub  # noqa: E402
from registry.config import Settings  # noqa: E402
from registry.errors import (  # noqa: E402
    MissingCredentials,
    RegistryError,
    RegistryUnavailable,
    SkillNotFound,
    VersionNotFound,
)
from registry.hub import HubClient, user_error, user_errors  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from tests.fakes.hub_server import FakeHub  # noqa: E402
from tests.hub_setup import online_hub  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeHub]:
    yield from online_hub()


@pytest.fixture
def client(fake: FakeHub, tmp_path: Path) -> HubClient:
    return HubClient(fake.url, fake.token, tmp_path / "cache")


def closed_port_url() -> str:
    """An endpoint on 127.0.0.1 nobody listens on: every request fails to connect."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


def test_missing_repo_is_typed_then_a_skill_not_found_naming_the_repo(client: HubClient):
    with pytest.raises(hub.RepoNotFound) as typed:
        client.refs("tester/no-such-skill")
    assert typed.value.repo_id == "tester/no-such-skill" and typed.value.status == 404
    assert isinstance(typed.value.__cause__, huggingface_hub.errors.RepositoryNotFoundError)
    mapped = user_error(typed.value)
    assert isinstance(mapped, SkillNotFound)
    assert "tester/no-such-skill" in mapped.message
    assert mapped.hint.startswith("hubskills search no-such-skill")


def test_the_edge_maps_and_chains(client: HubClient):
    with pytest.raises(SkillNotFound) as err, user_errors():
        client.repo_info("tester/absent", files=True)
    assert isinstance(err.value.__cause__, hub.RepoNotFound)
    with pytest.raises(RegistryError, match="no results dataset 'tester/evals'") as err, \
            user_errors():
        client.repo_info("tester/evals", repo_type="dataset")
    assert "HUBSKILLS_RESULTS_REPO" in err.value.hint


def test_missing_revision_and_file(client: HubClient, fake: FakeHub):
    fake.create_repo("tester/has-main")
    with pytest.raises(hub.RevisionNotFound) as typed:
        client.repo_info("tester/has-main", "v9.9.9")
    assert (typed.value.repo_id, typed.value.revision) == ("tester/has-main", "v9.9.9")
    mapped = user_error(typed.value)
    assert isinstance(mapped, VersionNotFound)
    assert mapped.hint == "hubskills versions tester/has-main"
    with pytest.raises(hub.EntryNotFound):
        client.download("tester/has-main", "README.md")


def test_stale_parent_and_conflict_are_typed(client: HubClient, fake: FakeHub):
    fake.create_repo("tester/racy")
    head = client.repo_info("tester/racy").sha
    sha = client.commit("tester/racy", {"a.md": b"a\n"}, message="one", parent=head)
    with pytest.raises(hub.StaleParent) as stale:
        client.commit("tester/racy", {"b.md": b"b\n"}, message="two", parent=head)
    assert stale.value.status == 412 and stale.value.repo_id == "tester/racy"
    client.create_tag("tester/racy", "v1.0.0", sha)
    with pytest.raises(hub.Conflict):
        client.create_tag("tester/racy", "v1.0.0", sha)


def test_no_token_is_missing_credentials(fake: FakeHub, tmp_path: Path):
    if huggingface_hub.get_token():
        pytest.skip("a Hugging Face token is stored on this machine (hf auth login)")
    anonymous = HubClient(fake.url, None, tmp_path)
    with pytest.raises(hub.AuthFailed) as typed:
        anonymous.create_repo("tester/anon")
    mapped = user_error(typed.value)
    assert isinstance(mapped, MissingCredentials) and mapped.variable == "HF_TOKEN"


def test_unreachable_endpoint_is_typed_and_unavailable(tmp_path: Path):
    url = closed_port_url()
    with pytest.raises(hub.Unreachable) as typed:
        HubClient(url, "hf_x", tmp_path).refs("tester/any")
    assert typed.value.repo_id == "tester/any" and "unreachable" in typed.value.message
    assert isinstance(user_error(typed.value), RegistryUnavailable)
    assert hub.reachable(url, timeout=1.0) is False


def test_the_probe_says_yes_to_a_live_endpoint(fake: FakeHub):
    fake.reset_counts()
    assert hub.reachable(fake.url) is True
    assert len(fake.requests) == 1


def test_search_refuses_fast_when_the_probe_fails(tmp_path: Path):
    store = HubStore(Settings(home=tmp_path, hf_endpoint=closed_port_url(), hf_token="hf_x"))
    with pytest.raises(RegistryUnavailable, match="unreachable") as err:
        store.search("anything")
    assert "--registry local" in err.value.hint


def test_stored_token_is_what_the_client_would_send(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HF_TOKEN", "hf_from_the_environment")
    assert hub.stored_token() == "hf_from_the_environment"


def test_only_registry_hub_imports_huggingface_hub():
    importing = re.compile(r"^\s*(?:from|import)\s+huggingface_hub\b", re.M)
    offenders = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "registry").rglob("*.py")
                       if importing.search(p.read_text(encoding="utf-8"))
                       and "hub" not in p.relative_to(ROOT / "registry").parts[:1])
    assert offenders == []


def test_publish_retries_a_busy_hub_and_refuses_a_taken_tag(fake: FakeHub, tmp_path: Path):
    from tests.test_store_contract import make_skill

    store = HubStore(Settings(home=tmp_path, hf_endpoint=fake.url, hf_token=fake.token,
                              namespace="tester", results_repo="tester/busy-evals"))
    fake.fail_next(1, 503, path_contains="/api/models/tester/busy/commit/")
    published = store.publish(make_skill(tmp_path / "a", "busy"), repo="tester/busy",
                              version="1.0.0")
    assert fake.count("POST", "/api/models/tester/busy/commit/") == 2
    assert store.resolve("tester/busy", "1.0.0").sha == published.sha
    fake.fail_next(1, 500, path_contains="/api/models/tester/busy/refs")
    with pytest.raises(RegistryError, match="answered 500") as err:
        store.versions("tester/busy")
    assert isinstance(err.value.__cause__, hub.HubError) and err.value.hint
