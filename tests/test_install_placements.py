"""What hubskills placed for agents (links and `--copy` copies) is kept when it is as pinned,
protected when it was edited, checked by `verify-install` and repaired by `install --force`;
`remove` and the restore's wording treat local edits as `pull` does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from registry.errors import HubskillsError
from registry.install import install, pull, remove
from registry.install.audit import verify_installed
from registry.install.place import LocalChanges
from registry.stores import LocalStore
from tests.test_install_deps import home, publish  # noqa: F401 - a fixture


@pytest.fixture
def store(home: Path, tmp_path: Path,  # noqa: F811 - the fixture
          monkeypatch: pytest.MonkeyPatch) -> LocalStore:
    monkeypatch.delenv("HUBSKILLS_REQUIRE_SIGNED", raising=False)
    store = LocalStore(tmp_path / "store")
    publish(store, tmp_path, "acme/a", files={"references/r.md": "R\n"})
    return store


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    (folder / ".claude").mkdir(parents=True)
    return folder


def stores(store: LocalStore):
    return lambda _: store


# --- copies -----------------------------------------------------------------------------------


def test_an_identical_copy_is_up_to_date_and_left_alone(store: LocalStore, project: Path):
    pull("acme/a", project=project, store=store, agents="claude,windsurf", copy=True)
    copy = project / ".claude/skills/a"
    inode = copy.stat().st_ino
    again = pull("acme/a", project=project, store=store, agents="claude,windsurf", copy=True)
    assert again.status == "up-to-date" and again.linked == []
    [restored] = install(project, stores=stores(store))
    assert restored.status == "up-to-date" and restored.linked == []
    assert copy.stat().st_ino == inode  # not rewritten
    assert {p.mode for p in again.placements[1:]} == {"copy"}


def test_an_edited_copy_is_refused_unless_forced(store: LocalStore, project: Path):
    pull("acme/a", project=project, store=store, agents="claude", copy=True)
    notes = project / ".claude/skills/a/NOTES.md"
    notes.write_text("mine\n")
    with pytest.raises(LocalChanges, match="local changes") as err:
        pull("acme/a", project=project, store=store, agents="claude", copy=True)
    assert "--force" in (err.value.hint or "")
    with pytest.raises(LocalChanges) as err:
        install(project, stores=stores(store))
    assert "hubskills install --force" in (err.value.hint or "")  # not `pull with --force`
    assert notes.read_text() == "mine\n"
    install(project, stores=stores(store), force=True)
    assert not notes.exists()
    assert [a.state for a in verify_installed(project)] == ["ok"]


# --- links ------------------------------------------------------------------------------------


def test_a_link_gone_or_replaced_is_reported_and_install_force_repairs_it(
        store: LocalStore, project: Path, tmp_path: Path):
    pull("acme/a", project=project, store=store, agents="claude")
    link = project / ".claude/skills/a"
    link.unlink()
    [audit] = verify_installed(project)
    assert audit.state == "missing" and str(link) in audit.problems[0]
    install(project, stores=stores(store))  # a missing link is put back
    assert link.is_symlink() and [a.state for a in verify_installed(project)] == ["ok"]
    link.unlink()
    link.mkdir()
    (link / "SKILL.md").write_text("---\nname: a\ndescription: another skill\n---\nOther.\n")
    [audit] = verify_installed(project)
    assert audit.state == "modified" and "not what hubskills placed" in audit.problems[0]
    with pytest.raises(HubskillsError, match="not placed there by hubskills") as err:
        install(project, stores=stores(store))
    assert "hubskills install --force" in (err.value.hint or "")
    install(project, stores=stores(store), force=True)
    assert link.is_symlink() and [a.state for a in verify_installed(project)] == ["ok"]


# --- remove -----------------------------------------------------------------------------------


def test_remove_refuses_to_discard_local_edits_unless_forced(store: LocalStore, project: Path):
    pull("acme/a", project=project, store=store, agents="claude")
    folder = project / ".agents/skills/a"
    (folder / "SKILL.md").write_text((folder / "SKILL.md").read_text() + "My note.\n")
    (folder / "NOTES.md").write_text("mine\n")
    with pytest.raises(LocalChanges, match="local changes") as err:
        remove(project, "a")
    assert err.value.hint and "hubskills remove a --force" in err.value.hint
    assert (folder / "NOTES.md").read_text() == "mine\n" and "a" in lock_entries(project)
    removed = remove(project, "a", force=True)
    assert folder in removed.paths and not folder.exists()


def test_remove_refuses_an_edited_copy_too(store: LocalStore, project: Path):
    pull("acme/a", project=project, store=store, agents="claude", copy=True)
    (project / ".claude/skills/a/references/r.md").write_text("edited\n")
    with pytest.raises(LocalChanges, match=".claude/skills/a"):
        remove(project, "a")
    remove(project, "a", force=True)
    assert not (project / ".claude/skills/a").exists()


def lock_entries(project: Path) -> dict:
    return json.loads((project / "skills.lock").read_text())["skills"]


# --- wording ----------------------------------------------------------------------------------


def test_putting_back_the_same_version_is_a_restore_not_an_update(
        store: LocalStore, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from tests.test_install import run_main

    pull("acme/a", project=project, store=store, agents="claude")
    skill = project / ".agents/skills/a/SKILL.md"
    skill.write_text(skill.read_text() + "edited\n")
    [result] = install(project, stores=stores(store), force=True)
    assert result.status == "restored" and result.version == "1.0.0"
    publish(store, tmp_path, "acme/a", "1.1.0")
    moved = pull("acme/a", project=project, store=store, agents="claude")
    assert moved.status == "updated"
    other = tmp_path / "other"
    other.mkdir()
    assert run_main(capsys, "pull", "hubskills/agent-skill-md", "--project", other)[0] == 0
    skill = other / ".agents/skills/agent-skill-md/SKILL.md"
    skill.write_text(skill.read_text() + "edited\n")
    code, out, err = run_main(capsys, "install", "--force", "--project", other)
    assert code == 0 and "Restored hubskills/agent-skill-md " in out, err
    assert "(was" not in out and "Updated" not in out


def test_remove_takes_the_skills_id_as_its_name(store: LocalStore, project: Path):
    """A walk: `remove acme/a` was refused though skills.lock says which skill it names."""
    pull("acme/a", project=project, store=store, agents="claude")
    removed = remove(project, "acme/a")
    assert removed.name == "a" and not (project / ".agents/skills/a").exists()
    assert "a" not in lock_entries(project)
    with pytest.raises(HubskillsError, match="'acme/b' is not a skill name"):
        remove(project, "acme/b")


def test_a_command_run_below_a_project_finds_its_skills_lock(tmp_path: Path):
    """A walk: from `myproject/src/pkg`, `list` said "No skills found" and `pull` planned a
    second `.agents/` there. The nearest skills.lock above is the project unless --project says
    otherwise, looked for up to the repository's root, or else below HOME: a lock a stranger
    left in a shared folder outside both is no one's project (a red-team note)."""
    from cli_process import hubskills

    user = tmp_path / "user"
    env = {"HUBSKILLS_HOME": str(tmp_path / "hs"), "HOME": str(user)}

    def listed(cwd: Path, *args: str) -> tuple[list[str], str]:
        done = hubskills("list", "--json", *args, cwd=cwd, **env)
        return [s["name"] for s in json.loads(done.stdout)], done.stderr

    def repository(folder: Path) -> None:  # what git would take for one: .git/HEAD
        (folder / ".git").mkdir(parents=True)
        (folder / ".git" / "HEAD").write_text("ref: refs/heads/main\n")

    for project in (tmp_path / "repo", user / "code" / "proj"):  # a repository; below HOME
        (project / "src" / "pkg").mkdir(parents=True)
        if project.parent == tmp_path:
            repository(project)
        assert hubskills("pull", "hubskills/agent-skill-md", cwd=project, **env).returncode == 0
        names, said = listed(project / "src" / "pkg")
        assert names == ["agent-skill-md"] and f"Project: {project} (its skills.lock" in said
        assert listed(project / "src" / "pkg", "--project", ".")[0] == []
        assert listed(project / "src" / "pkg", "--global") == ([], "")  # HOME's: no project
        repository(project / "src")  # a repository inside: its root is as far as it looks
        assert listed(project / "src" / "pkg") == ([], "")
    shared = tmp_path / "shared"
    (shared / "scratch").mkdir(parents=True)
    (shared / "skills.lock").write_text((tmp_path / "repo" / "skills.lock").read_text())
    assert listed(shared / "scratch") == ([], "")
    (shared / ".git").mkdir()  # an empty .git a stranger made is no repository (a review)
    assert listed(shared / "scratch") == ([], "")
    repository(tmp_path / "team")  # a repository, but its skills.lock anyone may write
    (tmp_path / "team" / "sub").mkdir()
    (tmp_path / "team" / "skills.lock").write_text((shared / "skills.lock").read_text())
    (tmp_path / "team" / "skills.lock").chmod(0o666)
    assert listed(tmp_path / "team" / "sub") == ([], "")


