"""The fake Hub speaks the protocol of the unmodified huggingface_hub and datasets clients."""

from __future__ import annotations

import os

# huggingface_hub reads these once, at import: set them before it is imported.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
import threading  # noqa: E402
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402
from pathlib import Path  # noqa: E402

import huggingface_hub  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import pytest  # noqa: E402
from fakes.hub_server import FakeHub, git_blob_oid  # noqa: E402
from huggingface_hub import CommitOperationAdd, HfApi  # noqa: E402
from huggingface_hub.errors import (  # noqa: E402
    HfHubHTTPError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

SKILL_README = """---
tags:
- agent-skill
- testing
license: mit
---
# Demo skill
"""


@pytest.fixture(scope="module")
def hub():
    if not huggingface_hub.constants.HF_HUB_DISABLE_XET:
        pytest.skip("HF_HUB_DISABLE_XET=1 must be set before huggingface_hub is imported")
    with FakeHub() as server:
        yield server


@pytest.fixture
def api(hub: FakeHub) -> HfApi:
    return HfApi(endpoint=hub.url, token=hub.token)


def _folder(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_create_repo_whoami_and_conflict(api: HfApi, hub: FakeHub):
    url = api.create_repo("tester/create-me")
    assert url == f"{hub.url}/tester/create-me"
    assert api.create_repo("tester/create-me", exist_ok=True) == url
    with pytest.raises(HfHubHTTPError) as err:
        api.create_repo("tester/create-me")
    assert err.value.response.status_code == 409
    assert api.whoami()["name"] == hub.user
    info = api.model_info("tester/create-me")
    assert [s.rfilename for s in info.siblings] == [".gitattributes"]
    ds_url = api.create_repo("create-ds", repo_type="dataset", private=True)
    assert ds_url == f"{hub.url}/datasets/tester/create-ds"
    assert api.dataset_info("tester/create-ds").private is True
    api.delete_repo("tester/create-ds", repo_type="dataset")
    with pytest.raises(RepositoryNotFoundError):
        api.dataset_info("tester/create-ds")


def test_writes_without_token_are_refused(api: HfApi, hub: FakeHub):
    api.create_repo("tester/no-token")
    anonymous = HfApi(endpoint=hub.url, token=False)
    with pytest.raises(HfHubHTTPError) as err:
        anonymous.upload_file(path_or_fileobj=b"x", path_in_repo="x.txt",
                              repo_id="tester/no-token")
    assert err.value.response.status_code == 401
    assert anonymous.model_info("tester/no-token").sha  # public reads need no token


def test_upload_folder_with_parent_commit_and_stale_parent(api: HfApi, hub: FakeHub, tmp_path):
    repo = "tester/skill-a"
    api.create_repo(repo)
    first = api.model_info(repo).sha
    folder = _folder(tmp_path / "v1", {"README.md": SKILL_README, "SKILL.md": "# A\n",
                                       "scripts/run.py": "print(1)\n"})
    hub.reset_counts()
    commit = api.upload_folder(repo_id=repo, folder_path=folder, commit_message="v1",
                               parent_commit=first)
    assert hub.count("POST", f"/api/models/{repo}/commit/main") == 1
    assert hub.count("POST", "/api/validate-yaml") >= 1  # the client validates twice
    assert commit.oid == api.model_info(repo).sha != first
    info = api.model_info(repo)
    assert sorted(s.rfilename for s in info.siblings) == [
        ".gitattributes", "README.md", "SKILL.md", "scripts/run.py"]
    assert info.tags == ["agent-skill", "testing"]
    assert info.card_data.license == "mit"

    (folder / "SKILL.md").write_text("# A, changed\n")
    with pytest.raises(HfHubHTTPError) as err:
        api.upload_folder(repo_id=repo, folder_path=folder, parent_commit=first)
    assert err.value.response.status_code == 412
    assert api.model_info(repo).sha == commit.oid


def test_unchanged_files_are_skipped_by_the_client(api: HfApi, hub: FakeHub):
    repo = "tester/skip-same"
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=b"same\n", path_in_repo="a.txt", repo_id=repo)
    head = api.model_info(repo).sha
    hub.reset_counts()
    api.upload_file(path_or_fileobj=b"same\n", path_in_repo="a.txt", repo_id=repo)
    assert hub.count("POST", "/commit/") == 0
    assert api.model_info(repo).sha == head
    [entry] = api.get_paths_info(repo, ["a.txt"])
    assert entry.blob_id == git_blob_oid(b"same\n") and entry.lfs is None


def test_tags_refs_commits_and_revisions(api: HfApi, hub: FakeHub):
    repo = "tester/tagged"
    api.create_repo(repo)
    v1 = api.upload_file(path_or_fileobj=b"one", path_in_repo="f.txt", repo_id=repo,
                         commit_message="first").oid
    api.create_tag(repo, tag="v1.0")
    v2 = api.upload_file(path_or_fileobj=b"two", path_in_repo="f.txt", repo_id=repo,
                         commit_message="second").oid
    api.create_tag(repo, tag="release/v2", revision=v2)
    with pytest.raises(HfHubHTTPError) as err:
        api.create_tag(repo, tag="v1.0", revision=v2)
    assert err.value.response.status_code == 409
    api.create_tag(repo, tag="v1.0", revision=v2, exist_ok=True)

    refs = api.list_repo_refs(repo)
    assert {t.name: t.target_commit for t in refs.tags} == {"v1.0": v1, "release/v2": v2}
    assert [(b.name, b.target_commit) for b in refs.branches] == [("main", v2)]
    commits = api.list_repo_commits(repo)
    assert [c.title for c in commits] == ["second", "first", "initial commit"]
    assert [c.commit_id for c in commits[:2]] == [v2, v1]

    assert api.model_info(repo, revision="v1.0").sha == v1
    assert api.model_info(repo, revision="release/v2").sha == v2
    assert api.model_info(repo, revision=v1).sha == v1
    assert [c.commit_id for c in api.list_repo_commits(repo, revision="v1.0")][0] == v1

    api.create_branch(repo, branch="dev", revision=v1)
    assert api.model_info(repo, revision="dev").sha == v1
    api.delete_tag(repo, tag="v1.0")
    assert [t.name for t in api.list_repo_refs(repo).tags] == ["release/v2"]


def test_list_models_filter_search_sort_and_card_data(api: HfApi, hub: FakeHub):
    for name, downloads in (("lister-alpha", 5), ("lister-beta", 50)):
        api.create_repo(f"tester/{name}")
        api.upload_file(path_or_fileobj=SKILL_README.encode(), path_in_repo="README.md",
                        repo_id=f"tester/{name}")
        hub.repo(f"tester/{name}").downloads = downloads
    api.create_repo("tester/lister-plain")

    found = list(api.list_models(filter="agent-skill", search="lister", cardData=True))
    assert {m.id for m in found} == {"tester/lister-alpha", "tester/lister-beta"}
    assert all(m.card_data is not None and "agent-skill" in m.card_data.tags for m in found)
    ranked = list(api.list_models(filter="agent-skill", search="lister", sort="downloads"))
    assert [m.id for m in ranked] == ["tester/lister-beta", "tester/lister-alpha"]
    assert [m.id for m in api.list_models(search="lister", sort="downloads", limit=1)] == [
        "tester/lister-beta"]
    assert {m.id for m in api.list_models(search="lister", author="tester")} == {
        "tester/lister-alpha", "tester/lister-beta", "tester/lister-plain"}
    assert list(api.list_models(search="lister", author="someone-else")) == []


def test_pagination_follows_link_header():
    with FakeHub(page_size=2) as small:
        api = HfApi(endpoint=small.url, token=small.token)
        api.create_repo("tester/paged")
        for i in range(4):
            api.upload_file(path_or_fileobj=b"%d" % i, path_in_repo=f"d/{i}.txt",
                            repo_id="tester/paged")
        assert len(api.list_repo_commits("tester/paged")) == 5
        assert small.count("GET", "/commits/") == 3
        files = api.list_repo_files("tester/paged")
        assert sorted(files) == [".gitattributes"] + [f"d/{i}.txt" for i in range(4)]


def test_snapshot_and_file_download(api: HfApi, hub: FakeHub, tmp_path):
    repo = "tester/downloadable"
    api.create_repo(repo)
    folder = _folder(tmp_path / "src", {"SKILL.md": "# D\n", "scripts/x.sh": "echo x\n"})
    sha = api.upload_folder(repo_id=repo, folder_path=folder).oid
    api.upload_file(path_or_fileobj=b"later", path_in_repo="later.txt", repo_id=repo)

    snap = Path(api.snapshot_download(repo, revision=sha, cache_dir=tmp_path / "cache"))
    assert snap.name == sha
    assert (snap / "SKILL.md").read_text() == "# D\n"
    assert (snap / "scripts/x.sh").read_text() == "echo x\n"
    assert not (snap / "later.txt").exists()

    path = api.hf_hub_download(repo, "later.txt", cache_dir=tmp_path / "cache")
    assert Path(path).read_bytes() == b"later"
    hub.reset_counts()
    again = api.hf_hub_download(repo, "later.txt", cache_dir=tmp_path / "cache")
    assert again == path and hub.count("GET", "/resolve/") == 0


def test_range_requests_and_headers(api: HfApi, hub: FakeHub):
    repo = "tester/ranges"
    api.create_repo(repo)
    sha = api.upload_file(path_or_fileobj=b"0123456789", path_in_repo="n.txt", repo_id=repo).oid
    request = urllib.request.Request(f"{hub.url}/{repo}/resolve/main/n.txt",
                                     headers={"Range": "bytes=2-4"})
    with urllib.request.urlopen(request) as response:
        assert response.status == 206 and response.read() == b"234"
        assert response.headers["Content-Range"] == "bytes 2-4/10"
        assert response.headers["X-Repo-Commit"] == sha
    meta = huggingface_hub.get_hf_file_metadata(
        huggingface_hub.hf_hub_url(repo, "n.txt", endpoint=hub.url), token=hub.token)
    assert (meta.commit_hash, meta.etag, meta.size) == (sha, git_blob_oid(b"0123456789"), 10)


def test_not_found_errors_map_to_client_exceptions(api: HfApi, hub: FakeHub, tmp_path):
    api.create_repo("tester/exists")
    with pytest.raises(RepositoryNotFoundError):
        api.model_info("tester/missing")
    with pytest.raises(RevisionNotFoundError):
        api.model_info("tester/exists", revision="no-such-tag")
    with pytest.raises(RemoteEntryNotFoundError):
        api.hf_hub_download("tester/exists", "nope.txt", cache_dir=tmp_path)
    with pytest.raises(RepositoryNotFoundError):
        api.hf_hub_download("tester/missing", "x.txt", cache_dir=tmp_path)
    with pytest.raises(RevisionNotFoundError):
        api.snapshot_download("tester/exists", revision="v9", cache_dir=tmp_path)


def test_fail_next_on_commit_reaches_a_retrying_caller(api: HfApi, hub: FakeHub):
    repo = "tester/flaky"
    api.create_repo(repo)
    hub.reset_counts()
    hub.fail_next(1, status=500, path_contains="/commit/")
    statuses = []
    for _attempt in range(3):
        try:
            api.create_commit(repo, [CommitOperationAdd("r.txt", b"run")], commit_message="run")
            break
        except HfHubHTTPError as err:
            statuses.append(err.response.status_code)
    assert statuses == [500]
    assert hub.count("POST", "/commit/") == 2
    assert "r.txt" in api.list_repo_files(repo)


def test_concurrent_appends_are_all_kept(api: HfApi, hub: FakeHub):
    repo = "tester/appends"
    api.create_repo(repo, repo_type="dataset")

    def writer(name: str) -> None:
        for i in range(5):
            api.create_commit(repo, [CommitOperationAdd(f"data/{name}-{i}.jsonl", b"{}\n")],
                              commit_message=f"{name} {i}", repo_type="dataset")

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    files = api.list_repo_files(repo, repo_type="dataset")
    assert len([f for f in files if f.startswith("data/")]) == 10
    assert len(api.list_repo_commits(repo, repo_type="dataset")) == 11


def test_fail_next_409_and_429(api: HfApi, hub: FakeHub):
    repo = "tester/conflicted"
    api.create_repo(repo)
    hub.fail_next(1, status=409, path_contains="/commit/")
    with pytest.raises(HfHubHTTPError) as err:
        api.create_commit(repo, [CommitOperationAdd("c.txt", b"c")], commit_message="c")
    assert err.value.response.status_code == 409
    hub.fail_next(1, status=429, path_contains=f"/api/models/{repo}/revision")
    with pytest.raises(HfHubHTTPError) as err:
        api.model_info(repo, revision="main")
    assert err.value.response.status_code == 429
    assert api.model_info(repo, revision="main").sha


def test_parquet_goes_through_lfs(api: HfApi, hub: FakeHub, tmp_path):
    repo = "tester/tables"
    api.create_repo(repo, repo_type="dataset")
    table_path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3]}), table_path)
    hub.reset_counts()
    api.upload_file(path_or_fileobj=str(table_path), path_in_repo="data/t.parquet",
                    repo_id=repo, repo_type="dataset")
    assert hub.count("POST", f"/datasets/{repo}.git/info/lfs/objects/batch") == 1
    assert hub.count("PUT", "/_lfs/") == 1
    [entry] = api.get_paths_info(repo, ["data/t.parquet"], repo_type="dataset")
    assert entry.lfs is not None and entry.lfs.size == table_path.stat().st_size
    local = api.hf_hub_download(repo, "data/t.parquet", repo_type="dataset",
                                cache_dir=tmp_path / "cache")
    assert pq.read_table(local).column("x").to_pylist() == [1, 2, 3]


