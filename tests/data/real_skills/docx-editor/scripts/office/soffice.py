"""Run LibreOffice headless with a private profile; wait for its local socket before use."""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

SOCKET_NAME = "soffice.sock"


def _soffice() -> str:
    for name in ("soffice", "libreoffice"):
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit("LibreOffice is not installed (soffice not on PATH)")


def _environment(profile: Path) -> dict[str, str]:
    env = os.environ.copy()
    env["SAL_USE_VCLPLUGIN"] = "svp"  # no display needed
    env["HOME"] = str(profile)  # keep LibreOffice's profile out of the user's home
    return env


def _wait_for_socket(path: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(path))
                return
            except OSError:
                time.sleep(0.2)
    raise SystemExit(f"LibreOffice did not open {path} within {timeout:.0f}s")


def convert(source: Path, target_format: str) -> Path:
    with tempfile.TemporaryDirectory(prefix="soffice-") as tmp:
        profile = Path(tmp)
        pipe = profile / SOCKET_NAME
        accept = f"--accept=pipe,name={pipe};urp;"
        server = subprocess.Popen([_soffice(), "--headless", accept], env=_environment(profile))
        try:
            _wait_for_socket(pipe)
            subprocess.run(
                [_soffice(), "--headless", "--convert-to", target_format,
                 "--outdir", str(source.parent), str(source)],
                check=True, env=_environment(profile), timeout=120,
            )
        finally:
            server.terminate()
    return source.with_suffix(f".{target_format}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["convert"])
    parser.add_argument("source", type=Path)
    parser.add_argument("--to", default="pdf")
    args = parser.parse_args()
    print(convert(args.source, args.to))


if __name__ == "__main__":
    main()
