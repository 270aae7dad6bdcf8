"""registry.stores.listings: a commit's listing is asked of the Hub once, a moving name's every
time, and a kept listing says exactly what a new one would (against the fake Hub, over HTTP).

Also the bounded replay's child giving way to the visitors (`bounded.give_way`), which the
Space's p95 bench (bench/space_replay.py) measures.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from registry.hub import EntryNotFound, HubClient  # noqa: E402
from registry.stores.listings import KEPT, CommitListings  # noqa: E402
from registry.verify.bounded import NICE, give_way  # noqa: E402
from tests.fakes.hub_server import FakeHub  # noqa: E402
from tests.hub_setup import online_hub  # noqa: E402

REPO = "tester/evals"
FILES = {"data/evals/a.jsonl": b'{"a": 1}\n', "data/evals/b.jsonl": b'{"b": 2}\n',
         "README.md": b"# evals\n"}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeHub]:
    yield from online_hub()


@pytest.fixture
def client(fake: FakeHub, tmp_path: Path) -> HubClient:
    client = HubClient(fake.url, fake.token, tmp_path / "cache")
    client.create_repo(REPO, repo_type="dataset")
    client.commit(REPO, FILES, message="runs", repo_type="dataset")
    return client


def head(client: HubClient) -> str:
    return client.repo_info(REPO, repo_type="dataset").sha


def test_a_commit_is_listed_once_and_a_folder_comes_from_its_whole_listing(
        fake: FakeHub, client: HubClient):
    listings, sha = CommitListings(client), head(client)
    fake.reset_counts()
    whole = listings.tree(REPO, None, sha)
    assert sorted(f.path for f in whole) == sorted([".gitattributes", *FILES])
    assert listings.tree(REPO, None, sha) == whole
    folder = listings.tree(REPO, "data/evals", sha)
    assert fake.count("GET", "/tree/") == 1
    assert folder == client.tree(REPO, "data/evals", sha, repo_type="dataset")
    assert sorted(f.path for f in folder) == ["data/evals/a.jsonl", "data/evals/b.jsonl"]


def test_a_name_that_moves_is_asked_every_time_and_sees_the_new_commit(
        fake: FakeHub, client: HubClient):
    listings = CommitListings(client)
    before = listings.tree(REPO, "data/evals", "main")
    client.commit(REPO, {"data/evals/c.jsonl": b"{}\n"}, message="one more", repo_type="dataset")
    fake.reset_counts()
    after = listings.tree(REPO, "data/evals", "main")
    assert fake.count("GET", "/tree/") == 1
    assert len(after) == len(before) + 1
    assert len(listings.tree(REPO, "data/evals", head(client))) == len(after)


def test_a_folder_a_commit_lacks_stays_lacking_and_is_asked_once(fake: FakeHub,
                                                                  client: HubClient):
    listings, sha = CommitListings(client), head(client)
    fake.reset_counts()
    for _ in range(3):
        with pytest.raises(EntryNotFound):
            listings.tree(REPO, "verifications", sha)
    assert fake.count("GET", "/tree/") == 1
    listings.tree(REPO, None, sha)  # the whole listing kept: still lacking, still raised
    with pytest.raises(EntryNotFound):
        listings.tree(REPO, "verifications", sha)


def test_a_history_by_commit_is_asked_once_and_only_the_last_listings_are_kept(
        fake: FakeHub, client: HubClient):
    listings, sha = CommitListings(client), head(client)
    fake.reset_counts()
    first = listings.history(REPO, sha, limit=10)
    assert listings.history(REPO, sha, limit=10) == first and first[0] == sha
    assert fake.count("GET", "/commits/") == 1
    shas = [client.commit(REPO, {f"n/{i}": b"x"}, message=str(i), repo_type="dataset")
            for i in range(KEPT)]
    for commit in shas:
        listings.history(REPO, commit, limit=1)
    fake.reset_counts()
    listings.history(REPO, sha, limit=10)  # the oldest, let go
    listings.history(REPO, shas[-1], limit=1)  # the newest, kept
    assert fake.count("GET", "/commits/") == 1


def test_the_replay_child_gives_way_to_the_visitors():
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE, start_new_session=True)
    try:
        give_way(child.pid)
        stat = Path(f"/proc/{child.pid}/stat")
        if not stat.is_file():
            pytest.skip("no /proc: the nice value cannot be read back here")
        assert int(stat.read_text().rsplit(")", 1)[1].split()[16]) == NICE
        group = Path(f"/proc/{child.pid}/autogroup")
        if group.is_file():
            assert group.read_text().split()[-1] == str(NICE)
    finally:
        child.communicate(b"")
