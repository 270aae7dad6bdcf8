"""Pulling from where skills are: a local folder, `git+file://` repositories and `github:`
sources served by `git http-backend` on 127.0.0.1 (HUBSKILLS_GITHUB_URL points there).

Each pull must install, pin and restore like a Hub pull, and refuse what a Hub pull refuses:
the hostile trees of `test_hostile_repos.py` are replayed over a git source, byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from registry.stores.card import parse_card
from tests.fakes.git_server import GitServer, commit_tree, git
from tests.test_hostile_repos import CASES, Case, skill_md
from tests.test_install import run_main, tree


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    with GitServer(tmp_path_factory.mktemp("git-root")) as served:
        yield served


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path, home: Path, server: GitServer,
            monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "proj"
    (folder / ".claude").mkdir(parents=True)
    (folder / "src.py").write_text("print('mine')\n")
    monkeypatch.setenv("HUBSKILLS_GITHUB_URL", server.url)
    return folder


def skills_repo(server: GitServer, name: str, *names: str, tag: str | None = "v1.0.0",
                body: str = "Do the task.\n") -> Path:
    """`acme/<name>.git` holding `skills/<n>/SKILL.md` (+ a reference) for each of `names`."""
    repo = server.repo(f"acme/{name}.git")
    files = {f"skills/{n}/SKILL.md": skill_md(n, body) for n in names}
    files |= {f"skills/{n}/references/guide.md": f"# {n}\n".encode() for n in names}
    commit_tree(repo, {**files, "README.md": b"# the repository\n"}, tag=tag)
    return repo


def lock(project: Path) -> dict:
    return json.loads((project / "skills.lock").read_text())["skills"]


def _flat(text: str) -> str:
    return " ".join(text.split())


# --- sources that install, pin and restore -----------------------------------------------------


def test_pull_a_local_folder_pins_its_path_and_says_so_when_it_is_gone(
        project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    mine = project / "dev/my-skill"
    mine.mkdir(parents=True)
    (mine / "SKILL.md").write_bytes(skill_md("my-skill"))
    (mine / ".git").mkdir()  # the folder's own repository is noise, as for publish
    monkeypatch.chdir(project)
    code, out, err = run_main(capsys, "pull", "./dev/my-skill", "--project", project)
    assert code == 0, err
    assert (project / ".agents/skills/my-skill/SKILL.md").read_bytes() == skill_md("my-skill")
    entry = lock(project)["my-skill"]
    assert entry["registry"] == "folder" and entry["source"] == {"path": "./dev/my-skill"}
    shutil.rmtree(project / ".agents/skills/my-skill")
    assert run_main(capsys, "install", "--frozen", "--project", project)[0] == 0
    assert (project / ".agents/skills/my-skill/SKILL.md").is_file()
    shutil.rmtree(project / ".agents/skills/my-skill")
    shutil.rmtree(mine)
    code, _, err = run_main(capsys, "install", "--project", project)
    assert code == 1 and "./dev/my-skill: no such folder" in err
    assert "cannot be fetched again" in _flat(err)


def test_pull_git_file_url_pins_the_commit_and_install_restores_it(
        server: GitServer, project: Path, capsys: pytest.CaptureFixture[str]):
    repo = skills_repo(server, "one", "pdf")
    sha = git(repo, "rev-parse", "v1.0.0")
    code, out, err = run_main(capsys, "pull", f"git+file://{repo}//skills/pdf@v1.0.0",
                              "--project", project)
    assert code == 0, err
    entry = lock(project)["pdf"]
    assert entry["sha"] == sha and entry["registry"] == "git"
    assert entry["repo"] == f"file://{repo}//skills/pdf"
    assert entry["source"] == {"url": f"file://{repo}", "subdir": "skills/pdf", "ref": "v1.0.0"}
    commit_tree(repo, {"skills/pdf/SKILL.md": skill_md("pdf", "Newer.\n")})  # main moves on
    shutil.rmtree(project / ".agents/skills/pdf")
    code, _, err = run_main(capsys, "install", "--frozen", "--project", project)
    assert code == 0, err
    assert b"Do the task." in (project / ".agents/skills/pdf/SKILL.md").read_bytes()
    assert lock(project)["pdf"]["sha"] == sha


def test_pull_github_source_at_a_tag_then_update_follows_the_branch(
        server: GitServer, project: Path, capsys: pytest.CaptureFixture[str]):
    repo = skills_repo(server, "tools", "pdf")
    code, out, err = run_main(capsys, "pull", "github:acme/tools/skills/pdf@main",
                              "--project", project)
    assert code == 0, err
    first = lock(project)["pdf"]["sha"]
    assert lock(project)["pdf"]["repo"] == "github:acme/tools/skills/pdf"
    assert run_main(capsys, "pull", "github:acme/tools/skills/pdf@main", "--project",
                    project)[1].startswith("Up to date")
    newer = commit_tree(repo, {"skills/pdf/SKILL.md": skill_md("pdf", "Newer.\n")})
    code, out, err = run_main(capsys, "update", "pdf", "--project", project)
    assert code == 0 and "Updated" in out, err
    assert lock(project)["pdf"]["sha"] == newer != first
    assert b"Newer." in (project / ".agents/skills/pdf/SKILL.md").read_bytes()
    code, out, err = run_main(capsys, "pull", f"github:acme/tools/skills/pdf@{first[:10]}",
                              "--project", project)  # back to the first commit, by sha prefix
    assert code == 0 and lock(project)["pdf"]["sha"] == first, err


def test_a_repository_with_several_skills_needs_skill_or_all_skills(
        server: GitServer, project: Path, capsys: pytest.CaptureFixture[str]):
    skills_repo(server, "many", "pdf", "docx", "xlsx")
    before = tree(project)
    code, _, err = run_main(capsys, "pull", "github:acme/many", "--project", project)
    assert code == 1 and "holds 3 skills: docx, pdf, xlsx" in _flat(err)
    assert "--skill docx" in err and tree(project) == before
    code, _, err = run_main(capsys, "pull", "github:acme/many", "--skill", "nope",
                            "--project", project)
    assert code == 1 and "has no skill nope" in _flat(err) and tree(project) == before
    code, _, err = run_main(capsys, "pull", "github:acme/many", "--skill", "pdf",
                            "--project", project)
    assert code == 0, err
    assert sorted(lock(project)) == ["pdf"]
    code, _, err = run_main(capsys, "pull", "github:acme/many", "--all-skills",
                            "--project", project)
    assert code == 0, err
    assert sorted(lock(project)) == ["docx", "pdf", "xlsx"]


def test_two_skills_of_one_name_in_a_repository_are_refused_before_any_is_placed(
        server: GitServer, project: Path, capsys: pytest.CaptureFixture[str]):
    """Red-team round 5: `--skill units` took whichever folder was found last, with no word
    (`info` pointed at the other), and `--all-skills` placed the first and refused the second,
    half an install (with --force, the second replaced the first in one pull)."""
    repo = server.repo("acme/twins.git")
    commit_tree(repo, {"a/units/SKILL.md": skill_md("units", "From a.\n"),
                       "b/units/SKILL.md": skill_md("units", "From b.\n")}, tag="v1.0.0")
    before = tree(project)
    code, _, err = run_main(capsys, "pull", "github:acme/twins", "--skill", "units",
                            "--project", project)
    assert code == 1 and "holds 2 skills named units: a/units, b/units" in _flat(err)
    assert "--skill a/units" in err and tree(project) == before
    for force in ((), ("--force",)):
        code, _, err = run_main(capsys, "pull", "github:acme/twins", "--all-skills", *force,
                                "--project", project)
        assert code == 1 and "are both named units" in _flat(err), err
        assert "nothing was installed" in _flat(err) and tree(project) == before
    code, _, err = run_main(capsys, "pull", "github:acme/twins", "--skill", "b/units",
                            "--project", project)
    assert code == 0, err
    assert b"From b." in (project / ".agents/skills/units/SKILL.md").read_bytes()


@pytest.mark.parametrize("ref", ["no-such-tag", "0123456789abcdef0123456789abcdef01234567"])
def test_a_ref_that_does_not_exist_is_an_error_with_a_hint(
        ref: str, server: GitServer, project: Path, capsys: pytest.CaptureFixture[str]):
    skills_repo(server, "refs", "pdf")
    before = tree(project)
    code, out, err = run_main(capsys, "pull", f"github:acme/refs/skills/pdf@{ref}",
                              "--project", project)
    assert code == 1 and "Error:" in err and "Hint:" in err and "Traceback" not in out + err
    assert f"no branch, tag or commit '{ref}'" in _flat(err) and "v1.0.0" in err
    assert tree(project) == before


def test_bad_sources_are_errors_with_hints(project: Path, capsys: pytest.CaptureFixture[str]):
    for spec, message in [("github:acme/x/../../etc", "not a plain relative path"),
                          ("github:acme/x@--upload-pack=touch", "is not a branch, tag or commit"),
                          ("./nowhere", "./nowhere: no such folder")]:
        code, out, err = run_main(capsys, "pull", spec, "--project", project)
        assert code == 1 and message in _flat(err) and "Hint:" in err, (spec, err)


@pytest.mark.parametrize("spec", [
    "https://bob:ghp_AbCdEfGhIjKlMnOpQrStUvWxYz012345@git.example/acme/skills.git//pdf@v1",
    "https://ghp_AbCdEfGhIjKlMnOpQrStUvWxYz012345@git.example/acme/skills.git",
    "git+https://bob:hunter2-long-password@git.example/acme/skills.git",
    # a password under the length masked in all text is a credential all the same
    "https://bob:hunter2@git.example/acme/skills.git",
    "ssh://git:hunter2@git.example/acme/skills.git",
    "https://x-access-token:hunter2@github.com/acme/skills//pdf@v1",
    # after the folder: git never reads it, the lock would record it as the folder's name
    "https://git.example/acme/skills.git//pdf?private_token=hunter2-long-password",
    "https://bob:hunter2@[::1/acme/skills.git",  # does not parse: refused, not echoed
])
def test_a_source_with_a_credential_in_its_url_is_refused_unechoed(
        spec: str, project: Path, capsys: pytest.CaptureFixture[str]):
    """A token typed into a git URL was recorded in skills.lock and the install marker, which
    a project commits; it is refused before any fetch, and the error does not repeat it."""
    code, out, err = run_main(capsys, "pull", spec, "--project", project)
    assert code == 1 and "with a credential in it" in _flat(err), err
    assert "gh auth setup-git" in _flat(err)
    assert "ghp_" not in out + err and "hunter2" not in out + err
    assert not (project / "skills.lock").exists()


def test_a_url_no_source_reads_is_not_echoed_with_its_credential(
        project: Path, capsys: pytest.CaptureFixture[str]):
    """`HTTPS://` is no scheme a source takes: the error names it as typed, less the password."""
    code, out, err = run_main(capsys, "pull", "HTTPS://bob:hunter2@git.example/acme/skills.git",
                              "--project", project)
    assert code == 1 and "'HTTPS://git.example/acme/skills.git' is not a folder" in _flat(err)
    assert "hunter2" not in out + err


# --- hostile trees, refused as a Hub pull refuses them -------------------------------------------

_GIT_MESSAGES = {  # what differs over git: no registry card, no manifest, a source's own words
    "name-collision": r"holds \S*tester/good-skill",
    "no-skill-md": r"holds no skill \(no SKILL\.md",
    **{c.id: r"unexpected file '\.hubskills/manifest\.json'" for c in CASES
       if c.id.startswith("manifest-")},
}
_NOT_IN_GIT = {"absolute-path": "git trees hold no absolute names",
               "hash-mismatch": "a git source has no registry card to lie"}


@pytest.fixture
def hostile_project(server: GitServer, project: Path, home: Path,
                    capsys: pytest.CaptureFixture[str]) -> Path:
    """A project with a git install (`tester/good-skill`) and a hand-made skill."""
    (project / ".claude/skills/by-hand").mkdir(parents=True)
    (project / ".claude/skills/by-hand/SKILL.md").write_bytes(skill_md("by-hand"))
    good = server.repo("tester/good-skill.git")
    if not (good / "refs/heads/main").exists():
        commit_tree(good, {"SKILL.md": skill_md("good-skill")})
    code, _, err = run_main(capsys, "pull", f"file://{good}", "--project", project)
    assert code == 0, err
    return project


@pytest.mark.parametrize("hostile", [c for c in CASES if c.id not in _NOT_IN_GIT],
                         ids=[c.id for c in CASES if c.id not in _NOT_IN_GIT])
def test_hostile_trees_over_git_are_refused_and_nothing_escapes(
        hostile: Case, server: GitServer, hostile_project: Path, home: Path,
        capsys: pytest.CaptureFixture[str]):
    repo = server.repo(f"{hostile.repo or 'evil/' + hostile.id}.git")
    commit_tree(repo, hostile.files)
    before, before_home = tree(hostile_project), tree(home)
    code, out, err = run_main(capsys, "pull", f"git+file://{repo}", "--project",
                              hostile_project)
    message = _GIT_MESSAGES.get(hostile.id, hostile.message)
    if hostile.flagged:
        assert code == 0 and re.search(message, _flat(out + err)), out + err
        return
    assert code == 1, out
    assert "Error:" in err and "Hint:" in err and "Traceback" not in out + err
    assert re.search(message, _flat(err + out)), err + out
    assert tree(hostile_project) == before and tree(home) == before_home
    if hostile.risky:
        code, out, err = run_main(capsys, "pull", f"git+file://{repo}", "--project",
                                  hostile_project, "--allow-risky")
        assert code == 0 and re.search(message, _flat(out)), err


@pytest.mark.parametrize(("files", "message"), [
    ({"SKILL.md": skill_md("linked"), "notes.md": ("link", "/etc/passwd")},
     r"notes\.md is a symlink"),
    ({"SKILL.md": ("link", "../../../../etc/passwd")}, r"SKILL\.md is a symlink"),
    ({"SKILL.md": skill_md("linked"), "vendor": ("submodule", "1" * 40)},
     r"vendor is a git commit \(a submodule\)"),
])
def test_links_and_submodules_in_a_git_tree_are_refused(
        files: dict, message: str, server: GitServer, project: Path,
        capsys: pytest.CaptureFixture[str]):
    repo = server.repo(f"evil/linked-{len(message)}.git")
    commit_tree(repo, {k: v for k, v in files.items()}, message="links")
    before = tree(project)
    code, _, err = run_main(capsys, "pull", f"file://{repo}", "--project", project)
    assert code == 1 and re.search(message, _flat(err)) and "Hint:" in err, err
    assert tree(project) == before


def test_a_refused_link_is_named_where_it_is_in_the_repository(
        server: GitServer, project: Path, capsys: pytest.CaptureFixture[str]):
    """Issue 38: a link in a public repository's skill is named by its path there (and a local
    folder's by its path and target), not only "the repository is malformed or hostile"."""
    repo = server.repo("acme/with-link.git")
    commit_tree(repo, {"skills/linked/SKILL.md": skill_md("linked"),
                       "skills/linked/docs/LICENSE.txt": ("link", "../../../LICENSE.txt"),
                       "LICENSE.txt": b"MIT\n"})
    code, _, err = run_main(capsys, "pull", f"file://{repo}//skills/linked", "--project",
                            project)
    assert code == 1 and f"skills/linked/docs/LICENSE.txt in file://{repo}" in _flat(err), err
    assert "hostile" not in err and "replace the link with the file" in _flat(err)


