"""The suite a replay checks a run against, parsed and hashed once a process for the same text
at the same place (a replay repeated, a Space verifying a skill's runs)."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path

from registry.format.inputs import InputFile
from registry.format.suite import MAX_SUITE_BYTES, Suite, load_suite

_SUITES: OrderedDict[tuple[str, str, bytes], tuple[Suite, str]] = OrderedDict()
_SUITES_KEPT = 4  # the suites (and their hashes) of the last few skills replayed here
_SUITES_LOCK = threading.Lock()


def load_suite_once(path: Path, folder: Path) -> tuple[Suite, str]:
    """`load_suite(path, skill_dir=folder)` and its `suite_hash`, each worked out once a
    process for the same suite text at the same place (a replay repeated, a Space verifying a
    skill's runs): kept only for a suite that read no other file (none listed by path), so the
    text and the folder's resolved path decide it all; keyed by the sha256 of the text the
    suite was parsed from (`Suite._text`, read once), never by times or sizes. Nothing in a
    replay changes a suite (plans copy what they change).

    Raises:
        HubskillsError: `load_suite`'s.
    """
    place = (str(path.resolve()), str(folder.resolve()))
    text: str | None = None
    key: tuple[str, str, bytes] | None = None
    try:
        if path.stat().st_size <= MAX_SUITE_BYTES:
            text = path.read_bytes().decode("utf-8-sig")
            with _SUITES_LOCK:
                kept = _SUITES.get(key := (*place, hashlib.sha256(text.encode()).digest()))
                if kept is not None:
                    _SUITES.move_to_end(key)
                    return kept
    except (OSError, UnicodeDecodeError):
        pass  # load_suite says what is wrong
    suite = load_suite(path, skill_dir=folder)
    found = suite.suite_hash()
    parsed = suite.origin()[1]  # the text it was parsed from, as load_suite read it
    if parsed is not None and not any(isinstance(file, InputFile) for case in suite.cases
                                    for file in case.files.values()):
        if parsed != text or key is None:  # changed between the two reads: its own key
            key = (*place, hashlib.sha256(parsed.encode()).digest())
        with _SUITES_LOCK:
            _SUITES[key] = suite, found
            while len(_SUITES) > _SUITES_KEPT:
                _SUITES.popitem(last=False)
    return suite, found
