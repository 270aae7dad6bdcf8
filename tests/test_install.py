"""Pull, install, update, remove and list against a LocalStore in a temp folder."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from pathlib import Path

import pytest
from test_local_store import make_skill as make_skill_in

from registry._turns import waiting
from registry.cli import main
from registry.errors import HubskillsError, UnsafeSkill
from registry.format.skill import content_hash
from registry.install import install, pull, update
from registry.install.installed import latest_checker, list_installed, remove
from registry.install.lockfile import HF_MARKER, MARKER_FILE, Lockfile, read_marker
from registry.stores import Fetched, LocalStore

REPO_ROOT = Path(__file__).resolve().parent.parent



class CountingStore(LocalStore):
    """A LocalStore that counts fetches (a re-pull of the same sha must not fetch)."""

    fetches = 0

    def fetch(self, repo: str, sha: str, dest: Path, **kw) -> Fetched:
        self.fetches += 1
        return super().fetch(repo, sha, dest, **kw)


def make_skill(root: Path, name: str, *, version: str = "1.0.0", body: str = "Do it.",
               files: dict[str, str] | None = None) -> Path:
    """`test_local_store.make_skill`, in a folder of its own per version."""
    return make_skill_in(root / f"{name}-{version}", name, version=version, body=body,
                         files=files)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def store(tmp_path: Path, home: Path) -> CountingStore:
    store = CountingStore(tmp_path / "store")
    for name in ("csv-clean", "pdf-tools"):
        store.publish(make_skill(tmp_path / "src", name, files={"references/a.md": "A\n"}),
                      repo=f"acme/{name}", version="1.0.0")
    return store


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    (folder / ".claude").mkdir(parents=True)
    (folder / "README.md").write_text("my project\n")
    return folder


def tree(root: Path) -> dict[str, str]:
    """Every path under root: file digest, link target or `dir`."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            full = Path(dirpath, name)
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                found[rel] = "-> " + os.readlink(full)
            elif full.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = hashlib.sha256(full.read_bytes()).hexdigest()
    return found


def run_main(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """`main()` as the console script runs it: exit code, stdout, stderr."""
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in args])
        raise SystemExit(0)
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out, captured.err


# --- pull -------------------------------------------------------------------------------------


def test_pull_installs_files_links_marker_and_lock(store: CountingStore, project: Path):
    result = pull("acme/csv-clean", project=project, store=store)
    folder = project / ".agents/skills/csv-clean"
    assert (folder / "SKILL.md").is_file() and (folder / "references/a.md").is_file()
    link = project / ".claude/skills/csv-clean"
    assert link.is_symlink() and os.readlink(link) == "../../.agents/skills/csv-clean"
    assert (link / "SKILL.md").read_text() == (folder / "SKILL.md").read_text()
    marker = read_marker(folder)
    assert marker and marker.repo == "acme/csv-clean" and marker.sha == result.sha
    assert marker.content_hash == content_hash(folder) and marker.version == "1.0.0"
    assert not (folder / HF_MARKER).exists()
    entry = Lockfile.read(project / "skills.lock").entries["csv-clean"]
    assert (entry.repo, entry.sha, entry.version) == ("acme/csv-clean", result.sha, "1.0.0")
    assert set(entry.agents) == {"agents", "claude"} and entry.registry == "local"
    assert result.status == "installed" and result.scan_summary["high"] == 0
    assert not [p for p in (project / ".agents/skills").iterdir() if p.name.startswith(".")]


def test_repull_of_the_same_sha_fetches_nothing(store: CountingStore, project: Path):
    first = pull("acme/csv-clean", project=project, store=store)
    before, fetches = tree(project), store.fetches
    again = pull(f"acme/csv-clean@{first.sha[:10]}", project=project, store=store)
    assert again.status == "up-to-date" and store.fetches == fetches
    assert tree(project) == before


