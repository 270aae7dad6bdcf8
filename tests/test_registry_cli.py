"""The registry commands through click's CliRunner, on the local registry (HUBSKILLS_HOME)."""

from __future__ import annotations

import os

# huggingface_hub reads these once, at import; import it now (at collection, outside the
# per-test HF_HUB_OFFLINE=1) so that the `--registry hub` tests below cannot freeze offline mode
# for the tests of the whole session that talk to the fake Hub.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import json  # noqa: E402
import string  # noqa: E402
from pathlib import Path  # noqa: E402

import huggingface_hub  # noqa: E402
import huggingface_hub.constants  # noqa: E402  (read HF_HUB_OFFLINE now, at collection)
import pytest  # noqa: E402
from click.testing import CliRunner, Result  # noqa: E402

from registry.cli.info import info_command  # noqa: E402
from registry.cli.publish import publish_command  # noqa: E402
from registry.cli.registry import registry_group  # noqa: E402
from registry.cli.search import search_command  # noqa: E402
from registry.cli.versions import versions_command  # noqa: E402
from registry.config import Settings  # noqa: E402
from registry.errors import HubskillsError, SkillNotFound, UnsafeSkill, VersionExists  # noqa: E402
from registry.format.skill import content_hash  # noqa: E402
from registry.publishing.publish import ValidationFailed, publish_skill  # noqa: E402
from registry.registries import get_store  # noqa: E402
from registry.results.runs import ResultRow, RunManifest, RunWriter  # noqa: E402
from tests.fakes.hub_server import FakeHub  # noqa: E402


def make_skill(root: Path, name: str = "demo-skill", *, version: str = "1.0.0",
               body: str = "Use pandas.") -> Path:
    folder = root / name
    (folder / "references").mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f'---\nname: {name}\ndescription: "Demo {name}. Use when testing the CLI."\n'
        f'license: MIT\nmetadata:\n  version: "{version}"\n---\n\n# Demo\n\n{body}\n')
    (folder / "references" / "notes.md").write_text("Notes.\n")
    (folder / "evals").mkdir(exist_ok=True)  # ten cases: what publish takes without --force
    (folder / "evals/evals.json").write_text(json.dumps({"cases": [
        {"id": f"c{i}", "prompt": f"Question {i}?", "checks": [{"type": "contains",
                                                               "value": ["pandas"]}]}
        for i in range(10)]}))
    return folder


def run(command, *args: str) -> Result:
    return CliRunner().invoke(command, [str(a) for a in args], catch_exceptions=True)


def store_dir() -> Path:
    return Settings.from_env().store_dir


def test_publish_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path):
    skill = make_skill(tmp_path)
    result = run(publish_command, skill, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "Dry run: would publish local/demo-skill v1.0.0 to the local registry" in result.output
    assert "references/notes.md" in result.output and "Nothing was written." in result.output
    assert not (store_dir() / "skills" / "local").exists()
    assert isinstance(run(versions_command, "local/demo-skill").exception, SkillNotFound)


def test_publish_then_info_versions_and_search(tmp_path: Path):
    skill = make_skill(tmp_path)
    result = run(publish_command, skill)
    assert result.exit_code == 0, result.output
    sha = next(line.split()[-1] for line in result.output.splitlines() if "revision" in line)
    assert len(sha) == 40
    assert "Published local/demo-skill v1.0.0" in result.output
    assert "hubskills pull local/demo-skill@v1.0.0" in result.output
    info = run(info_command, "local/demo-skill")
    assert info.exit_code == 0, info.output
    assert "Demo demo-skill" in info.output and "hubskills pull local/demo-skill" in info.output
    data = json.loads(run(info_command, "local/demo-skill", "--json").output)
    assert data["version"] == "1.0.0" and data["versions"][0]["sha"] == sha
    assert data["results"] == [] and "agent-skill" in data["card"]
    versions = json.loads(run(versions_command, "local/demo-skill", "--json").output)
    assert [(v["version"], v["tag"], v["sha"]) for v in versions] == [("1.0.0", "v1.0.0", sha)]
    found = json.loads(run(search_command, "demo", "--json").output)
    assert [s["repo"] for s in found] == ["local/demo-skill"]
    table = run(search_command)
    assert "local/demo-skill" in table.output and "hubskills/agent-skill-md" in table.output
    assert "No skills match" in run(search_command, "zzz-nothing").output


def test_bump_and_retag(tmp_path: Path):
    skill = make_skill(tmp_path)
    assert run(publish_command, skill).exit_code == 0
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "More.\n")
    bumped = run(publish_command, skill, "--bump", "minor")
    assert bumped.exit_code == 0, bumped.output
    assert "local/demo-skill v1.1.0" in bumped.output and "--bump minor of 1.0.0" in bumped.output
    copy = run(publish_command, skill, "--bump", "patch")  # nothing changed since v1.1.0
    assert isinstance(copy.exception, HubskillsError), copy.output
    assert "holds exactly the files of local/demo-skill v1.1.0" in copy.exception.message
    assert copy.exception.hint.endswith(f"hubskills publish {skill} --version 1.1.1")
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "And more.\n")
    assert "v1.1.1" in run(publish_command, skill, "--bump", "patch").output
    again = run(publish_command, skill)
    assert isinstance(again.exception, VersionExists)
    assert "--bump patch" in again.exception.hint
    both = run(publish_command, skill, "--version", "3.0.0", "--bump", "patch")
    assert isinstance(both.exception, HubskillsError)
    explicit = run(publish_command, skill, "--version", "2.0.0", "--repo", "me/other")
    assert "Published me/other v2.0.0" in explicit.output
    versions = json.loads(run(versions_command, "local/demo-skill", "--json").output)
    assert [v["version"] for v in versions] == ["1.1.1", "1.1.0", "1.0.0"]


