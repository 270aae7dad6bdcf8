"""A replay rebuilds an agent sample's final workspace from paths a row names: whoever pushed the
row chose them. A path that could reach outside the replay's scratch folder (absolute, `..`, a
backslash, a drive, a device name, a NUL, through a link) is refused before any file operation,
the replay names it, and a victim file outside survives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_verify_agent import pushed, rows_of, run_file, settings, verify, write_rows

from registry.evaluation.workspace_checks import write_files
from registry.evaluation.workspace_paths import UnsafePath, path_problem, rebuild_workspace
from registry.results.replay_record import WorkspaceFile

__all__ = ["pushed", "run_file", "settings"]  # fixtures, shared with test_verify_agent

DEEP = "../" * 40  # from any scratch folder, up to the root


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file outside every scratch folder, that no replay may touch."""
    path = tmp_path / "victim" / "keep.txt"
    path.parent.mkdir()
    path.write_text("mine\n")
    return path


def _paths(victim: Path) -> dict[str, tuple[str, str]]:
    """Each kind of bad path: (the path a row names, the reason the replay gives)."""
    inside = str(victim).lstrip("/")
    return {"absolute": (str(victim), "an absolute path"),
            "parent": (DEEP + inside, "a parent folder (..)"),
            "backslash": (DEEP.replace("/", "\\") + inside, "a backslash"),
            "drive": ("C:" + str(victim), "a drive or stream name (:)"),
            "device": ("CON", "a device name (CON)"),
            "nul": (f"{DEEP}{inside}\0.txt", "a NUL or control character")}


@pytest.mark.parametrize("kind", ["absolute", "parent", "backslash", "drive", "device", "nul"])
@pytest.mark.parametrize("status", ["deleted", "added"])
def test_a_record_naming_a_path_outside_never_touches_it(settings, pushed, run_file, victim,
                                                         kind, status):
    path, why = _paths(victim)[kind]
    rows = rows_of(run_file)
    row = next(r for r in rows if r["arm"] == "skill")
    row["workspace"].append({"path": path, "status": status, "size": 7,
                             "content": None if status == "deleted" else "gotcha\n"})
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert victim.read_text() == "mine\n"
    assert report.status == "mismatch"
    [problem] = report.problems
    assert problem.startswith(f"{row['case_id']} #{row['repeat']} skill (local/fake-agent): "
                              f"its workspace record names {path!r}: {why}"), problem


def test_a_path_listed_twice_or_with_an_unknown_status_is_named(settings, pushed, run_file):
    rows = rows_of(run_file)
    row = next(r for r in rows if r["arm"] == "skill")
    row["workspace"].append({**row["workspace"][0], "status": "deleted", "content": None})
    write_rows(run_file, rows)
    assert "listed twice" in verify(settings, pushed[1]).problems[0]
    row["workspace"][-1]["status"] = "linked"
    write_rows(run_file, rows)
    assert "an unknown status 'linked'" in verify(settings, pushed[1]).problems[0]


def _record(*entries: tuple[str, str, str | None]) -> list[WorkspaceFile]:
    return [WorkspaceFile(path=p, status=s, content=c, size=len(c or "")) for p, s, c in entries]


def test_a_symlinked_parent_is_never_followed(tmp_path: Path, victim: Path):
    root = tmp_path / "scratch"
    root.mkdir()
    (root / "out").symlink_to(victim.parent)  # planted: the rebuild never makes one
    for record in (_record(("out/keep.txt", "deleted", None)),
                   _record(("out/new.txt", "added", "x"))):
        with pytest.raises(UnsafePath, match="'out/.*': it resolves outside the workspace"):
            rebuild_workspace(root, {}, record)
    assert victim.read_text() == "mine\n" and os.listdir(victim.parent) == ["keep.txt"]


def test_a_link_inside_the_folder_is_not_followed_either(tmp_path: Path):
    root = tmp_path / "scratch"
    (root / "real").mkdir(parents=True)
    (root / "real" / "f.txt").write_text("kept\n")
    (root / "link").symlink_to(root / "real")  # resolves inside: still never followed
    (root / "alias.txt").symlink_to(root / "real" / "f.txt")
    with pytest.raises(UnsafePath, match="'link/f.txt': link is a symbolic link"):
        rebuild_workspace(root, {}, _record(("link/f.txt", "modified", "changed\n")))
    with pytest.raises(UnsafePath, match="'alias.txt' is a symbolic link"):
        rebuild_workspace(root, {}, _record(("alias.txt", "deleted", None)))
    write_files(root, {"link/f.txt": "changed\n", "alias.txt": "changed\n"})
    assert (root / "real" / "f.txt").read_text() == "kept\n" and (root / "alias.txt").is_symlink()


def test_write_files_drops_every_refused_name_and_writes_the_rest(tmp_path: Path,
                                                                  victim: Path):
    root = tmp_path / "work"
    root.mkdir()
    names = {p for p, _ in _paths(victim).values()}
    write_files(root, {**dict.fromkeys(names, "gotcha\n"), "ok/a.txt": "fine\n"})
    assert victim.read_text() == "mine\n"
    assert [p.relative_to(root).as_posix() for p in sorted(root.rglob("*"))] == ["ok",
                                                                                 "ok/a.txt"]


@pytest.mark.parametrize(("name", "why"), [
    ("a/b.txt", None), ("./a", None), (".hidden/x", None), ("console.log", None),
    ("", "an empty name"), (".", "no file name"), ("a/../b", "a parent folder (..)"),
    ("nul.tar.gz", "a device name (nul.tar.gz)"), ("x/LPT1", "a device name (LPT1)"),
    ("a\tb", "a NUL or control character"), ("/etc/passwd", "an absolute path"),
    ("c:x", "a drive or stream name (:)")])
def test_path_problem(name: str, why: str | None):
    assert path_problem(name) == why


def test_a_replay_rebuilds_only_in_its_own_scratch_folder_and_removes_it(settings, pushed,
                                                                         tmp_path, monkeypatch):
    import tempfile

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where the replay's scratch goes
    assert verify(settings, pushed[1]).status == "verified"
    assert list(temp.iterdir()) == []
