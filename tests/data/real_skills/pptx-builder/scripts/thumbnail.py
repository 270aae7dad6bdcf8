"""Render a deck's slides to a grid of PNG thumbnails through LibreOffice and pdftoppm."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path


def thumbnails(deck: Path, columns: int = 4) -> Path:
    env = dict(os.environ, SAL_USE_VCLPLUGIN="svp")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["soffice", "--headless", "--convert-to", "pdf", "--outdir", tmp,
                        str(deck)], check=True, env=env, timeout=180)
        pdf = Path(tmp) / deck.with_suffix(".pdf").name
        prefix = deck.with_name(deck.stem + "-slide")
        subprocess.run(["pdftoppm", "-png", "-r", "50", str(pdf), str(prefix)], check=True)
    grid = deck.with_name(deck.stem + "-thumbnails.png")
    subprocess.run(["montage", f"{prefix}-*.png", "-tile", f"{columns}x", "-geometry", "+4+4",
                    str(grid)], check=True)
    return grid


if __name__ == "__main__":
    print(thumbnails(Path(sys.argv[1])))
