"""The file tree reads as the architecture: no module grows past the hard cap."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HARD_CAP = 500


def test_no_library_module_exceeds_the_hard_cap():
    too_big = {
        str(path.relative_to(ROOT)): n
        for path in (ROOT / "registry").rglob("*.py")
        if (n := len(path.read_text().splitlines())) > HARD_CAP
    }
    assert too_big == {}


def test_space_never_imports_huggingface_hub():
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "space").rglob("*.py")
        if "huggingface_hub" in path.read_text()
    ]
    assert offenders == []