def test_a_fifo_or_a_link_out_of_a_local_folder_is_refused(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    folder = tmp_path / "src/fifo-skill"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(skill_md("fifo-skill"))
    os.mkfifo(folder / "pipe")
    before = tree(project)
    code, _, err = run_main(capsys, "pull", str(folder), "--project", project)
    assert code == 1 and "pipe is not a regular file" in err and tree(project) == before
    (folder / "pipe").unlink()
    (folder / "secrets").symlink_to(Path.home())
    code, _, err = run_main(capsys, "pull", str(folder), "--project", project)
    assert code == 1 and "secrets is a symlink" in err and tree(project) == before
    assert f"{folder / 'secrets'} -> {Path.home()}" in _flat(err)


def test_hooks_and_config_of_a_fetched_repository_never_run(
        server: GitServer, project: Path, home: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]):
    ran = tmp_path / "ran"
    hooks = tmp_path / "hooks"
    (hooks / "hooks").mkdir(parents=True)
    for name in ("reference-transaction", "post-checkout", "post-merge", "pre-auto-gc",
                 "fsmonitor-watchman"):
        script = hooks / "hooks" / name
        script.write_text(f"#!/bin/sh\necho {name} >> {ran}\n")
        script.chmod(0o755)
    repo = skills_repo(server, "hooked", "pdf", tag=None)
    older = git(repo, "rev-parse", "main")[:10]  # soon no tip: every ref is fetched
    commit_tree(repo, {"skills/pdf/SKILL.md": skill_md("pdf", "Newer.\n")})
    shutil.copytree(hooks / "hooks", repo / "hooks")
    git(repo, "config", "core.fsmonitor", str(hooks / "hooks/fsmonitor-watchman"))
    git(repo, "config", "core.hooksPath", str(hooks / "hooks"))
    (home / ".gitconfig").write_text(f"[init]\n\ttemplateDir = {hooks}\n"
                                     f"[core]\n\thooksPath = {hooks / 'hooks'}\n")
    code, _, err = run_main(capsys, "pull", f"file://{repo}//skills/pdf@{older}",
                            "--project", project)
    assert code == 0, err
    assert not ran.exists(), ran.read_text()