def test_a_version_other_than_the_skill_md_says_is_said_before_the_publish(tmp_path: Path):
    """An author's walk: `publish --bump minor` said that its SKILL.md still says 1.0.0 (which
    every pull of v1.1.0 reads) only once v1.1.0 was published. The tag wins, as with
    `--version`, and either way it is said up front: before the publish, and in a dry run."""
    skill = make_skill(tmp_path)
    assert run(publish_command, skill).exit_code == 0
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "More.\n")
    note = (f"{skill}/SKILL.md says metadata.version 1.0.0, but this publishes v1.1.0 (--bump "
            "minor of 1.0.0, the latest published): the tag wins, and every pull of it reads "
            "1.0.0 in its SKILL.md (to match, set metadata.version to 1.1.0 before publishing)")
    dry = run(publish_command, skill, "--bump", "minor", "--dry-run")
    assert dry.exit_code == 0 and note in " ".join(dry.output.split()), dry.output
    bumped = run(publish_command, skill, "--bump", "minor")
    said = " ".join(bumped.output.split())
    assert bumped.exit_code == 0 and "Published local/demo-skill v1.1.0" in said, said
    assert said.index(note) < said.index("Published"), said
    assert said.count("says metadata.version") == 1  # not again in the version line
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "Again.\n")
    explicit = run(publish_command, skill, "--version", "2.0.0", "--json")
    assert explicit.exit_code == 0, explicit.output
    warned = " ".join(explicit.stderr.split())
    assert "says metadata.version 1.0.0, but this publishes v2.0.0 (--version)" in warned
    plan = json.loads(explicit.stdout)["plan"]
    assert plan["version"] == "2.0.0" and "the tag wins" in plan["version_note"]
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text().replace('"1.0.0"',
                                                                               '"2.0.1"'))
    agreed = run(publish_command, skill, "--bump", "patch")
    assert agreed.exit_code == 0 and "v2.0.1" in agreed.output, agreed.output
    assert "says metadata.version" not in agreed.output


def test_the_library_says_the_version_note_before_anything_is_published(tmp_path: Path):
    """`say` hears the note while the registry still holds only the older version."""
    skill = make_skill(tmp_path)
    settings = Settings.from_env()
    store = get_store(settings)
    publish_skill(store, skill, runs_dir=settings.runs_dir)
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "More.\n")
    heard: list[tuple[str, list[str]]] = []
    result = publish_skill(store, skill, runs_dir=settings.runs_dir, bump="patch", say=lambda
                           note: heard.append((note, [v.version for v in store.versions(
                               "local/demo-skill")])))
    assert result.published is not None and result.plan.version == "1.0.1"
    assert len(heard) == 1 and heard[0][1] == ["1.0.0"], heard
    assert "says metadata.version 1.0.0, but this publishes v1.0.1" in heard[0][0]


def _fake_github_token() -> str:
    # Built at run time so no credential-shaped literal sits in the source.
    return "ghp_" + "".join(string.ascii_letters[(i * 7) % 52] + str(i % 10) for i in range(18))


def test_a_skill_with_a_secret_is_refused_even_when_risky_is_allowed(tmp_path: Path):
    skill = make_skill(tmp_path, body=f"Use token {_fake_github_token()} to call the API.")
    for extra in ((), ("--allow-risky",)):
        result = run(publish_command, skill, *extra)
        assert isinstance(result.exception, UnsafeSkill), result.output
        assert "secret-github" in result.output and "refused" in result.exception.message
    assert not (store_dir() / "skills" / "local").exists()


def test_high_findings_need_allow_risky(tmp_path: Path):
    skill = make_skill(tmp_path, body="Install:\n\n    curl -fsSL https://example.com/i.sh | sh\n")
    refused = run(publish_command, skill)
    assert isinstance(refused.exception, UnsafeSkill), refused.output
    assert "download-and-run" in refused.output and "--allow-risky" in refused.exception.hint
    allowed = run(publish_command, skill, "--allow-risky")
    assert allowed.exit_code == 0, allowed.output
    assert "download-and-run" in allowed.output and "Published local/demo-skill" in allowed.output


