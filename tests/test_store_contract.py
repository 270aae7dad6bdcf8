"""One contract for every `SkillStore`: LocalStore, HubStore on the fake Hub, and the real Hub.

The real-Hub variant (`-m real_hub`) runs only when HUBSKILLS_TEST_TOKEN is set; it creates
private repos whose names carry a random suffix and deletes them afterwards. pytest-socket
blocks non-local hosts, so run it with `-o addopts="" -m real_hub`.
"""

from __future__ import annotations

import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import huggingface_hub  # noqa: E402
import huggingface_hub.constants  # noqa: E402  (read HF_HUB_OFFLINE now, at collection)
import pytest  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.errors import (  # noqa: E402
    MissingCredentials,
    SkillNotFound,
    VersionExists,
    VersionNotFound,
)
from registry.format.skill import content_hash  # noqa: E402
from registry.results.runs import CheckVerdict, ResultRow, RunManifest  # noqa: E402
from registry.stores import LocalStore, SkillStore  # noqa: E402
from registry.stores.base import Appended, ResultsDataset, SkillRepos  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from tests.fakes.hub_server import FakeHub  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
TOKEN_VAR = "HUBSKILLS_TEST_TOKEN"


def build_store(spec: dict) -> SkillStore:
    """A store from a JSON-able spec, so a subprocess can build the same one."""
    if spec["kind"] == "local":
        return LocalStore(Path(spec["root"]))
    settings = Settings(home=Path(spec["home"]), hf_endpoint=spec["endpoint"],
                        hf_token=spec["token"], namespace=spec["namespace"],
                        results_repo=spec["results_repo"])
    return HubStore(settings)


@dataclass
class Backend:
    """A store under test plus what the tests need to talk about it."""

    name: str
    spec: dict
    ns: str
    uid: str
    tmp: Path
    env: dict[str, str]
    hub: FakeHub | None = None
    private: bool = False
    store: SkillStore = field(init=False)

    def __post_init__(self) -> None:
        self.store = build_store(self.spec)

    def repo(self, name: str) -> str:
        return f"{self.ns}/{name}-{self.uid}"


@pytest.fixture(scope="session")
def fake_hub() -> Iterator[FakeHub]:
    with FakeHub() as hub:
        yield hub


