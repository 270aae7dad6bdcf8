"""LocalStore specifics: seeding, the cross-process lock, atomic publish, fetch's path checks."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from registry.config import Settings
from registry.errors import HubskillsError, SkillNotFound, UnsafeSkill, VersionExists
from registry.format.skill import NAME_RE, content_hash, load_skill
from registry.registries import get_store, local_store
from registry.results.runs import ResultRow, RunManifest, RunWriter, read_manifest
from registry.scan import SizeLimits
from registry.stores import LocalStore
from registry.stores.frame import load_frame
from registry.stores.seed import default_seed_dir, seed_store

REPO_ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ("agent-skill-md", "hf-hub-python-2x", "kernel-builder-cuda-kernels")


def make_skill(root: Path, name: str, *, version: str = "1.0.0", body: str = "Do it.",
               files: dict[str, str] | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f'---\nname: {name}\ndescription: "Skill {name}. Use when testing."\n'
        f'metadata:\n  version: "{version}"\n---\n\n{body}\n')
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def record_run(runs_root: Path, run_id: str, skill: Path, *, skill_pass: bool = True) -> None:
    """A finished run folder as the eval engine writes it."""
    manifest = RunManifest(run_id=run_id, skill_name=skill.name, content_hash=content_hash(skill),
                           suite_hash="s", models=["local/m"])
    writer = RunWriter(runs_root, manifest)
    for case in range(3):
        for arm in ("baseline", "skill"):
            writer.add(ResultRow(run_id=run_id, skill_name=skill.name, model="local/m", arm=arm,
                                 case_id=f"c{case}", passed=skill_pass and arm == "skill"))
    writer.close("complete")


# --- seeding -----------------------------------------------------------------------------------


def test_seeds_the_shipped_skills_on_first_use(tmp_path: Path):
    store = local_store(Settings(home=tmp_path))
    expected = {f"hubskills/{p.name}" for p in (REPO_ROOT / "skills").iterdir()
                if p.is_dir() and NAME_RE.match(p.name) and (p / "SKILL.md").is_file()}
    assert {f"hubskills/{name}" for name in SHIPPED} <= expected
    infos = {i.repo: i for i in store.search()}
    assert set(infos) == expected
    for repo in expected:
        source = REPO_ROOT / "skills" / repo.split("/")[1]
        assert infos[repo].version == load_skill(source).version
        resolved = store.resolve(repo)
        dest = store.fetch(repo, resolved.sha, tmp_path / "out" / repo).folder
        assert content_hash(dest) == content_hash(source)
    assert store.seed_marker.is_file()


FIRST_ASKED = {
    "info": lambda store: store.info("hubskills/agent-skill-md").version,
    "fetch": lambda store: store.fetch("hubskills/agent-skill-md", "0" * 40, Path("unused")),
    "read_run": lambda store: store.results.read_run(store.results.run_files()[0].run_id),
}


@pytest.mark.parametrize("first", sorted(FIRST_ASKED))
def test_whatever_is_asked_first_of_a_fresh_registry_sees_the_examples(tmp_path: Path,
                                                                       first: str):
    """A fresh HUBSKILLS_HOME seeds on the first question of any kind, not only on a search
    (`hubskills info NS/NAME` or `verify` as a user's first command said "no such skill")."""
    store = local_store(Settings(home=tmp_path))
    try:
        FIRST_ASKED[first](store)
    except HubskillsError as err:  # fetch at an unknown sha: the skill is there, the sha not
        assert first == "fetch" and not isinstance(err, SkillNotFound), err
    assert store.seed_marker.is_file()


def test_seed_from_a_repo_root_with_runs(tmp_path: Path):
    skills = tmp_path / "skills"
    good = make_skill(skills, "alpha", version="2.1.0")
    make_skill(skills, "beta")
    make_skill(skills, ".hidden")
    make_skill(skills, "Bad_Name")
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("no frontmatter\n")
    record_run(skills / ".runs", "run-1", good)
    store = LocalStore(tmp_path / "store")
    report = seed_store(store, skills)
    assert sorted(report.published) == ["hubskills/alpha@2.1.0", "hubskills/beta@1.0.0"]
    assert report.runs == ["run-1"] and any("broken" in s for s in report.skipped)
    sha = store.resolve("hubskills/alpha").sha
    rows = store.read_results(skill="hubskills/alpha")
    assert len(rows) == 6
    assert {(r.skill_repo, r.skill_revision, r.skill_version) for r in rows} == {
        ("hubskills/alpha", sha, "2.1.0")}
    card = store.info("hubskills/alpha").card
    # seeded without settings, so not replayed: the card says so in its verified column
    assert ("| 2.1.0 | local/m | inline (user) | 3×1 | 0% | 100% | +100 [-80, +100] | 0.25 | "
            "too few cases (3) · unranked: unverified: not replayed yet | unverified | run-1 |"
            ) in card


def test_seed_is_idempotent(tmp_path: Path):
    skills = tmp_path / "skills"
    make_skill(skills, "alpha")
    record_run(skills / ".runs", "run-1", skills / "alpha")
    store = LocalStore(tmp_path / "store")
    assert seed_store(store, skills).published == ["hubskills/alpha@1.0.0"]
    assert seed_store(store, skills).already_seeded
    again = seed_store(store, skills, force=True)
    assert again.published == [] and again.runs == []  # nothing added, nothing counted
    assert again.skipped == ["hubskills/alpha@1.0.0: already published",
                             "run run-1: already seeded"]
    assert len(store.read_results()) == 6 and len(store.versions("hubskills/alpha")) == 1


def test_the_examples_are_found_and_seeding_without_them_says_so(tmp_path: Path):
    assert default_seed_dir() == REPO_ROOT / "skills"  # a source checkout
    store = LocalStore(tmp_path / "store")
    report = seed_store(store, None)  # an installed wheel: no examples shipped
    assert report.published == [] and "no example skills found" in report.skipped[0]
    assert "registry seed --from" in report.skipped[0] and store.seed_marker.is_file()


def test_auto_seed_happens_once_and_missing_skills_folder_is_fine(tmp_path: Path):
    store = LocalStore(tmp_path / "store", seed=lambda s: seed_store(s, tmp_path / "nothing"))
    assert store.search() == []
    assert json.loads((tmp_path / "store" / ".seeded").read_text())["published"] == []


# --- concurrency and atomicity -----------------------------------------------------------------

PUBLISHER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from registry.errors import VersionExists
    from registry.stores import LocalStore
    store = LocalStore(Path(sys.argv[1]))
    try:
        print(store.publish(Path(sys.argv[2]), repo="me/race", version=sys.argv[3]).sha)
    except VersionExists:
        print("exists")
""")


def _race(root: Path, jobs: list[tuple[Path, str]]) -> list[str]:
    procs = [subprocess.Popen([sys.executable, "-c", PUBLISHER, str(root), str(folder), version],
                              cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for folder, version in jobs]
    outputs = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr[-2000:]
        outputs.append(stdout.strip())
    return outputs


def test_two_processes_publish_two_versions_at_once(tmp_path: Path):
    one = make_skill(tmp_path / "a", "race", body="One.")
    two = make_skill(tmp_path / "b", "race", body="Two.")
    shas = _race(tmp_path / "store", [(one, "1.0.0"), (two, "1.1.0")])
    store = LocalStore(tmp_path / "store")
    versions = store.versions("me/race")
    assert [(v.version, v.sha) for v in versions] == [("1.1.0", shas[1]), ("1.0.0", shas[0])]
    refs = json.loads((tmp_path / "store/skills/me/race/refs.json").read_text())
    assert len(refs["history"]) == 2 and refs["main"] in shas


def test_two_processes_publishing_the_same_version_one_wins(tmp_path: Path):
    one = make_skill(tmp_path / "a", "race", body="One.")
    two = make_skill(tmp_path / "b", "race", body="Two.")
    outputs = _race(tmp_path / "store", [(one, "1.0.0"), (two, "1.0.0")])
    assert sorted(o == "exists" for o in outputs) == [False, True]
    assert len(LocalStore(tmp_path / "store").versions("me/race")) == 1


def test_a_failed_publish_leaves_no_partial_revision(tmp_path: Path):
    store = LocalStore(tmp_path / "store", limits=SizeLimits(max_total_bytes=2000))
    store.publish(make_skill(tmp_path / "ok", "atom"), repo="me/atom", version="1.0.0")
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / "store").rglob("*"))
    big = make_skill(tmp_path / "big", "atom", files={"references/huge.md": "x" * 5000})
    with pytest.raises(UnsafeSkill, match="bytes in total"):
        store.publish(big, repo="me/atom", version="1.1.0")
    after = sorted(p.relative_to(tmp_path) for p in (tmp_path / "store").rglob("*"))
    assert after == before
    assert [v.version for v in store.versions("me/atom")] == ["1.0.0"]
    with pytest.raises(UnsafeSkill):
        store.publish(big, repo="me/fresh", version="1.0.0")
    with pytest.raises(SkillNotFound):
        store.versions("me/fresh")
    assert not list((tmp_path / "store/skills/me/fresh/revisions").iterdir())


def test_a_published_version_cannot_be_overwritten(tmp_path: Path):
    store = LocalStore(tmp_path / "store")
    store.publish(make_skill(tmp_path, "same"), repo="me/same", version="1.0.0")
    with pytest.raises(VersionExists):
        store.publish(make_skill(tmp_path / "b", "same", body="Other."), repo="me/same",
                      version="v1.0.0")


# --- fetch -------------------------------------------------------------------------------------


def _published(tmp_path: Path) -> tuple[LocalStore, str, Path]:
    store = LocalStore(tmp_path / "store")
    sha = store.publish(make_skill(tmp_path / "src", "fetchy", files={"references/a.md": "A\n"}),
                        repo="me/fetchy", version="1.0.0").sha
    return store, sha, tmp_path / "store/skills/me/fetchy/revisions" / sha


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/../../x", "a\\b", ".git/config",
                                 "references/.git/hooks/x", "C:/x", ""])
def test_fetch_refuses_an_unsafe_path_in_a_revision(tmp_path: Path, bad: str):
    store, sha, rev = _published(tmp_path)
    tree = json.loads((rev / "tree.json").read_text())
    tree["files"].append({"path": bad, "sha256": "0" * 64, "size": 1})
    (rev / "tree.json").write_text(json.dumps(tree))
    dest = tmp_path / "dest"
    with pytest.raises(UnsafeSkill):
        store.fetch("me/fetchy", sha, dest)
    assert not (tmp_path / "x").exists() and not any(dest.glob("**/*"))


def test_fetch_refuses_tampered_files_and_links(tmp_path: Path):
    store, sha, rev = _published(tmp_path)
    (rev / "files/references/a.md").write_text("changed\n")
    with pytest.raises(UnsafeSkill, match="digest"):
        store.fetch("me/fetchy", sha, tmp_path / "d1")
    (rev / "files/references/a.md").unlink()
    (rev / "files/references/a.md").symlink_to("/etc/hostname")
    with pytest.raises(UnsafeSkill, match="regular file"):
        store.fetch("me/fetchy", sha, tmp_path / "d2")


def test_fetch_counts_downloads_and_needs_an_empty_folder(tmp_path: Path):
    store, sha, _ = _published(tmp_path)
    store.fetch("me/fetchy", sha, tmp_path / "d1")
    store.fetch("me/fetchy", sha, tmp_path / "d2")
    assert store.info("me/fetchy").downloads == 2
    with pytest.raises(HubskillsError, match="not empty"):
        store.fetch("me/fetchy", sha, tmp_path / "d1")


# --- results frame and store selection ---------------------------------------------------------


def test_results_frame_cache_follows_the_files(tmp_path: Path):
    runs = tmp_path / "runs"
    skill = make_skill(tmp_path / "src", "framed")
    store = LocalStore(tmp_path / "store")
    for n in range(3):
        record_run(runs, f"r{n}", skill)
        store.append_results(read_manifest(runs, f"r{n}"),
                             [ResultRow.model_validate_json(line) for line in
                              (runs / f"r{n}" / "rows.jsonl").read_text().splitlines()])
        assert len(store.results_frame()) == 6 * (n + 1)
    shards = list((tmp_path / "store/cache/frame").glob("*.parquet"))
    shards[0].write_bytes(b"not parquet")
    assert len(store.results_frame()) == 18
    frame = store.results_frame()
    assert str(frame["passed"].dtype) == "boolean" and frame["passed"].mean() == 0.5


def test_appends_keep_the_frame_cache_to_a_few_shards(tmp_path: Path):
    store = LocalStore(tmp_path / "store")
    for n in range(40):
        manifest = RunManifest(run_id=f"r{n:02d}", skill_name="s", content_hash="sha256:x",
                               suite_hash="s", models=["m"])
        store.append_results(manifest, [ResultRow(run_id=f"r{n:02d}", skill_name="s", model="m",
                                                  arm="skill", case_id="c", passed=n % 2 == 0)])
    shards = list((tmp_path / "store/cache/frame").glob("*.parquet"))
    assert len(shards) == 2 + 8  # two merged shards of 16 runs, eight single-run shards
    frame = store.results_frame()
    assert sorted(frame["run_id"].astype(str)) == [f"r{n:02d}" for n in range(40)]
    assert frame["passed"].sum() == 20


def test_frame_skips_torn_lines(tmp_path: Path):
    good = ResultRow(run_id="r", skill_name="s", model="m", arm="skill", case_id="c", passed=True)
    path = tmp_path / "r.jsonl"
    path.write_text(good.model_dump_json() + "\n" + '{"run_id": "r", "skill_na')
    frame = load_frame({"r.jsonl:1": lambda: path}, tmp_path / "cache")
    assert list(frame["run_id"]) == ["r"]


def test_get_store_defaults_to_the_seeded_local_store(tmp_path: Path):
    settings = Settings(home=tmp_path / "home")
    store = get_store(settings)
    assert isinstance(store, LocalStore) and store.root == settings.store_dir
    assert store.default_namespace() == "local"
    with pytest.raises(HubskillsError) as err:
        get_store(settings, "ftp")
    assert "--registry local" in (err.value.hint or "")


def test_rows_that_do_not_validate_are_counted_and_named(tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture):
    store = LocalStore(tmp_path / "store")
    manifest = RunManifest(run_id="r1", skill_name="s", content_hash="sha256:x", suite_hash="s",
                           models=["m"])
    rows = [ResultRow(run_id="r1", skill_name="s", model="m", arm="skill", case_id=f"c{i}",
                      passed=True) for i in range(3)]
    file = store.dataset_dir / store.append_results(manifest, rows).path
    lines = file.read_text().splitlines()
    lines[1:1] = ['{"run_id": "r1", "passed": "not a row"}', '["not", "an", "object"]']
    file.write_text("\n".join(lines) + '\n{"run_id": "r1", "torn')
    with caplog.at_level(logging.INFO, logger="registry.results.runs"):
        assert [r.case_id for r in store.read_results()] == ["c0", "c1", "c2"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{file}:2: skipped 2 result row(s)")
    assert "(lines 2, 3)" in warnings[0]
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert any(f"{file}:6: skipped a torn last row" in m for m in infos)


def test_a_local_dataset_has_no_pull_requests_and_says_so(tmp_path: Path):
    results = LocalStore(tmp_path / "store").results
    assert results.pending() == [] and results.pending_run_files() == []
    assert results.open_pull_requests() == []
    for refused in (lambda: results.admit(1, {}), lambda: results.comment(1, "hi"),
                    lambda: results.comments(1), lambda: results.close(1, "no")):
        with pytest.raises(HubskillsError) as err:
            refused()
        assert "no pull requests" in str(err.value) and "review pending" in (err.value.hint or "")
    with pytest.raises(HubskillsError) as err:
        results.read_run("r1", "refs/pr/1")
    assert "no revisions" in str(err.value)


def test_a_seeded_card_says_the_badge_its_replay_earned():
    """The first use seeds the example runs and replays them: `leaderboard` said `replayed`
    while the card (`info --json`, the registry's README) still said "unverified: not
    replayed yet", written before the replays. The cards are written after them."""
    store = get_store(Settings.from_env())
    card = store.info("hubskills/agent-skill-md").card
    [line] = [row for row in card.splitlines() if row.startswith("| 1.1.0 |")]
    assert "not replayed yet" not in line and "| replayed |" in line, line
