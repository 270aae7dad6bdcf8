"""A replay's suite, parsed and hashed once a process (`verify.suites.load_suite_once`): kept
by the text it was read from, never by times or sizes, never for a suite reading other files."""

from __future__ import annotations

import json
import os
from pathlib import Path

from registry.format.suite import load_suite
from registry.verify.suites import load_suite_once as _load_suite


def _skill(root: Path, value: str, files: dict | None = None) -> Path:
    folder = root / "cache-skill"
    (folder / "evals").mkdir(parents=True, exist_ok=True)
    case = {"id": "c1", "prompt": "Which port?", "checks": [{"type": "contains",
                                                            "value": [value]}]}
    if files is not None:
        case["files"] = files
    (folder / "evals" / "evals.json").write_text(json.dumps({"cases": [case]}))
    return folder


def _same_stat(path: Path, edit) -> None:
    """`edit` the file, then give it back its old times (same size: same stat but ctime)."""
    before = path.stat()
    edit()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size


def test_the_same_text_is_parsed_once_and_hashes_as_load_suite_does(tmp_path):
    folder = _skill(tmp_path, "4417")
    path = folder / "evals" / "evals.json"
    suite, found = _load_suite(path, folder)
    again, found_again = _load_suite(path, folder)
    assert again is suite and found_again == found == load_suite(path,
                                                                 skill_dir=folder).suite_hash()


def test_an_edit_that_keeps_size_and_times_is_read_again(tmp_path):
    folder = _skill(tmp_path, "4417")
    path = folder / "evals" / "evals.json"
    _, found = _load_suite(path, folder)
    _same_stat(path, lambda: path.write_text(path.read_text().replace("4417", "4418")))
    suite, edited = _load_suite(path, folder)
    assert edited != found and suite.cases[0].checks[0].values() == ["4418"]
    assert edited == load_suite(path, skill_dir=folder).suite_hash()


def test_a_suite_listing_a_file_is_never_kept(tmp_path):
    folder = _skill(tmp_path, "4417", files={"port.txt": {"path": "evals/port.txt"}})
    listed = folder / "evals" / "port.txt"
    listed.write_text("port 4417\n")
    path = folder / "evals" / "evals.json"
    first, found = _load_suite(path, folder)
    _same_stat(listed, lambda: listed.write_text("port 4418\n"))
    second, edited = _load_suite(path, folder)
    assert second is not first and edited != found
    assert second.cases[0].input_bytes()["port.txt"] == b"port 4418\n"


def test_the_same_text_in_another_folder_is_its_own_entry(tmp_path):
    one, two = _skill(tmp_path / "a", "4417"), _skill(tmp_path / "b", "4417")
    first, _ = _load_suite(one / "evals" / "evals.json", one)
    second, _ = _load_suite(two / "evals" / "evals.json", two)
    assert second is not first
