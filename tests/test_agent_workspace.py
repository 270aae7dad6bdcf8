"""The agent workspace: seeded with the case's bytes and the skill, diffed without following
links the agent made."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from registry.agent import SKILLS_FOLDER, seed_workspace
from registry.format.inputs import InputFile
from registry.format.skill import load_skill


@pytest.fixture
def skill(tmp_path: Path):
    folder = tmp_path / "src" / "toml-facts"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: toml-facts\ndescription: Facts. Use when "
                                     "writing TOML.\n---\nUse capabilities = [\"9.0\"].\n")
    (folder / "scripts" / "check.py").write_text("print('ok')\n")
    (folder / "scripts" / "check.py").chmod(0o755)
    return load_skill(folder)


def test_seeds_case_files_as_bytes_and_the_skill_under_agents_skills(tmp_path, skill):
    png = b"\x89PNG\r\n\x1a\n\x00\x01"
    files = {"src/a.py": "x = 1\n", "img/logo.png": InputFile.of("evals/files/logo.png", png)}
    ws = seed_workspace(tmp_path / "ws", files, skill=skill)
    assert (ws.path / "src/a.py").read_text() == "x = 1\n"
    assert (ws.path / "img/logo.png").read_bytes() == png
    placed = ws.path / SKILLS_FOLDER / "toml-facts"
    assert ws.skill_path == f"{SKILLS_FOLDER}/toml-facts"
    assert (placed / "SKILL.md").read_text() == (skill.path / "SKILL.md").read_text()
    assert os.access(placed / "scripts" / "check.py", os.X_OK)
    assert ws.diff() == []


def test_baseline_workspace_has_no_skill_folder(tmp_path):
    ws = seed_workspace(tmp_path / "ws", {"a.txt": "a"})
    assert ws.skill_path is None
    assert not (ws.path / ".agents").exists()


def test_diff_reports_added_modified_deleted_with_text_diffs(tmp_path, skill):
    ws = seed_workspace(tmp_path / "ws", {"a.txt": "one\n", "b.txt": "gone\n"}, skill=skill)
    (ws.path / "a.txt").write_text("two\n")
    (ws.path / "b.txt").unlink()
    (ws.path / "new" ).mkdir()
    (ws.path / "new" / "c.bin").write_bytes(b"\xff\xfe\x00")
    changes = {c.path: c for c in ws.diff()}
    assert changes["a.txt"].status == "modified" and "-one\n+two\n" in changes["a.txt"].diff
    assert changes["b.txt"].status == "deleted"
    assert changes["new/c.bin"].status == "added" and changes["new/c.bin"].note.startswith(
        "binary")
    assert set(changes) == {"a.txt", "b.txt", "new/c.bin"}


def test_a_link_the_agent_made_is_listed_never_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("hf_SECRET_TOKEN")
    ws = seed_workspace(tmp_path / "ws", {"a.txt": "a"})
    (ws.path / "peek").symlink_to(secret)
    (ws.path / "dir-link").symlink_to(tmp_path)
    changes = {c.path: c for c in ws.diff()}
    assert changes["peek"].note.startswith("symlink")
    assert changes["dir-link"].status == "added"
    assert all("hf_SECRET" not in c.diff for c in changes.values())
    assert ws.files()["peek"] is None


def test_refuses_a_case_file_outside_the_workspace(tmp_path):
    with pytest.raises(ValueError, match="relative"):
        seed_workspace(tmp_path / "ws", {"../escape.txt": "x"})
    assert not (tmp_path / "escape.txt").exists()