def test_pull_by_version_and_the_lock_is_stable(store: CountingStore, project: Path,
                                                 tmp_path: Path):
    store.publish(make_skill(tmp_path / "src", "csv-clean", version="1.1.0"),
                  repo="acme/csv-clean", version="1.1.0")
    old = pull("acme/csv-clean@v1.0.0", project=project, store=store)
    assert old.version == "1.0.0"
    pull("acme/pdf-tools@1.0.0", project=project, store=store)
    text = (project / "skills.lock").read_text()
    data = json.loads(text)
    assert list(data["skills"]) == ["csv-clean", "pdf-tools"]
    assert text == json.dumps(data, indent=2, sort_keys=True) + "\n"


def test_copy_mode_copies_with_a_marker(store: CountingStore, project: Path):
    pull("acme/csv-clean", project=project, store=store, copy=True)
    copy = project / ".claude/skills/csv-clean"
    assert copy.is_dir() and not copy.is_symlink()
    assert read_marker(copy).repo == "acme/csv-clean"
    assert content_hash(copy) == content_hash(project / ".agents/skills/csv-clean")
    assert Lockfile.read(project / "skills.lock").entries["csv-clean"].copy


def test_agent_list_and_all(store: CountingStore, project: Path):
    pull("acme/csv-clean", project=project, store=store, agents="windsurf,cursor")
    assert (project / ".windsurf/skills/csv-clean").is_symlink()
    assert not (project / ".claude/skills").exists()  # not asked for
    assert not (project / ".cursor").exists()  # cursor reads .agents/skills itself
    pull("acme/pdf-tools", project=project, store=store, all_agents=True)
    for folder in (".claude", ".windsurf", ".cline", ".roo", ".kiro"):
        assert (project / folder / "skills/pdf-tools").is_symlink(), folder


def test_unknown_agent_names_the_valid_ones(store: CountingStore, project: Path):
    with pytest.raises(HubskillsError) as err:
        pull("acme/csv-clean", project=project, store=store, agents="claude,vim")
    assert "vim" in err.value.message and "claude" in err.value.message
    assert "cursor" in err.value.message and not (project / ".agents").exists()


def test_global_installs_under_home(store: CountingStore, project: Path, home: Path):
    (home / ".claude").mkdir()
    before = tree(project)
    pull("acme/csv-clean", project=project, store=store, global_=True)
    assert (home / ".agents/skills/csv-clean/SKILL.md").is_file()
    assert os.readlink(home / ".claude/skills/csv-clean") == "../../.agents/skills/csv-clean"
    assert "csv-clean" in Lockfile.read(home / ".agents/skills.lock").entries
    assert tree(project) == before


def test_remove_or_update_in_the_wrong_scope_names_the_right_one(
        store: CountingStore, project: Path, home: Path):
    """`list` shows project and user skills; `remove NAME` (and `update NAME`) of a user
    skill said 'not installed' and hinted `hubskills list`, which led back to it (issue 38,
    second walk)."""
    pull("acme/csv-clean", project=project, store=store, global_=True)
    pull("acme/pdf-tools", project=project, store=store)
    with pytest.raises(HubskillsError, match="not installed") as user_only:
        remove(project, "csv-clean")
    assert user_only.value.hint.startswith("hubskills remove csv-clean --global  #")
    with pytest.raises(HubskillsError, match="not installed") as project_only:
        remove(project, "pdf-tools", global_=True)
    assert project_only.value.hint.startswith("hubskills remove pdf-tools  #")
    with pytest.raises(HubskillsError, match="not installed") as nowhere:
        remove(project, "nope")
    assert nowhere.value.hint == "hubskills list"
    with pytest.raises(HubskillsError, match="not installed") as update_user_only:
        update(project, "csv-clean", stores=lambda _: store)
    assert update_user_only.value.hint.startswith("hubskills update csv-clean --global  #")
    assert update(project, "csv-clean", stores=lambda _: store, global_=True)
    assert remove(project, "csv-clean", global_=True).paths  # the hinted commands work


