"""Unpack a .docx into a folder and pretty-print its XML parts for editing."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from xml.dom import minidom


def unpack(docx: Path, target: Path) -> None:
    with zipfile.ZipFile(docx) as archive:
        for member in archive.infolist():
            destination = (target / member.filename).resolve()
            if not destination.is_relative_to(target.resolve()):
                raise SystemExit(f"refusing {member.filename}: outside {target}")
            archive.extract(member, target)
    for part in target.rglob("*.xml"):
        text = minidom.parseString(part.read_bytes()).toprettyxml(indent="  ")
        part.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    unpack(Path(sys.argv[1]), Path(sys.argv[2]))
