"""`atomic_write_*`: never half a file, and the file's mode is what a plain write would give."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from registry._io import atomic_write_bytes, atomic_write_text


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_the_mode_of_any_new_file_not_0600(tmp_path):
    """`skills.lock` came out 0600 (mkstemp's mode): a shared checkout's lockfile must not."""
    code = ("import os, sys; os.umask(0o022); from pathlib import Path; "
            "from registry._io import atomic_write_text; "
            "atomic_write_text(Path(sys.argv[1]), 'x'); open(sys.argv[2], 'w').write('y')")
    new, plain = tmp_path / "skills.lock", tmp_path / "plain"
    subprocess.run([sys.executable, "-c", code, str(new), str(plain)], check=True)
    assert _mode(new) == _mode(plain) == 0o644


def test_an_existing_file_keeps_its_mode_and_the_new_bytes_land_whole(tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("old")
    script.chmod(0o750)
    atomic_write_bytes(script, b"new")
    assert _mode(script) == 0o750 and script.read_bytes() == b"new"
    assert sorted(os.listdir(tmp_path)) == ["run.sh"]  # no temporary file left beside it


def test_a_failed_write_leaves_the_old_bytes(tmp_path):
    target = tmp_path / "card.md"
    atomic_write_text(target, "kept")
    try:
        atomic_write_text(target, "\ud800")  # cannot be encoded: fails before any byte lands
    except UnicodeEncodeError:
        pass
    assert target.read_text() == "kept" and sorted(os.listdir(tmp_path)) == ["card.md"]