def test_dry_run_writes_nothing(store: CountingStore, project: Path, home: Path):
    before, before_home = tree(project), tree(home)
    result = pull("acme/csv-clean", project=project, store=store, dry_run=True)
    assert result.status == "dry-run" and result.sha
    assert tree(project) == before and tree(home) == before_home


def test_unmanaged_folder_needs_force(store: CountingStore, project: Path):
    mine = project / ".agents/skills/csv-clean"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_text("mine\n")
    with pytest.raises(HubskillsError, match="not installed by hubskills"):
        pull("acme/csv-clean", project=project, store=store)
    assert (mine / "SKILL.md").read_text() == "mine\n"
    assert not [p for p in mine.parent.iterdir() if p.name.startswith(".")]
    pull("acme/csv-clean", project=project, store=store, force=True)
    assert read_marker(mine) is not None


def test_failure_while_linking_restores_the_previous_install(store: CountingStore,
                                                             project: Path, tmp_path: Path):
    pull("acme/csv-clean", project=project, store=store, agents="agents")
    store.publish(make_skill(tmp_path / "src", "csv-clean", version="2.0.0", body="New."),
                  repo="acme/csv-clean", version="2.0.0")
    (project / ".roo").mkdir()
    (project / ".roo/skills").write_text("a file where a folder should be\n")
    before = tree(project)
    with pytest.raises(OSError):
        pull("acme/csv-clean", project=project, store=store, agents="roo")
    assert tree(project) == before


# --- lockfile, update, remove, list -----------------------------------------------------------


def test_lockfile_round_trip_and_frozen(store: CountingStore, project: Path):
    pull("acme/csv-clean", project=project, store=store)
    pull("acme/pdf-tools", project=project, store=store, copy=True)
    installed = tree(project)
    for path in (project / ".agents", project / ".claude/skills"):
        shutil.rmtree(path)
    results = install(project, stores=lambda _: store, frozen=True)
    assert {r.name for r in results} == {"csv-clean", "pdf-tools"}
    assert _without_markers(tree(project)) == _without_markers(installed)
    assert install(project, stores=lambda _: store, frozen=True)[0].status == "up-to-date"
    (project / ".agents/skills/csv-clean/SKILL.md").write_text("edited\n")
    with pytest.raises(HubskillsError, match="local changes"):
        install(project, stores=lambda _: store, frozen=True)
    with pytest.raises(HubskillsError, match="local changes"):
        install(project, stores=lambda _: store)
    install(project, stores=lambda _: store, force=True)
    assert _without_markers(tree(project)) == _without_markers(installed)


def _without_markers(found: dict[str, str]) -> dict[str, str]:
    """`found` less install markers and the record of folders made (both hold machine state:
    times, inodes)."""
    return {k: v for k, v in found.items()
            if not k.endswith(MARKER_FILE) and k != ".agents/.hubskills-made.json"}


def test_frozen_fails_without_a_lock_or_on_a_tampered_pin(store: CountingStore, project: Path):
    with pytest.raises(HubskillsError, match="no skills.lock") as info:
        install(project, stores=lambda _: store, frozen=True)
    assert str(project.resolve()) in str(info.value)  # where it looked, never a bare "."
    pull("acme/csv-clean", project=project, store=store)
    lock = project / "skills.lock"
    lock.write_text(lock.read_text().replace("sha256:", "sha256:0"))
    shutil.rmtree(project / ".agents")
    with pytest.raises(UnsafeSkill, match="skills.lock pins"):
        install(project, stores=lambda _: store, frozen=True)
    assert not (project / ".agents/skills/csv-clean").exists()