def test_install_of_several_skills_says_who_sees_them_once(
        store: LocalStore, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """A walk: `install` printed the 30 agents' lines for every skill, 13 lines a skill."""
    from registry.cli import _pull_shared

    publish(store, tmp_path, "acme/b")
    for repo in ("acme/a", "acme/b"):
        pull(repo, project=project, store=store)
    (project / ".agents").rename(tmp_path / "gone")  # a fresh clone: skills.lock only
    results = install(project, stores=stores(store))
    capsys.readouterr()
    _pull_shared.print_moves(results, project, as_json=False)
    said = capsys.readouterr().out
    assert said.count("will see") == 1 and "2 skills placed:" in said, said
    assert "hubskills pull acme/a --agent" in said and "hubskills pull acme/b --agent" in said


# --- agent folders a pull made ----------------------------------------------------------------


def test_remove_takes_away_the_empty_agent_folders_pulls_made(store: LocalStore, project: Path):
    """A walk: `pull --all` then `remove` left 15 empty agent folders, which then counted as
    agents in use. The folders pulls made go once empty; those the user made, or put their own
    files in, stay."""
    (project / ".roo").mkdir()  # the user's: only `.roo/skills` is made by the pull
    publish(store, project.parent, "acme/b")
    pull("acme/a", project=project, store=store, all_agents=True)
    pull("acme/b", project=project, store=store, all_agents=True)
    assert (project / ".augment/skills/a").is_symlink()
    (project / ".windsurf/notes.md").write_text("mine\n")  # made by the pull, used since

    first = remove(project, "a")
    assert first.folders == [] and (project / ".augment/skills/b").is_symlink()
    last = remove(project, "b")
    assert project / ".augment" in last.folders and project / ".roo/skills" in last.folders
    assert project / ".augment/skills" not in last.folders  # its outer folder names it
    for gone in (".augment", ".cline", ".roo/skills"):
        assert not (project / gone).exists(), gone
    for kept in (".claude", ".roo", ".windsurf/notes.md", ".agents/skills", "skills.lock"):
        assert (project / kept).exists(), kept
    assert not (project / ".windsurf/skills").exists()


def test_a_folder_of_the_same_name_made_since_is_never_removed(store: LocalStore,
                                                               project: Path):
    """The record names each folder's device and inode: an empty `.augment` the user made after
    moving the pull's away (or one a teammate's checkout brought) is not the folder it made."""
    pull("acme/a", project=project, store=store, agents="augment")
    made = project / ".augment"
    made.rename(project / "old-augment")  # still there: its inode cannot be reused
    (made / "skills").mkdir(parents=True)
    assert remove(project, "a").folders == []
    assert (made / "skills").is_dir()
    assert not (project / ".agents/.hubskills-made.json").exists()  # forgotten, not trusted


def test_a_pull_that_fails_leaves_no_folder_and_no_record(store: LocalStore, project: Path):
    (project / ".agents/skills/a").mkdir(parents=True)  # not ours: the pull is refused
    (project / ".agents/skills/a/SKILL.md").write_text("---\nname: a\n---\nmine\n")
    with pytest.raises(HubskillsError, match="not installed by hubskills"):
        pull("acme/a", project=project, store=store, all_agents=True)
    assert not (project / ".augment").exists()
    assert not (project / ".agents/.hubskills-made.json").exists()


# --- verify-install ---------------------------------------------------------------------------


def test_an_agent_this_version_does_not_know_is_reported_and_the_rest_checked(
        store: LocalStore, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """A skills.lock written by a newer hubskills may name an agent this one has no row for:
    `verify-install` stopped at it ("unknown agent"); now it says which entry names it, still
    checks that entry's known placements and every other entry, and fails only on a mismatch."""
    from tests.test_install import run_main

    publish(store, tmp_path, "acme/b")
    for repo in ("acme/a", "acme/b"):
        pull(repo, project=project, store=store, agents="claude")
    lock = project / "skills.lock"
    data = json.loads(lock.read_text())
    data["skills"]["a"]["agents"].append("future-agent")
    lock.write_text(json.dumps(data))
    audits = {a.name: a for a in verify_installed(project)}
    assert audits["a"].state == "unknown agent" and audits["b"].state == "ok"
    assert audits["a"].problems == [
        "skills.lock names the agent 'future-agent', which this hubskills does not know "
        "(written by a newer one?): its folder was not checked"]
    code, out, err = run_main(capsys, "verify-install", "--project", project)
    assert code == 0, err
    assert "unknown agent" in out and "future-agent" in err and "Hint:" in err
    (project / ".claude/skills/a").unlink()  # what it does know is still checked
    (project / ".agents/skills/b/SKILL.md").write_text("edited\n")
    audits = {a.name: a for a in verify_installed(project)}
    assert audits["a"].state == "missing" and len(audits["a"].problems) == 2
    assert audits["b"].state == "modified"
    code, _, err = run_main(capsys, "verify-install", "--project", project)
    assert code == 1 and "2 of 2 installed skills do not match" in err


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_pull_for_another_agent_reports_the_links_already_there(
        store: LocalStore, project: Path, tmp_path: Path, dry_run: bool,
        capsys: pytest.CaptureFixture[str]):
    """A walk: `pull --agent windsurf` after a pull for Claude Code said "not seen by: Claude
    Code" and hinted `--agent claude`, though `.claude/skills/NAME` still linked to it (and
    skills.lock listed claude); `--agent claude` then said the same of Windsurf."""
    from registry.cli import _pull_shared

    pull("acme/a", project=project, store=store, agents="claude")
    for new in ("", "2.0.0"):  # the same revision (a refresh), then a new one (an update)
        if new:
            publish(store, tmp_path, "acme/a", version=new)
        result = pull("acme/a", project=project, store=store, agents="windsurf",
                      dry_run=dry_run)
        shown = {str(p.path.relative_to(project)): p.agents for p in result.placements}
        assert shown[".claude/skills/a"] == ("claude",) and ".windsurf/skills/a" in shown
        capsys.readouterr()
        _pull_shared.print_results([result], project, as_json=False)
        said = capsys.readouterr().out
        seen, unseen = said.split("not seen by:")
        assert "Claude Code" in seen and "Windsurf" in seen, said
        assert "Claude Code" not in unseen and "--agent claude" not in unseen, said


def test_a_stale_or_foreign_copy_is_not_reported_as_seen(store: LocalStore, project: Path,
                                                          tmp_path: Path):
    """A copy another agent holds counts only while it holds this revision: after an update
    for another agent, the old copy is not what its agent sees."""
    pull("acme/a", project=project, store=store, agents="claude", copy=True)
    publish(store, tmp_path, "acme/a", version="2.0.0", body="Do it twice.")
    result = pull("acme/a", project=project, store=store, agents="windsurf")
    assert ".claude/skills/a" not in {str(p.path.relative_to(project))
                                      for p in result.placements}


def test_verify_install_sees_files_the_content_hash_leaves_out(store: LocalStore,
                                                                project: Path):
    """A team lead's walk: a planted `.vscode/tasks.json` or `SKILL.md~` left `verify-install`
    saying ok, since the content hash leaves editor and cache files out. So would a planted
    hash-based .pyc, which Python runs in place of its source unchecked, or one whose time and
    size are not its source's (a review). The .pyc Python itself writes when a skill's script
    runs is no change."""
    import py_compile

    publish(store, project.parent, "acme/py", files={"scripts/helper.py": "print('hi')\n",
                                                     "scripts/run.py": "import helper\n"})
    pull("acme/py", project=project, store=store, agents="claude")
    folder = project / ".agents/skills/py"
    cache = folder / "scripts/__pycache__"
    py_compile.compile(str(folder / "scripts/helper.py"))  # as an import would write it
    [audit] = verify_installed(project)
    assert audit.state == "ok" and any(cache.glob("helper.*.pyc")), audit
    py_compile.compile(str(folder / "scripts/run.py"),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    forged = next(cache.glob("helper.*.pyc"))
    data = bytearray(forged.read_bytes())
    data[8:12] = (int.from_bytes(data[8:12], "little") + 1).to_bytes(4, "little")
    forged.write_bytes(bytes(data))  # not the source's time: not written for this checkout
    (folder / ".vscode").mkdir()
    (folder / ".vscode/tasks.json").write_text('{"runOn": "folderOpen"}\n')
    [audit] = verify_installed(project)
    assert audit.state == "modified", audit
    tag = sys.implementation.cache_tag
    assert f"added .vscode/tasks.json, scripts/__pycache__/helper.{tag}.pyc, " \
           f"scripts/__pycache__/run.{tag}.pyc" in audit.problems[0], audit.problems

def test_verify_install_without_a_lock_says_where_it_looked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """`hubskills verify-install` in a folder with no lockfile said "no skills.lock in ."
    (`install` names the folder): it names the folder too, never a bare "."."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(HubskillsError, match="no skills.lock in ") as info:
        verify_installed(Path("."))
    assert str(info.value).endswith(f" in {tmp_path.resolve()}")
