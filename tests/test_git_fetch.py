"""A git pull downloads the skill's folder and nothing else, and checks its caps first.

The repositories are served by `git http-backend` on 127.0.0.1 (`tests/fakes/git_server.py`),
which counts the bytes it sends: a blob outside the skill folder must never be sent, a file over
the per-file cap inside it is refused before its blob is sent, and a server that does not filter
(no partial clone) still gets no more than the caps allow before git is stopped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from registry.errors import UnsafeSkill
from registry.install.git_fetch import GitRepo
from registry.scan import SizeLimits
from tests.fakes.git_server import GitServer, commit_tree
from tests.test_hostile_repos import skill_md
from tests.test_install import run_main, tree

MB = 1024 * 1024
SMALL = SizeLimits(max_file_bytes=1 * MB, max_total_bytes=2 * MB, max_files=50)


def noise(size: int) -> bytes:
    """Bytes that do not compress, as a model file or an archive does not."""
    return os.urandom(size)


def stored_bytes(folder: Path) -> int:
    """Bytes under `folder` (a repository's objects, packs and all)."""
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    with GitServer(tmp_path_factory.mktemp("git-root")) as served:
        yield served


@pytest.fixture(scope="module")
def big(server: GitServer) -> Path:
    """`acme/big.git`: a small skill at `skills/pdf` beside a 50 MB blob."""
    repo = server.repo("acme/big.git")
    commit_tree(repo, {"skills/pdf/SKILL.md": skill_md("pdf"),
                       "skills/pdf/references/guide.md": b"# pdf\n",
                       "data/weights.bin": noise(50 * MB)}, tag="v1.0.0")
    return repo


@pytest.fixture
def project(tmp_path: Path, server: GitServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    folder = tmp_path / "proj"
    (folder / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HUBSKILLS_GITHUB_URL", server.url)
    return folder


def test_a_large_blob_outside_the_skill_folder_is_never_downloaded(
        big: Path, server: GitServer, project: Path, capsys: pytest.CaptureFixture[str]):
    served = server.sent
    code, out, err = run_main(capsys, "pull", "github:acme/big/skills/pdf@v1.0.0",
                              "--project", project)
    assert code == 0, err
    assert (project / ".agents/skills/pdf/SKILL.md").read_bytes() == skill_md("pdf")
    assert (project / ".agents/skills/pdf/references/guide.md").read_bytes() == b"# pdf\n"
    assert server.sent - served < MB, f"{server.sent - served} bytes served for a tiny skill"


def test_the_puller_object_store_holds_the_folder_and_no_other_blob(big: Path, server: GitServer,
                                                                    tmp_path: Path):
    repo, served = GitRepo(f"{server.url}/acme/big.git"), server.sent
    try:
        sha = repo.resolve("v1.0.0")
        entries = repo.listing(sha, "skills/pdf")
        files = repo.write(entries, tmp_path / "out", SMALL, tree=repo.tree_id(sha, "skills/pdf"))
        assert files == ["SKILL.md", "references/guide.md"]
        assert (tmp_path / "out/SKILL.md").read_bytes() == skill_md("pdf")
        assert stored_bytes(repo.dir) < MB and server.sent - served < MB
    finally:
        repo.close()


def test_a_file_over_the_cap_inside_the_folder_is_refused_before_its_blob_is_sent(
        server: GitServer, project: Path, capsys: pytest.CaptureFixture[str]):
    repo = server.repo("acme/heavy.git")
    commit_tree(repo, {"skills/pdf/SKILL.md": skill_md("pdf"),
                       "skills/pdf/assets/huge.bin": noise(21 * MB)})
    before, served = tree(project), server.sent
    code, out, err = run_main(capsys, "pull", "github:acme/heavy/skills/pdf", "--project",
                              project)
    assert code == 1 and "assets/huge.bin" in err and "bytes (max" in err, err
    assert "Hint:" in err and "Traceback" not in out + err
    assert server.sent - served < MB and tree(project) == before


def test_a_folder_over_the_total_cap_is_refused_and_nothing_is_written(server: GitServer,
                                                                       tmp_path: Path):
    repo_path = server.repo("acme/bulky.git")
    files = {f"skills/pdf/assets/part{i}.bin": noise(MB - 1000) for i in range(4)}
    commit_tree(repo_path, {"skills/pdf/SKILL.md": skill_md("pdf"), **files})
    repo = GitRepo(f"{server.url}/acme/bulky.git")
    try:
        sha = repo.resolve(None)
        entries = repo.listing(sha, "skills/pdf")
        with pytest.raises(UnsafeSkill, match=rf"over {2 * MB} bytes in total") as refused:
            repo.write(entries, tmp_path / "out", SMALL, tree=repo.tree_id(sha, "skills/pdf"))
        assert refused.value.hint
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    finally:
        repo.close()


def test_a_server_without_partial_clone_serves_small_repositories_and_is_capped_on_big_ones(
        server: GitServer, project: Path, capsys: pytest.CaptureFixture[str]):
    plain = server.repo("acme/plain.git", partial=False)
    commit_tree(plain, {"skills/pdf/SKILL.md": skill_md("pdf"), "README.md": b"# hi\n"})
    code, _, err = run_main(capsys, "pull", "github:acme/plain/skills/pdf", "--project", project)
    assert code == 0, err
    commit_tree(plain, {"skills/pdf/SKILL.md": skill_md("pdf"), "data/blob.bin": noise(3 * MB)})
    repo = GitRepo(f"{server.url}/acme/plain.git", limits=SMALL)
    try:
        with pytest.raises(UnsafeSkill, match=r"git stopped fetching") as refused:
            repo.listing(repo.resolve(None), "skills/pdf")
        assert "partial clone" in (refused.value.hint or "")
        assert not list((repo.dir / "objects/pack").glob("tmp_*"))
    finally:
        repo.close()