def test_update_list_and_remove(store: CountingStore, project: Path, tmp_path: Path):
    pull("acme/csv-clean", project=project, store=store)
    pull("acme/pdf-tools", project=project, store=store)
    latest = latest_checker(lambda _: store)
    states = {i.name: i.state for i in list_installed(project, latest=latest)}
    assert states == {"csv-clean": "up-to-date", "pdf-tools": "up-to-date"}
    store.publish(make_skill(tmp_path / "src", "csv-clean", version="1.1.0", body="Better.",
                             files={"references/b.md": "B\n"}),
                  repo="acme/csv-clean", version="1.1.0")
    (project / ".agents/skills/pdf-tools/SKILL.md").write_text("edited\n")
    states = {i.name: i.state for i in list_installed(project, latest=latest)}
    assert states == {"csv-clean": "outdated", "pdf-tools": "modified"}
    [result] = update(project, "csv-clean", stores=lambda _: store)
    assert result.status == "updated" and result.previous.version == "1.0.0"
    assert result.version == "1.1.0"
    assert result.changed == ["~ SKILL.md", "- references/a.md", "+ references/b.md"]
    with pytest.raises(HubskillsError, match="local changes"):
        update(project, "pdf-tools", stores=lambda _: store)
    removed = remove(project, "csv-clean")
    assert project / ".claude/skills/csv-clean" in removed.paths
    assert not (project / ".claude/skills/csv-clean").is_symlink()
    assert not (project / ".agents/skills/csv-clean").exists()
    assert "csv-clean" not in Lockfile.read(project / "skills.lock").entries


def test_others_are_listed_and_never_touched(store: CountingStore, project: Path, home: Path):
    hf = project / ".agents/skills/csv-clean"
    hf.mkdir(parents=True)
    (hf / "SKILL.md").write_text("---\nname: csv-clean\ndescription: x\n---\n")
    (hf / HF_MARKER).write_text("{}")
    by_hand = home / ".claude/skills/notes"
    by_hand.mkdir(parents=True)
    (by_hand / "SKILL.md").write_text("---\nname: notes\ndescription: x\n---\n")
    before, before_home = tree(project), tree(home)
    for force in (False, True):
        with pytest.raises(HubskillsError, match="hf skills"):
            pull("acme/csv-clean", project=project, store=store, force=force)
    with pytest.raises(HubskillsError, match="hf skills"):
        remove(project, "csv-clean")
    with pytest.raises(HubskillsError, match="not installed by hubskills"):
        remove(project, "notes", global_=True)
    found = {(i.name, i.scope): i.kind for i in list_installed(project)}
    assert found == {("csv-clean", "project"): "hf-skills", ("notes", "user"): "unmanaged"}
    assert tree(project) == before and tree(home) == before_home


# --- CLI --------------------------------------------------------------------------------------


def test_cli_pull_list_remove(capsys: pytest.CaptureFixture[str], project: Path):
    code, out, err = run_main(capsys, "pull", "hubskills/agent-skill-md", "--project", project)
    assert code == 0, err
    assert "Installed hubskills/agent-skill-md" in out and "sha" in out
    assert ".claude/skills/agent-skill-md" in out and "scan:" in out
    assert "skills.lock" in out
    code, out, _ = run_main(capsys, "list", "--project", project, "--json")
    [item] = [i for i in json.loads(out) if i["name"] == "agent-skill-md"]
    assert item["state"] == "up-to-date" and item["pinned"]
    code, out, _ = run_main(capsys, "remove", "hubskills/agent-skill-md", "--project", project)
    assert code == 0 and "Removed agent-skill-md" in out  # its id names it as its name does


def test_cli_errors_map_to_error_and_hint(capsys: pytest.CaptureFixture[str], project: Path):
    code, out, err = run_main(capsys, "pull", "hubskills/no-such-skill", "--project", project)
    assert code == 1 and "Error:" in err and "Hint:" in err and "Traceback" not in err
    code, _, err = run_main(capsys, "pull", "../evil", "--project", project)
    assert code == 1 and "../evil: no such folder" in err  # a path is a folder, not an id
    code, _, err = run_main(capsys, "install", "--frozen", "--project", project)
    assert code == 1 and "skills.lock" in err


