"""A run is replayed against the files of the published version it names, never against any
commit its sha reaches: on the Hub anyone can open a pull request on someone else's skill repo,
and its commit can be fetched by sha like any other (a red-team walk filed a run made against
such a commit under the owner's skill, had it merged as `verified`, and replaced the owner's
entry on the board)."""

from __future__ import annotations

import os

import pytest
from fakes.openai_server import FakeOpenAIServer
from huggingface_hub import CommitOperationAdd, HfApi
from review_setup import MALLORY, SKILL
from spot_setup import evaluate, fake_hub
from test_verify import FAST, edit_manifest, knows_fact_if_told, make_skill, verify

from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.format.version_ref import SkillVersionRef
from registry.publishing.push import push_saved_run
from registry.registries import get_store
from registry.stores.hub import HubStore
from registry.verify.admission import merge_submission, replay_pending


@pytest.fixture
def hub(monkeypatch):
    yield from fake_hub(monkeypatch, users={"mallory": MALLORY})


@pytest.fixture
def local(monkeypatch):
    """The test's home with the local registry, and the fake model."""
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        monkeypatch.setenv("HUBSKILLS_BASE_URL", server.url)
        yield Settings.from_env()


def test_a_run_at_a_pull_requests_commit_of_someone_elses_skill_is_never_admitted(
        hub, tmp_path):
    settings = Settings.from_env()
    boss = HubStore(settings)
    push_saved_run(boss, settings.runs_dir, evaluate(tmp_path), settings=settings)
    files = hub.repo(SKILL, "model").head.files
    folder = tmp_path / "mallory" / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(files["SKILL.md"].replace(b"4417", b"4418"))
    (folder / "evals" / "evals.json").write_bytes(files["evals/evals.json"])
    opened = HfApi(endpoint=hub.url, token=MALLORY).create_commit(
        SKILL, [CommitOperationAdd("SKILL.md", (folder / "SKILL.md").read_bytes())],
        commit_message="typo", create_pr=True)
    pr_sha = hub.repo(SKILL, "model").pulls[int(opened.pr_url.rsplit("/", 1)[1])].oid
    mallory = Settings.from_env({**os.environ, "HF_TOKEN": MALLORY,
                                 "HUBSKILLS_HOME": str(tmp_path / "mallory-home")})
    for version in (None, "1.0.0"):  # versionless, or passed off as boss's v1.0.0
        made = run_evaluation(folder, EvalConfig(models=["local/fake-student"], runs=1,
                                                 retry=FAST), mallory,
                              published=SkillVersionRef(SKILL, pr_sha, version))
        pushed = push_saved_run(HubStore(mallory), mallory.runs_dir, made.manifest.run_id,
                                settings=mallory)
        assert pushed.pending
        [check] = [c for c in replay_pending(boss, settings, comment=False)
                   if c.run_id == made.manifest.run_id]
        assert check.status == ("not replayable" if version is None else "mismatch")
        assert "no published version" in check.first_problem if version is None else \
            "v1.0.0 is revision" in check.first_problem, check.first_problem
        with pytest.raises(HubskillsError, match="not merged|is not replayable|mismatch"):
            merge_submission(boss, settings, int(pushed.pr_url.rsplit("/", 1)[1]))


def test_a_run_filed_under_a_version_must_name_that_versions_revision(local, tmp_path):
    skill = make_skill(tmp_path, with_python=False)
    store = get_store(local)
    store.publish(skill, repo="local/zorblax-ports", version="1.0.0")
    first = store.resolve("local/zorblax-ports").sha
    made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1, retry=FAST),
                          local, published=SkillVersionRef("local/zorblax-ports", first,
                                                              "1.0.0"))
    folder = local.runs_dir / made.manifest.run_id
    assert verify(local, folder).status == "verified"
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nMore.\n")
    second = store.publish(skill, repo="local/zorblax-ports", version="1.1.0").sha
    edit_manifest(folder, skill_version="1.1.0")  # v1.1.0's label on v1.0.0's files
    report = verify(local, folder)
    assert report.status == "mismatch"
    assert report.problems == [
        f"the run files itself under local/zorblax-ports v1.1.0, but names revision "
        f"{first[:12]}, and v1.1.0 is revision {second[:12]}: results are checked against "
        "the files a published version holds"]
    edit_manifest(folder, skill_version="9.9.9")
    assert "and local/zorblax-ports has no v9.9.9" in verify(local, folder).problems[0]