DATASET_CARD = """---
configs:
- config_name: default
  data_files:
  - split: evals
    path: data/evals/**/*.jsonl
---
# Eval results
"""

LOAD_SCRIPT = textwrap.dedent("""
    import json, sys
    from datasets import load_dataset
    rows = load_dataset(sys.argv[1], split="evals").to_list()
    print(json.dumps(sorted(rows, key=lambda r: r["run"])))
""")


def test_load_dataset_reads_all_appended_runs(api: HfApi, hub: FakeHub, tmp_path):
    repo = "tester/evals"
    api.create_repo(repo, repo_type="dataset")
    api.upload_file(path_or_fileobj=DATASET_CARD.encode(), path_in_repo="README.md",
                    repo_id=repo, repo_type="dataset")
    for run, month in (("r1", "2025-01"), ("r2", "2025-02")):
        rows = "".join(json.dumps({"run": run, "score": s}) + "\n" for s in (0.5, 1.0))
        api.create_commit(repo, [CommitOperationAdd(f"data/evals/{month}/{run}.jsonl",
                                                    rows.encode())],
                          commit_message=f"run {run}", repo_type="dataset")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(HF_ENDPOINT=hub.url, HF_TOKEN=hub.token, HF_HUB_DISABLE_XET="1",
               HF_HUB_DISABLE_TELEMETRY="1", HF_HOME=str(tmp_path / "hf"),
               HF_DATASETS_CACHE=str(tmp_path / "datasets"))
    hub.reset_counts()
    done = subprocess.run([sys.executable, "-c", LOAD_SCRIPT, repo], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    assert [(r["run"], r["score"]) for r in rows] == [
        ("r1", 0.5), ("r1", 1.0), ("r2", 0.5), ("r2", 1.0)]
    assert hub.unhandled == []


def test_unknown_routes_are_recorded(hub: FakeHub):
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(f"{hub.url}/api/not-a-route")
    assert err.value.code == 404
    assert ("GET", "/api/not-a-route") in hub.unhandled
