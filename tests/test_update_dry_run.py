"""`update --dry-run` (a walk found only `pull` had it): what would move, from -> to, and
nothing written: no folder, link, marker or skills.lock changed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from registry.config import Settings
from registry.registries import local_store
from tests.test_cli_next_commands import SKILL, project  # noqa: F401 - a fixture
from tests.test_install import run_main

REPO_ROOT = Path(__file__).resolve().parent.parent


def snapshot(root: Path) -> dict[str, str]:
    """Every path under `root` with its link target or file bytes (hashed by content)."""
    seen = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            seen[str(path.relative_to(root))] = (
                f"-> {os.readlink(path)}" if path.is_symlink() else
                path.read_text(errors="replace") if path.is_file() else "dir")
    return seen


def test_update_dry_run_says_what_would_move_and_writes_nothing(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):  # noqa: F811
    code, out, err = run_main(capsys, "update", "--dry-run", "--project", project)
    assert code == 0 and "Up to date: hubskills/agent-skill-md" in out, err
    newer = shutil.copytree(REPO_ROOT / "skills/agent-skill-md", tmp_path / "v2/agent-skill-md")
    (newer / "references").mkdir(exist_ok=True)
    (newer / "references" / "extra.md").write_text("# Extra\n")
    local_store(Settings.from_env()).publish(newer, repo=SKILL, version="9.9.9")
    before = snapshot(project)
    was = json.loads((project / "skills.lock").read_text())["skills"]["agent-skill-md"]["version"]

    code, out, err = run_main(capsys, "update", "--dry-run", "--project", project)
    assert code == 0, err
    assert f"Would update {SKILL} {was} → 9.9.9 at sha " in out, out
    assert "+ references/extra.md" in out and "pinned in" not in out
    code, out, err = run_main(capsys, "update", "agent-skill-md", "--dry-run", "--json",
                              "--project", project)
    [moved] = json.loads(out)
    assert (moved["status"], moved["version"], moved["previous"]["version"]) == \
        ("dry-run", "9.9.9", was)
    assert snapshot(project) == before  # nothing written

    code, out, err = run_main(capsys, "update", "--project", project)  # the real one moves
    assert code == 0 and f"Updated {SKILL} 9.9.9 (was {was})" in out, err
    assert snapshot(project) != before
