"""The local registry's revisions: one content-addressed folder each, written and read back.

`revisions/<sha>/` holds `tree.json` (every path with its SHA-256 and size, the content hash,
the executable files and the empty folders) and `files/`. The sha is the SHA-1 of the listing,
so the same content always gives the same sha; executable bits and empty folders enter it only
when there are any, so revisions stored before they were recorded keep their sha.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from registry._io import atomic_write_text, make_temp_dir
from registry.errors import RegistryError, UnsafeSkill
from registry.format.skill import content_hash
from registry.scan import SizeLimits, check_relpath, write_file
from registry.stores.files import HOSTILE_HINT, Layout, apply_layout, read_layout, require_empty


def write_revision(revisions: Path, files: list[tuple[str, Path]], layout: Layout,
                   limits: SizeLimits) -> tuple[str, bool]:
    """Copy files into a temp folder, name it by its content, rename it into place.

    Returns:
        (sha, whether the revision is new).
    """
    revisions.mkdir(parents=True, exist_ok=True)
    tmp = make_temp_dir(".tmp-", revisions)
    try:
        budget, listing = limits.budget(), []
        for rel, full in files:
            data = full.read_bytes()
            budget.take(rel, len(data))
            write_file(tmp / "files", rel, data)
            listing.append({"path": rel, "sha256": hashlib.sha256(data).hexdigest(),
                            "size": len(data)})
        (tmp / "files").mkdir(exist_ok=True)
        text = "".join(f"{e['path']}\0{e['sha256']}\n" for e in listing)
        text += "".join(f"{rel}\0+x\n" for rel in layout.executable)
        text += "".join(f"{rel}/\0dir\n" for rel in layout.empty_dirs)
        sha = hashlib.sha1(b"hubskills-tree\n" + text.encode()).hexdigest()
        tree = {"sha": sha, "content_hash": content_hash(tmp / "files"), "files": listing,
                **(layout.to_json() if layout.executable or layout.empty_dirs else {})}
        write_json(tmp / "tree.json", tree)
        final = revisions / sha
        if final.exists():
            shutil.rmtree(tmp)
            return sha, False
        os.rename(tmp, final)
        return sha, True
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_revision(rev: Path, where: str, dest: Path, limits: SizeLimits) -> tuple[list[str],
                                                                               str | None]:
    """Write revision `rev`'s files into the empty folder `dest`, each checked.

    Returns:
        (the files' paths, the content hash `tree.json` records).

    Raises:
        UnsafeSkill: an unsafe path, a link, files over `limits`, a digest that does not match.
    """
    files, layout, content = revision_bytes(rev, where, limits)
    require_empty(dest)
    for path, data in files.items():
        write_file(dest, path, data)
    apply_layout(dest, layout)
    return list(files), content


def revision_bytes(rev: Path, where: str, limits: SizeLimits,
                   digests: dict[str, str] | None = None) -> tuple[dict[str, bytes], Layout,
                                                                    str | None]:
    """Revision `rev`'s files as bytes, each checked as `read_revision` checks it, written
    nowhere; with its layout (exec bits, empty folders) and the content hash `tree.json`
    records. `digests`, when given, receives each file's SHA-256 (hex) just checked against
    its bytes.

    Raises:
        UnsafeSkill: an unsafe path, a link, files over `limits`, a digest that does not match.
    """
    tree = read_json(rev / "tree.json", {})
    entries = [e for e in tree["files"] if check_relpath(e["path"])]
    limits.check([(e["path"], int(e.get("size", 0))) for e in entries], hint=HOSTILE_HINT)
    paths = [e["path"] for e in entries]
    layout = read_layout(json.dumps(tree).encode() if "executable" in tree else None,
                         paths, limits)
    files = {}
    for entry in entries:
        src = rev / "files" / entry["path"]
        if src.is_symlink() or not src.is_file():
            why = "a symlink, not a regular file" if src.is_symlink() else "not a regular file"
            raise UnsafeSkill(f"{where}: {entry['path']} is {why}; links are never followed "
                              "or installed", hint=HOSTILE_HINT)
        data = src.read_bytes()
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            raise UnsafeSkill(f"{where}: {entry['path']} does not match its digest; the local "
                              "registry is damaged",
                              hint="hubskills registry seed --force, or publish again")
        files[entry["path"]] = data
    if digests is not None:
        digests.update((entry["path"], entry["sha256"]) for entry in entries)
    return files, layout, tree.get("content_hash")


def read_json(path: Path, default: Any) -> Any:
    """A JSON file's content; `default` when it is missing.

    Raises:
        RegistryError: the file is damaged.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default
    except ValueError as err:
        raise RegistryError(f"{path} is damaged ({err})",
                            hint="hubskills registry path  # inspect or remove it") from err


def write_json(path: Path, data: Any) -> None:
    """Replace a JSON file atomically."""
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
