"""Pack an unpacked folder back into a .docx ([Content_Types].xml first, as Word expects)."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path


def pack(folder: Path, docx: Path) -> None:
    parts = sorted(p for p in folder.rglob("*") if p.is_file())
    parts.sort(key=lambda p: p.name != "[Content_Types].xml")
    with zipfile.ZipFile(docx, "w", zipfile.ZIP_DEFLATED) as archive:
        for part in parts:
            archive.write(part, part.relative_to(folder).as_posix())


if __name__ == "__main__":
    pack(Path(sys.argv[1]), Path(sys.argv[2]))