def test_cli_update_shows_old_new_and_changed_files(capsys: pytest.CaptureFixture[str],
                                                     project: Path, tmp_path: Path):
    from registry.config import Settings
    from registry.registries import local_store

    code, _, err = run_main(capsys, "pull", "hubskills/agent-skill-md", "--project", project,
                            "--dry-run")
    assert code == 0 and not (project / ".agents").exists(), err
    assert run_main(capsys, "pull", "hubskills/agent-skill-md", "--project", project)[0] == 0
    changed = tmp_path / "agent-skill-md"
    shutil.copytree(REPO_ROOT / "skills/agent-skill-md", changed)
    (changed / "references/extra.md").write_text("# Extra\n")
    local_store(Settings.from_env()).publish(changed, repo="hubskills/agent-skill-md",
                                             version="1.1.1")
    code, out, _ = run_main(capsys, "list", "--project", project)
    assert code == 0 and "outdated" in out
    code, out, err = run_main(capsys, "update", "--project", project)
    assert code == 0, err
    assert "Updated hubskills/agent-skill-md 1.1.1 (was 1.1.0)" in out
    assert "+ references/extra.md" in out
    code, out, _ = run_main(capsys, "update", "--project", project)
    assert "Up to date: hubskills/agent-skill-md 1.1.1" in out
    shutil.rmtree(project / ".agents")  # a fresh clone: the lock, not the agent folders
    shutil.rmtree(project / ".claude")
    code, out, err = run_main(capsys, "list", "--project", project, "--offline")
    assert code == 0 and "No skills found in any agent folder." in out
    assert "skills.lock pins 1 skill not in .agents/skills: agent-skill-md" in out
    assert "Hint: hubskills install  # places what skills.lock pins" in err
    assert run_main(capsys, "install", "--project", project)[0] == 0
    code, out, err = run_main(capsys, "list", "--project", project, "--offline")
    assert "agent-skill-md" in out and "skills.lock pins" not in out and "Hint" not in err


def test_fetched_gives_a_temp_copy_for_scanning(store: CountingStore, project: Path):
    from registry.cli.scan import make_scan_command
    from registry.install import fetched

    with fetched("acme/csv-clean@1.0.0", store) as folder:
        assert (folder / "SKILL.md").is_file() and folder.name == "csv-clean"
        kept = folder
    assert not kept.exists() and not (project / ".agents").exists()
    command = make_scan_command(resolver=lambda target: fetched(target, store))
    from click.testing import CliRunner

    result = CliRunner().invoke(command, ["acme/csv-clean"])
    assert result.exit_code == 0 and "No findings." in result.output


# --- parallel install -------------------------------------------------------------------------


class BarrierStore(LocalStore):
    """Every fetch waits, as for a server's answer, until `parties` fetches are in flight at
    once (a deadlock guard, not a clock: sequential fetches can never reach the barrier, and it
    breaks after its timeout); `most` is how many fetches ever did their own work at once."""

    def __init__(self, root: Path, parties: int) -> None:
        super().__init__(root)
        self.barrier = threading.Barrier(parties, timeout=60)
        self.working = self.most = 0
        self._count = threading.Lock()

    def fetch(self, repo: str, sha: str, dest: Path, **kw) -> Fetched:
        with waiting():  # how a store waits for its server: the other workers go on meanwhile
            self.barrier.wait()
        with self._count:
            self.working += 1
            self.most = max(self.most, self.working)
        try:
            return super().fetch(repo, sha, dest, **kw)
        finally:
            with self._count:
                self.working -= 1


