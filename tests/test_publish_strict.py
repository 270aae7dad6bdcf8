"""`publish` and `eval` know what `validate` knows (issue 38): the untouched scaffold is refused
with its four warnings listed (`--force`, or a yes on a terminal, publishes it and says what
was overridden), and `eval` says before any model call that publish would refuse the folder.
"""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import REPO_ROOT, cli_env, hubskills, read_all

from registry.cli import main
from registry.config import Settings
from registry.format.suite_check import check_suite
from registry.format.validate import validate_skill
from registry.publishing.checks import refusal
from registry.publishing.publish import publish_skill
from registry.registries import get_store
from tests.test_install import run_main

SCAFFOLD_WARNINGS = ("placeholder-description", "placeholder-body", "placeholder-check",
                     "small-suite")


@pytest.fixture
def scaffold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> Path:
    monkeypatch.chdir(tmp_path)
    assert run_main(capsys, "new", "draft")[0] == 0
    return tmp_path / "draft"


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_untouched_scaffold_is_refused_with_its_warnings(
        scaffold: Path, capsys: pytest.CaptureFixture[str]):
    code, out, err = run_main(capsys, "publish", "draft")
    assert code == 1
    assert all(warning in out for warning in SCAFFOLD_WARNINGS), out  # the table, as validate
    assert "Error: draft: hubskills validate reports 4 warnings" in _flat(err)
    assert "Hint: fix them, or publish anyway: hubskills publish draft --force" in _flat(err)
    assert run_main(capsys, "versions", "local/draft")[0] == 1  # nothing was published
    code, _, err = run_main(capsys, "publish", "draft", "--dry-run")
    assert code == 1 and "hubskills validate reports 4 warnings" in _flat(err)


def test_a_refusal_says_each_reason_whole_at_80_columns(scaffold: Path):
    """A walk: the refusal's table cut every reason (`the description is still…`), the text
    that says what to fix; they wrap whole, as `validate` prints them."""
    done = hubskills("publish", "draft", cwd=scaffold.parent, COLUMNS="80")
    code, out = done.returncode, done.stdout
    assert code == 1 and "…" not in out + done.stderr, out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    said = _flat(out)
    for problem in validate_skill(scaffold) + check_suite(scaffold):
        assert f"{problem.location()}: {problem.severity} {problem.code}: " \
               f"{_flat(problem.message)}" in said, said


def test_force_publishes_and_says_what_it_overrode(scaffold: Path,
                                                  capsys: pytest.CaptureFixture[str]):
    code, out, err = run_main(capsys, "publish", "draft", "--force")
    assert code == 0 and "Published local/draft v0.1.0" in out, err
    said = _flat(err)
    assert ("published despite what hubskills validate reports (placeholder-description, "
            "placeholder-body, placeholder-check, small-suite): overridden by --force") in said


def test_a_skill_validate_is_silent_about_publishes_as_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(REPO_ROOT / "skills/agent-skill-md", "agent-skill-md")
    code, out, err = run_main(capsys, "publish", "agent-skill-md", "--repo", "me/agent-skill-md")
    assert code == 0 and "Published me/agent-skill-md" in out and "Warning" not in err, err


def test_the_library_publishes_leniently_unless_strict(scaffold: Path):
    """`registry.publish_skill` (the Space's publish) keeps its behaviour; what validate
    reports travels in the plan."""
    settings = Settings.from_env()
    store = get_store(settings)
    assert refusal(scaffold) is not None
    with pytest.raises(Exception, match="hubskills validate reports 4 warnings"):
        publish_skill(store, scaffold, runs_dir=settings.runs_dir, strict=True, dry_run=True)
    plan = publish_skill(store, scaffold, runs_dir=settings.runs_dir, dry_run=True).plan
    assert [p.code for p in plan.problems] == list(SCAFFOLD_WARNINGS)


def _publish_on_a_terminal(folder: Path, answer: str) -> tuple[int, str]:
    primary, secondary = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "registry.cli", "publish", folder.name],
                               cwd=folder.parent, env=cli_env(COLUMNS="100", TERM="dumb",
                                                              NO_COLOR="1"),
                               stdin=secondary, stdout=secondary, stderr=secondary)
    os.close(secondary)
    os.write(primary, answer.encode() + b"\n")
    terminal = read_all(primary)
    os.close(primary)
    return process.wait(timeout=120), re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal)


def test_on_a_terminal_publish_asks_and_a_yes_publishes(scaffold: Path):
    code, terminal = _publish_on_a_terminal(scaffold, "n")
    assert code == 1 and "Publish anyway? [y/N]" in terminal, terminal
    assert "hubskills validate reports 4 warnings" in _flat(terminal)
    code, terminal = _publish_on_a_terminal(scaffold, "y")
    assert code == 0 and "Published local/draft" in terminal, terminal
    assert "overridden by your answer" in _flat(terminal)


def test_eval_says_first_that_publish_would_refuse_the_folder(
        scaffold: Path, capsys: pytest.CaptureFixture[str]):
    """The warning comes before any model call: here the only model is unreachable."""
    closed = ["-m", "local/m", "--base-url", "http://127.0.0.1:9/v1", "--runs", "1"]
    code, _, err = run_main(capsys, "eval", "draft", *closed)
    said = _flat(err)
    assert code == 1 and "cannot reach http://127.0.0.1:9/v1" in said, err
    warned = said.index("publish would refuse this folder as it is (draft: hubskills validate "
                        "reports 4 warnings")
    assert warned < said.index("cannot reach")
    assert "hubskills validate draft lists what to fix" in said
    shutil.copytree(REPO_ROOT / "skills/agent-skill-md", "agent-skill-md")
    code, _, err = run_main(capsys, "eval", "agent-skill-md", *closed)
    assert code == 1 and "publish would refuse" not in err, err
    shutil.copytree("agent-skill-md", "renamed")  # its name no longer matches its folder
    code, _, err = run_main(capsys, "eval", "renamed", *closed)
    assert "publish would refuse this folder as it is (renamed has 1 validation error)" \
        in _flat(err), err


def test_eval_of_a_pulled_folder_is_not_held_to_publish(
        scaffold: Path, capsys: pytest.CaptureFixture[str]):
    """A pulled folder was published already: nothing to say (even a forced scaffold)."""
    assert run_main(capsys, "publish", "draft", "--force")[0] == 0
    assert run_main(capsys, "pull", "local/draft", "--agent", "claude")[0] == 0
    with pytest.raises(SystemExit):
        main(["eval", ".agents/skills/draft", "-m", "local/m", "--base-url",
              "http://127.0.0.1:9/v1", "--runs", "1"])
    assert "publish would refuse" not in capsys.readouterr().err