# --- the other commands take the same sources ---------------------------------------------------


def test_info_scan_and_suite_show_take_a_git_source(
        server: GitServer, project: Path, capsys: pytest.CaptureFixture[str]):
    repo = server.repo("acme/shown.git")
    suite = json.dumps({"skill_name": "shown", "evals": [
        {"id": "one", "prompt": "Say hi", "expected_output": "hi", "assertions": ["says hi"]}]})
    commit_tree(repo, {"shown/SKILL.md": skill_md("shown"),
                       "shown/evals/evals.json": suite.encode()}, tag="v2.0.0")
    spec = f"{server.url}/acme/shown.git//shown@v2.0.0"
    code, out, err = run_main(capsys, "scan", spec)
    assert code == 0 and "No findings." in out, err
    code, out, err = run_main(capsys, "suite", "show", spec)
    assert code == 0 and "Say hi" in out, err
    code, out, err = run_main(capsys, "info", "github:acme/shown/shown@v2.0.0", "--json")
    assert code == 0, err
    info = json.loads(out)
    assert info["repo"] == "github:acme/shown/shown" and info["name"] == "shown"
    assert info["pull"] == "hubskills pull github:acme/shown/shown"
    code, _, err = run_main(capsys, "scan", f"{server.url}/acme/many-missing.git")
    assert code == 1 and "git could not read" in _flat(err) and "Hint:" in err


def test_publish_a_github_source_records_it_in_the_card(
        server: GitServer, project: Path, capsys: pytest.CaptureFixture[str]):
    repo = skills_repo(server, "published", "pdf")
    sha = git(repo, "rev-parse", "v1.0.0")
    code, out, err = run_main(capsys, "publish", "github:acme/published/skills/pdf@v1.0.0",
                              "--repo", "me/pdf", "--version", "1.0.0", "--force")  # no suite
    assert code == 0, err
    code, out, err = run_main(capsys, "info", "me/pdf", "--json")
    assert code == 0, err
    card = json.loads(out)["card"]
    # the frontmatter as YAML, not as text: a sha is quoted only when it could read as a number
    source = parse_card(card)["hubskills"]["source"]
    assert (source["source"], source["sha"]) == ("github:acme/published/skills/pdf", sha)
    assert f"(<https://github.com/acme/published/tree/{sha}/skills/pdf>)" in card