def test_install_overlaps_the_waits_and_takes_turns_with_the_work(
        store: CountingStore, project: Path, tmp_path: Path):
    names = [f"skill-{i}" for i in range(6)]
    for name in names:
        store.publish(make_skill(tmp_path / "src", name), repo=f"acme/{name}", version="1.0.0")
        pull(f"acme/{name}", project=project, store=store)
    fresh = tmp_path / "fresh"
    (fresh / ".claude").mkdir(parents=True)
    shutil.copy(project / "skills.lock", fresh / "skills.lock")
    parallel = BarrierStore(store.root, parties=len(names))
    results = install(fresh, stores=lambda _: parallel, frozen=True, workers=len(names))
    assert sorted(r.name for r in results) == names and parallel.barrier.n_waiting == 0
    assert all((fresh / ".claude/skills" / n / "SKILL.md").is_file() for n in names)
    assert not parallel.barrier.broken
    assert parallel.most == 1  # checks, hashing and writes never ran in two workers at once
    one_at_a_time = BarrierStore(store.root, parties=2)
    again = tmp_path / "again"
    (again / ".claude").mkdir(parents=True)
    shutil.copy(project / "skills.lock", again / "skills.lock")
    with pytest.raises(threading.BrokenBarrierError):  # the guard bites when nothing overlaps
        one_at_a_time.barrier = threading.Barrier(2, timeout=0.5)
        install(again, stores=lambda _: one_at_a_time, frozen=True, workers=1)
    assert not (again / ".agents/skills/skill-0").exists()


# --- agent folders that are links ---------------------------------------------------------------


@pytest.mark.parametrize("link", [".agents", ".claude", ".claude/skills"])
def test_an_agent_folder_linking_outside_the_project_is_refused(
        store: CountingStore, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        link: str):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    if link == ".claude":
        shutil.rmtree(project / ".claude")
    (project / link).parent.mkdir(parents=True, exist_ok=True)
    (project / link).symlink_to(outside, target_is_directory=True)
    before = tree(project)
    with pytest.raises(HubskillsError, match="outside the project") as err:
        pull("acme/csv-clean", project=project, store=store, agents="claude")
    assert "never writes through it" in err.value.message and err.value.hint
    assert list(outside.iterdir()) == [] and tree(project) == before
    code, _, stderr = run_main(capsys, "pull", "acme/csv-clean", "--project", project,
                               "--agent", "claude")
    assert code == 1 and "outside the project" in stderr and "Traceback" not in stderr
    assert list(outside.iterdir()) == []


def test_a_link_inside_the_project_is_fine(store: CountingStore, project: Path):
    (project / ".agents/skills").mkdir(parents=True)
    (project / ".claude/skills").symlink_to("../.agents/skills", target_is_directory=True)
    result = pull("acme/csv-clean", project=project, store=store, agents="claude")
    assert result.status == "installed" and [p.mode for p in result.placements] == ["files"]
    assert (project / ".claude/skills/csv-clean/SKILL.md").is_file()
    assert [i.name for i in list_installed(project)] == ["csv-clean"]
    assert remove(project, "csv-clean").paths == [project / ".agents/skills/csv-clean"]
    assert not (project / ".agents/skills/csv-clean").exists()


def test_global_refuses_a_link_outside_home(store: CountingStore, project: Path, home: Path,
                                            tmp_path: Path):
    outside = tmp_path / "not-home"
    outside.mkdir()
    (home / ".agents").symlink_to(outside, target_is_directory=True)
    with pytest.raises(HubskillsError, match="outside your home folder"):
        pull("acme/csv-clean", project=project, store=store, global_=True)
    with pytest.raises(HubskillsError, match="outside your home folder"):
        remove(project, "csv-clean", global_=True)
    assert list(outside.iterdir()) == []


def test_list_in_a_new_project_names_where_skills_come_from(tmp_path: Path, capsys):
    """`hubskills list` in a project with nothing installed said only "No skills found in any
    agent folder.": it names the next command, as an empty result elsewhere does."""
    code, out, err = run_main(capsys, "list", "--project", tmp_path, "--offline")
    assert code == 0 and "No skills found in any agent folder." in out
    assert "Hint: hubskills search  # then: hubskills pull NS/NAME" in err


def test_update_in_a_new_project_names_where_skills_come_from(tmp_path: Path, capsys):
    """`hubskills update` with nothing installed said only "No skills installed by hubskills."
    (a walk): the same next command as `list`."""
    code, out, err = run_main(capsys, "update", "--project", tmp_path)
    assert code == 0 and "No skills installed by hubskills." in out, out + err
    assert "Hint: hubskills search  # then: hubskills pull NS/NAME" in err
