"""One `SkillVersionRef` says which published version a run belongs to, wherever it starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer
from test_verify import FAST, knows_fact_if_told, make_skill

from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.format.version_ref import SkillVersionRef
from registry.install.identity import identify
from registry.registries import get_store
from space.evaluate_run import EvalRequest, evaluate
from space.state import SpaceState

REPO = "local/zorblax-ports"


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HUBSKILLS_NAMESPACE", "local")
    return Settings.from_env()


def test_a_folder_is_identified_as_the_published_version_its_content_is(tmp_path, settings):
    skill = make_skill(tmp_path, with_python=False)
    store = get_store(settings)
    assert identify(skill, store) is None  # not published yet: no version to file results under
    store.publish(skill, repo=REPO, version="2.0.0")
    found = identify(skill, store)
    assert found is not None
    assert (found.repo, found.revision, found.version) == (
        REPO, store.resolve(REPO).sha, "2.0.0")


def test_a_folder_published_under_another_namespace_is_found_by_its_name(tmp_path, settings):
    """A walk: after `publish csv-cleaning --repo acme/csv-cleaning`, `eval --push` said the
    folder matched no published version, and its hint would have published a second skill.
    Another repo of the same name whose content differs is not taken for it."""
    skill = make_skill(tmp_path, with_python=False)
    name = skill.name
    store = get_store(settings)
    other = make_skill(tmp_path / "other", with_python=False)
    (other / "SKILL.md").write_text((other / "SKILL.md").read_text() + "\nAnother text.\n")
    store.publish(other, repo=f"aaa/{name}", version="1.0.0")
    assert identify(skill, store) is None
    store.publish(skill, repo=f"acme/{name}", version="0.2.0")
    found = identify(skill, store)
    assert found is not None and (found.repo, found.version) == (f"acme/{name}", "0.2.0")
    assert identify(skill, store, repo=f"aaa/{name}") is None  # --repo names the only one
    store.publish(skill, repo=f"0copy/{name}", version="9.0.0")  # republished, sorting first
    with pytest.raises(HubskillsError, match=f"latest published version of 2 skills: "
                                             f"0copy/{name}, acme/{name}; hubskills does not "
                                             "guess"):
        identify(skill, store)  # a review: the copy's namespace was taken
    assert identify(skill, store, repo=f"acme/{name}").repo == f"acme/{name}"


def test_the_space_files_a_registry_run_under_its_repo_revision_and_version(tmp_path, settings):
    skill = make_skill(tmp_path, with_python=False)  # SKILL.md names no version of its own
    store = get_store(settings)
    store.publish(skill, repo=REPO, version="2.0.0")
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        config = EvalConfig(models=["local/fake-student"], runs=1, retry=FAST,
                            base_url=server.url)
        run = evaluate(SpaceState(settings), EvalRequest(REPO, [], config), settings)
    published = SkillVersionRef(REPO, store.resolve(REPO).sha, "2.0.0")
    manifest = run.manifest
    assert (manifest.skill_repo, manifest.skill_revision, manifest.skill_version) == (
        published.repo, published.revision, published.version)
    assert {(r.skill_repo, r.skill_revision, r.skill_version) for r in run.rows} == {
        (published.repo, published.revision, published.version)}
