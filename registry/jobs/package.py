"""The client's own hubskills as a wheel, so a Job runs exactly the code that planned it.

The wheel is built from the imported `registry` package's files (whatever installed them: a
PyPI wheel, an editable checkout), with the installed distribution's requirements, and no
network or build backend. Entries are written in a fixed order with a fixed timestamp, so the
same code always gives the same bytes: its sha256 names the uploaded file, and a client that
already uploaded this version uploads nothing.
"""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from importlib import metadata
from pathlib import Path

from registry._version import __version__

DIST = "hubskills"
_EPOCH = (2020, 1, 1, 0, 0, 0)
_SKIP_PARTS = {"__pycache__"}


def _requirements() -> list[str]:
    try:
        return list(metadata.requires(DIST) or [])
    except metadata.PackageNotFoundError:  # imported from a bare checkout: the image has them
        return []


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _package_files() -> list[tuple[str, bytes]]:
    root = Path(__file__).resolve().parent.parent  # the `registry` package
    files = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not _SKIP_PARTS.intersection(rel.parts) and path.suffix != ".pyc":
            files.append((f"registry/{rel.as_posix()}", path.read_bytes()))
    return files


def build_wheel() -> tuple[str, bytes]:
    """This hubskills as `(file name, wheel bytes)`; the same code gives the same bytes."""
    info = f"{DIST}-{__version__}.dist-info"
    meta = "".join([f"Metadata-Version: 2.1\nName: {DIST}\nVersion: {__version__}\n",
                    *(f"Requires-Dist: {req}\n" for req in _requirements())])
    entries = [*_package_files(),
               (f"{info}/METADATA", meta.encode()),
               (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: hubskills\n"
                                 b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
               (f"{info}/entry_points.txt",
                b"[console_scripts]\nhubskills = registry.cli:main\n")]
    record = "\n".join([*(_record_line(n, d) for n, d in entries), f"{info}/RECORD,,", ""])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in [*entries, (f"{info}/RECORD", record.encode())]:
            entry = zipfile.ZipInfo(name, date_time=_EPOCH)
            entry.external_attr = 0o644 << 16
            wheel.writestr(entry, data, compress_type=zipfile.ZIP_DEFLATED)
    return f"{DIST}-{__version__}-py3-none-any.whl", buffer.getvalue()