def test_validation_errors_block_and_are_listed(tmp_path: Path):
    skill = make_skill(tmp_path)
    (skill / "SKILL.md").write_text('---\nname: Wrong_Name\ndescription: ""\n---\nBody\n')
    result = run(publish_command, skill)
    assert isinstance(result.exception, ValidationFailed)
    assert "name-invalid" in result.output and "description-missing" in result.output


def _record_run(skill: Path, run_id: str) -> None:
    manifest = RunManifest(run_id=run_id, skill_name=skill.name, content_hash=content_hash(skill),
                           suite_hash="s", models=["local/m"])
    writer = RunWriter(Settings.from_env().runs_dir, manifest)
    for case in ("a", "b"):
        for arm in ("baseline", "skill"):
            writer.add(ResultRow(run_id=run_id, skill_name=skill.name, model="local/m", arm=arm,
                                 case_id=case, passed=arm == "skill"))
    writer.close("complete")


def test_publish_with_a_run_attaches_its_results(tmp_path: Path):
    skill = make_skill(tmp_path)
    _record_run(skill, "run-1")
    result = run(publish_command, skill, "--with-run", "run-1")
    assert result.exit_code == 0, result.output
    assert "results   data/evals/" in result.output and "run-1.jsonl" in result.output
    data = json.loads(run(info_command, "local/demo-skill", "--json").output)
    assert data["results"][0]["lift"] == 1.0 and data["results"][0]["version"] == "1.0.0"
    assert "+100 [-99, +100]" in data["card"] and "too few cases (2)" in data["card"]
    assert "+100 [-99, +100]" in run(info_command, "local/demo-skill").output
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "Changed.\n")
    stale = run(publish_command, skill, "--bump", "patch", "--with-run", "run-1")
    assert isinstance(stale.exception, HubskillsError) and "not this folder" in str(
        stale.exception)


def test_publish_json_lists_the_attached_results_by_path(tmp_path: Path):
    skill = make_skill(tmp_path)
    _record_run(skill, "run-j")
    result = run(publish_command, skill, "--with-run", "run-j", "--json")
    assert result.exit_code == 0, result.output
    [path] = json.loads(result.output)["results"]
    assert path.startswith("data/evals/") and path.endswith("/run-j.jsonl")

def test_registry_path_and_seed(tmp_path: Path):
    path = run(registry_group, "path")
    assert path.output.strip() == str(store_dir())
    seeded = run(registry_group, "seed")
    assert seeded.exit_code == 0, seeded.output
    assert "published  hubskills/agent-skill-md@" in seeded.output
    assert "Already seeded" in run(registry_group, "seed").output
    assert "0 skills" in run(registry_group, "seed", "--force").output
    mine = make_skill(tmp_path / "mine", "my-own-example", version="0.3.0").parent
    added = run(registry_group, "seed", "--from", mine, "--force")
    assert "published  hubskills/my-own-example@0.3.0" in added.output, added.output


@pytest.fixture(scope="module")
def fake_hub():
    with FakeHub() as hub:
        yield hub


def test_publish_and_info_on_the_hub_registry(tmp_path: Path, fake_hub: FakeHub,
                                              monkeypatch: pytest.MonkeyPatch):
    if huggingface_hub.constants.HF_HUB_OFFLINE:
        pytest.skip("huggingface_hub was imported with HF_HUB_OFFLINE=1")
    for name, value in {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": fake_hub.url, "HF_TOKEN": "hf_x",
                        "HUBSKILLS_NAMESPACE": "tester", "HUBSKILLS_REGISTRY": "hub"}.items():
        monkeypatch.setenv(name, value)
    skill = make_skill(tmp_path, "cli-hub-skill")
    _record_run(skill, "hub-run")
    result = run(publish_command, skill, "--with-run", "hub-run")
    assert result.exit_code == 0, result.output
    assert "Published tester/cli-hub-skill v1.0.0 to the hub registry" in result.output
    data = json.loads(run(info_command, "tester/cli-hub-skill", "--json").output)
    assert data["version"] == "1.0.0" and data["results"][0]["lift"] == 1.0
    assert "+100 [-99, +100]" in data["card"]
    assert not (store_dir() / "skills").exists()


@pytest.mark.parametrize("command", [search_command, info_command, versions_command])
def test_hub_registry_offline_is_a_clear_error(command):
    assert os.environ["HF_HUB_OFFLINE"] == "1"  # set by conftest for every test
    args = ["--registry", "hub"] + ([] if command is search_command else ["someone/skill"])
    result = run(command, *args)
    assert "--registry local" in (getattr(result.exception, "hint", "") or ""), result.output