def _hub_env(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Online settings for this test and its subprocesses (conftest sets HF_HUB_OFFLINE=1)."""
    if huggingface_hub.constants.HF_HUB_OFFLINE or not huggingface_hub.constants.HF_HUB_DISABLE_XET:
        pytest.skip("huggingface_hub was imported with HF_HUB_OFFLINE=1 or without "
                    "HF_HUB_DISABLE_XET=1; it reads both once, at import")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(HF_HUB_OFFLINE="0", HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1",
               HF_HOME=str(tmp / "hf-home"), HF_DATASETS_CACHE=str(tmp / "hf-datasets"))
    return env


@pytest.fixture(params=["local", "hub", pytest.param("real_hub", marks=pytest.mark.real_hub)])
def backend(request: pytest.FixtureRequest, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    uid = uuid.uuid4().hex[:8]
    if request.param == "local":
        env = dict(os.environ, HF_HOME=str(tmp_path / "hf-home"),
                   HF_DATASETS_CACHE=str(tmp_path / "hf-datasets"))
        yield Backend("local", {"kind": "local", "root": str(tmp_path / "store")}, "local",
                      uid, tmp_path, env)
        return
    if request.param == "real_hub" and not os.environ.get(TOKEN_VAR):
        pytest.skip(f"{TOKEN_VAR} is not set")
    env = _hub_env(tmp_path, monkeypatch)
    if request.param == "hub":
        hub: FakeHub = request.getfixturevalue("fake_hub")
        spec = {"kind": "hub", "home": str(tmp_path / "home"), "endpoint": hub.url,
                "token": "hf_test", "namespace": "tester",
                "results_repo": f"tester/evals-{uid}"}
        env.update(HF_ENDPOINT=hub.url, HF_TOKEN="hf_test")
        yield Backend("hub", spec, "tester", uid, tmp_path, env, hub=hub)
        return
    token = os.environ[TOKEN_VAR]
    ns = os.environ.get("HUBSKILLS_TEST_NAMESPACE") or huggingface_hub.HfApi(
        token=token).whoami()["name"]
    spec = {"kind": "hub", "home": str(tmp_path / "home"), "endpoint": "https://huggingface.co",
            "token": token, "namespace": ns, "results_repo": f"{ns}/hubskills-test-evals-{uid}"}
    env.update(HF_TOKEN=token)
    yield Backend("real_hub", spec, ns, uid, tmp_path, env, private=True)
    _delete_real_hub_repos(token, ns, uid)


def _delete_real_hub_repos(token: str, ns: str, uid: str) -> None:
    api = huggingface_hub.HfApi(token=token)
    for model in api.list_models(author=ns, search=uid):
        api.delete_repo(model.id, missing_ok=True)
    api.delete_repo(f"{ns}/hubskills-test-evals-{uid}", repo_type="dataset", missing_ok=True)


def make_skill(root: Path, name: str, *, version: str = "1.2.0", extra: str = "",
               files: dict[str, str] | None = None) -> Path:
    """A valid skill folder `root/name`."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f'---\nname: {name}\ndescription: "Demo skill {name}. Use when testing stores."\n'
        f'license: MIT\nmetadata:\n  version: "{version}"\n---\n\n# {name}\n\nDo it.{extra}\n')
    for rel, text in (files or {"references/notes.md": "Notes.\n"}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _publish(backend: Backend, folder: Path, repo: str, version: str):
    return backend.store.publish(folder, repo=repo, version=version, private=backend.private)


# --- skills ------------------------------------------------------------------------------------


def test_publish_resolve_and_fetch_round_trip(backend: Backend, tmp_path: Path):
    repo = backend.repo("demo")
    folder = make_skill(tmp_path / "src", "demo-skill")
    published = _publish(backend, folder, repo, "1.2.0")
    assert (published.repo, published.version, published.tag) == (repo, "1.2.0", "v1.2.0")
    assert len(published.sha) == 40
    assert [(v.version, v.tag, v.sha) for v in backend.store.versions(repo)] == [
        ("1.2.0", "v1.2.0", published.sha)]
    for ref in (None, "latest", "v1.2.0", "1.2.0", "main", published.sha, published.sha[:7]):
        resolved = backend.store.resolve(repo, ref)
        assert (resolved.sha, resolved.version) == (published.sha, "1.2.0"), ref
    fetched = backend.store.fetch(repo, published.sha, tmp_path / "fetched")
    dest = fetched.folder
    assert sorted(fetched.files) == sorted(_tree(folder))
    assert fetched.reported_hash == content_hash(folder)
    assert _tree(dest) == _tree(folder)
    assert content_hash(dest) == content_hash(folder)
    assert not (dest / "README.md").exists() and not (dest / ".gitattributes").exists()


def test_new_version_replaces_files_and_old_version_stays(backend: Backend, tmp_path: Path):
    repo = backend.repo("evolve")
    folder = make_skill(tmp_path / "v1", "evolve", files={"references/old.md": "old\n"})
    first = _publish(backend, folder, repo, "1.2.0")
    folder2 = make_skill(tmp_path / "v2", "evolve", extra=" Better.",
                         files={"references/new.md": "new\n"})
    second = _publish(backend, folder2, repo, "1.10.0")
    assert [v.version for v in backend.store.versions(repo)] == ["1.10.0", "1.2.0"]
    assert backend.store.resolve(repo).sha == second.sha
    assert backend.store.resolve(repo, "v1.2.0").sha == first.sha
    new = backend.store.fetch(repo, second.sha, tmp_path / "new").folder
    old = backend.store.fetch(repo, first.sha, tmp_path / "old").folder
    assert _tree(new) == _tree(folder2) and _tree(old) == _tree(folder)


def test_search_and_info(backend: Backend, tmp_path: Path):
    repo = backend.repo("findme")
    _publish(backend, make_skill(tmp_path, "findme"), repo, "1.2.0")
    found = [i for i in backend.store.search(backend.uid) if i.repo == repo]
    assert len(found) == 1
    assert found[0].name == "findme" and found[0].version == "1.2.0"
    assert "agent-skill" in found[0].tags and found[0].description.startswith("Demo skill")
    info = backend.store.info(repo)
    assert info.version == "1.2.0" and info.license == "MIT"
    assert [v.version for v in info.versions] == ["1.2.0"]
    assert f"hubskills pull {repo}" in info.card and "agent-skill" in info.card


def test_existing_version_is_never_retagged(backend: Backend, tmp_path: Path):
    repo = backend.repo("retag")
    folder = make_skill(tmp_path, "retag")
    _publish(backend, folder, repo, "1.0.0")
    with pytest.raises(VersionExists) as err:
        _publish(backend, make_skill(tmp_path / "b", "retag", extra=" Changed."), repo, "1.0.0")
    assert "--bump patch" in (err.value.hint or "")
    assert [v.version for v in backend.store.versions(repo)] == ["1.0.0"]


def test_unknown_skill_and_unknown_version_have_hints(backend: Backend, tmp_path: Path):
    missing = backend.repo("nothing-here")
    for call in (lambda: backend.store.resolve(missing), lambda: backend.store.versions(missing),
                 lambda: backend.store.info(missing)):
        with pytest.raises(SkillNotFound) as err:
            call()
        assert "hubskills search" in (err.value.hint or "")
    repo = backend.repo("known")
    _publish(backend, make_skill(tmp_path, "known"), repo, "1.2.0")
    for ref in ("9.9.9", "v0.0.1", "deadbee", "no-such-branch"):
        with pytest.raises(VersionNotFound) as err:
            backend.store.resolve(repo, ref)
        assert err.value.hint == f"hubskills versions {repo}"


def test_top_level_readme_is_the_skills_own_nested_is_kept(backend: Backend, tmp_path: Path):
    folder = make_skill(tmp_path, "readme", files={"README.md": "mine\n"})
    published = _publish(backend, folder, backend.repo("readme"), "1.0.0")
    dest = backend.store.fetch(backend.repo("readme"), published.sha, tmp_path / "own").folder
    assert (dest / "README.md").read_text() == "mine\n"  # not the card
    folder = make_skill(tmp_path / "b", "readme", files={"references/README.md": "mine\n"})
    repo = backend.repo("readme2")
    published = _publish(backend, folder, repo, "1.0.0")
    dest = backend.store.fetch(repo, published.sha, tmp_path / "out").folder
    assert (dest / "references/README.md").read_text() == "mine\n"


def test_stale_parent_commit_is_retried(backend: Backend, tmp_path: Path):
    if backend.hub is None:
        pytest.skip("only the fake Hub can inject a stale parent commit")
    repo = backend.repo("stale")
    backend.hub.fail_next(1, 412, path_contains=f"/api/models/{repo}/commit/")
    published = _publish(backend, make_skill(tmp_path, "stale"), repo, "1.0.0")
    assert backend.hub.count("POST", f"/api/models/{repo}/commit/") == 2
    assert backend.store.resolve(repo, "v1.0.0").sha == published.sha


def test_missing_token_names_the_variable(backend: Backend, tmp_path: Path):
    if backend.name == "local":
        pytest.skip("the local registry needs no credentials")
    if huggingface_hub.get_token():
        pytest.skip("a Hugging Face token is stored on this machine (hf auth login)")
    spec = {**backend.spec, "token": None}
    store = build_store(spec)
    with pytest.raises(MissingCredentials) as err:
        store.publish(make_skill(tmp_path, "notoken"), repo=backend.repo("notoken"),
                      version="1.0.0")
    assert err.value.variable == "HF_TOKEN" and "hf auth login" in (err.value.hint or "")
    with pytest.raises(MissingCredentials):
        store.append_results(*_run(backend, "notoken-run", 1))
    with pytest.raises(MissingCredentials):
        store.results.check_writable()  # asked before a run, without a call


# --- results -----------------------------------------------------------------------------------


def _run(backend: Backend, run_id: str, cases: int, *, repo: str | None = None,
         skill_pass: bool = True, baseline_pass: bool = False) -> tuple[RunManifest,
                                                                        list[ResultRow]]:
    repo = repo or backend.repo("results")
    manifest = RunManifest(run_id=run_id, skill_name="results", skill_repo=repo,
                           skill_revision="a" * 40, content_hash="sha256:abc", suite_hash="s",
                           models=["local/m"], started_at="2026-01-15T10:00:00+00:00")
    rows = [ResultRow(run_id=run_id, skill_name="other", skill_repo="wrong/repo", model="local/m",
                      arm=arm, case_id=f"c{i}", passed=skill_pass if arm == "skill"
                      else baseline_pass, output="x" * 50)
            for i in range(cases) for arm in ("baseline", "skill")]
    return manifest, rows


def test_rows_carry_the_manifest_identity_and_reappend_is_a_noop(backend: Backend):
    manifest, rows = _run(backend, f"run-{backend.uid}", 3)
    appended = backend.store.append_results(manifest, rows)
    assert appended == Appended(f"data/evals/2026-01/run-{backend.uid}.jsonl", pr_url=None)
    assert backend.store.append_results(manifest, rows) == appended
    got = backend.store.read_results()
    assert len(got) == 6
    assert {(r.skill_name, r.skill_repo, r.skill_revision) for r in got} == {
        ("results", backend.repo("results"), "a" * 40)}
    assert len(backend.store.read_results(skill=backend.repo("results"))) == 6
    assert backend.store.read_results(skill="someone/else") == []
    frame = backend.store.results_frame()
    assert len(frame) == 6 and "output" not in frame.columns
    assert frame["passed"].astype("float64").mean() == 0.5


WORKER = textwrap.dedent("""
    import json, sys
    from tests.test_store_contract import append_runs
    append_runs(json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
""")


def append_runs(spec: dict, prefix: str, count: int) -> None:
    """Append `count` runs of 3 cases x 2 arms (runs in a worker process)."""
    store = build_store(spec)
    for i in range(count):
        run_id = f"{prefix}-{i:02d}"
        manifest = RunManifest(run_id=run_id, skill_name="demo", skill_repo=spec["repo"],
                               content_hash="sha256:abc", suite_hash="s", models=["m"],
                               started_at=f"2026-0{1 + i % 2}-15T10:00:00+00:00")
        rows = [ResultRow(run_id=run_id, skill_name="demo", model="m", arm=arm, case_id=f"c{c}",
                          passed=arm == "skill") for c in range(3) for arm in ("baseline", "skill")]
        if i % 2:  # columns that are all null in other runs' files
            rows[0] = rows[0].model_copy(update={
                "passed": None, "error": "timeout", "cost_usd": 0.25, "skill_loaded": True,
                "checks": [CheckVerdict(type="contains", label="x", passed=True)]})
        store.append_results(manifest, rows)


LOAD = textwrap.dedent("""
    import json, sys
    from datasets import load_dataset
    kind, target, cache = sys.argv[1], sys.argv[2], sys.argv[3]
    ds = load_dataset(target, split="evals", cache_dir=cache)
    if kind == "local":  # the local folder is a dataset repo; the json builder reads it too
        from datasets import Features
        from registry.stores.dataset import results_features
        again = load_dataset("json", data_files={"evals": target + "/data/evals/**/*.jsonl"},
                             split="evals", cache_dir=cache + "-json",
                             features=Features._from_yaml_list(results_features()))
        assert sorted(again["run_id"]) == sorted(ds["run_id"])
    print(json.dumps(sorted({row["run_id"] for row in ds})), len(ds))
""")


def test_results_from_two_processes_at_once_lose_nothing(backend: Backend):
    spec = {**backend.spec, "repo": backend.repo("demo")}
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, json.dumps(spec), f"p{n}", "10"],
                                cwd=REPO_ROOT, env=backend.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for n in (1, 2)]
    for worker in workers:
        _, stderr = worker.communicate(timeout=300)
        assert worker.returncode == 0, stderr[-3000:]
    rows = backend.store.read_results()
    expected = sorted(f"p{n}-{i:02d}" for n in (1, 2) for i in range(10))
    assert len(rows) == 20 * 6 and sorted({r.run_id for r in rows}) == expected
    frame = backend.store.results_frame()
    assert len(frame) == 120 and frame["error"].notna().sum() == 10
    assert frame["cost_usd"].sum() == pytest.approx(2.5)
    target = backend.store.dataset_source()  # what `registry.results_dataset` loads
    assert target == (str(backend.store.dataset_dir) if isinstance(backend.store, LocalStore)
                      else backend.spec["results_repo"])
    kind = "local" if isinstance(backend.store, LocalStore) else "hub"
    done = subprocess.run([sys.executable, "-c", LOAD, kind, target,
                           str(backend.tmp / "ds-cache")], cwd=REPO_ROOT, env=backend.env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    ids, count = done.stdout.strip().splitlines()[-1].rsplit(" ", 1)
    assert json.loads(ids) == expected and int(count) == 120


def test_search_by_lift_uses_the_results(backend: Backend, tmp_path: Path):
    low, high = backend.repo("lift-low"), backend.repo("lift-high")
    for repo in (low, high):
        _publish(backend, make_skill(tmp_path / repo.split("/")[1], "lifty"), repo, "1.0.0")
    backend.store.append_results(*_run(backend, f"lo-{backend.uid}", 4, repo=low,
                                       skill_pass=False, baseline_pass=False))
    backend.store.append_results(*_run(backend, f"hi-{backend.uid}", 4, repo=high))
    ranked = [i.repo for i in backend.store.search(backend.uid, sort="lift")]
    assert ranked[:2] == [high, low]
    reverse = backend.store.search(backend.uid, sort="lift", lift_key=lambda frame, badges: {
        (low, "1.0.0"): 1.0, (high, "1.0.0"): 0.0, (high, "0.9.0"): 2.0})  # 0.9.0: not listed
    assert [i.repo for i in reverse][:2] == [low, high]


def test_change_token_moves_with_a_push_and_a_publish_and_not_otherwise(backend: Backend,
                                                                         tmp_path: Path):
    store = backend.store
    repo = backend.repo("token")
    _publish(backend, make_skill(tmp_path / "token", "token"), repo, "1.0.0")
    before = store.change_token()
    assert store.change_token() == before  # nothing written: the same token
    store.info(repo)  # reads and downloads do not count
    store.results_frame()
    assert store.change_token() == before
    store.append_results(*_run(backend, f"tok-{backend.uid}", 2, repo=repo))
    pushed = store.change_token()
    assert pushed[0] != before[0] and pushed[1] == before[1]
    _publish(backend, make_skill(tmp_path / "token2", "token", version="1.1.0"), repo, "1.1.0")
    published = store.change_token()
    assert published[0] == pushed[0] and published[1] != pushed[1]


def test_every_store_exposes_its_results_dataset_the_same_way(backend: Backend):
    store = backend.store
    assert isinstance(store, SkillRepos) and isinstance(store.results, ResultsDataset)
    if backend.name == "local":
        mine = "local"
    elif backend.hub is not None:
        mine = backend.hub.user
    else:
        mine = huggingface_hub.HfApi(token=backend.spec["token"]).whoami()["name"]
    assert store.results.producer() == mine  # who wrote it: "local", or the token's user
    assert store.results.source() == store.dataset_source()
    assert store.results.pending() == [] and store.results.pending_run_files() == []
    assert store.results.read_run(f"none-{backend.uid}") is None
    before = store.results.change_token()
    manifest, rows = _run(backend, f"rr-{backend.uid}", 2)
    appended = store.results.append(manifest, rows)
    assert appended.pr_url is None and store.results.change_token() != before
    assert store.change_token()[0] == store.results.change_token()
    data = store.results.read_run(manifest.run_id)
    assert data is not None and len(data.splitlines()) == 4
    [run] = [r for r in store.results.run_files() if r.run_id == manifest.run_id]
    assert run.path == appended.path


def test_verification_records_are_kept_beside_the_runs(backend: Backend):
    results = backend.store.results
    manifest, rows = _run(backend, f"rec-{backend.uid}", 1)
    results.append(manifest, rows)
    [run] = [r for r in results.run_files() if r.run_id == manifest.run_id]
    record = {"kind": "replay", "run_id": run.run_id, "rows_hash": run.rows_hash,
              "status": "verified", "verified_at": "2026-01-16T10:00:00+00:00"}
    before = backend.store.change_token()
    path = results.append_record(record)
    assert path.startswith(f"verifications/2026-01/{run.run_id}--")
    assert [r for r in results.records() if r["run_id"] == run.run_id] == [record]
    assert backend.store.change_token() != before  # a new badge: whoever caches the board rereads
