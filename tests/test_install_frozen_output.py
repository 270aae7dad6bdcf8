"""`install --frozen` (or any install that leaves skills.lock as it was) does not say a skill
was `pinned in skills.lock`: a walk read that for every skill of a frozen install, which never
writes the lock. It says `as skills.lock pins`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests import test_signing
from tests.test_install import run_main
from tests.test_signing import incoming

server = test_signing.server  # the signing tests' git server and project
project = test_signing.project


def test_a_frozen_install_says_the_lock_pins_it_not_that_it_pinned_it(
        project: Path, capsys: pytest.CaptureFixture[str]):
    incoming(project, "csv-clean")
    code, out, err = run_main(capsys, "pull", "./incoming/csv-clean", "--project", project)
    assert code == 0 and "pinned in skills.lock" in out, err
    lock = (project / "skills.lock").read_bytes()
    shutil.rmtree(project / ".agents")
    code, out, err = run_main(capsys, "install", "--frozen", "--project", project)
    flat = " ".join(out.split())
    assert code == 0, err
    assert (project / ".agents/skills/csv-clean/SKILL.md").is_file()
    assert (project / "skills.lock").read_bytes() == lock
    assert "pinned in" not in flat and "as skills.lock pins" in flat
