"""A new user's walk: hints that named a command other than the one to run next (`pull
--force` for `update`, an agent already detected, `info` for a mistyped `pull`, no
did-you-mean for a mistyped `remove`). Each hinted command is checked to be the right one."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.test_install import run_main

SKILL = "hubskills/agent-skill-md"


@pytest.fixture
def project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    folder = tmp_path / "proj"
    (folder / ".claude").mkdir(parents=True)
    code, _, err = run_main(capsys, "pull", SKILL, "--project", folder)
    assert code == 0, err
    return folder


def hint(err: str) -> str:
    """The command a `Hint:` line names, up to its comment."""
    found = re.search(r"^Hint: (?:.*?then )?(hubskills [^#]*?)\s*(?:#.*)?$", err, re.M)
    assert found, err
    return found.group(1)


def test_update_of_an_edited_skill_hints_update_force(project: Path,
                                                     capsys: pytest.CaptureFixture[str]):
    edited = project / ".agents/skills/agent-skill-md/SKILL.md"
    edited.write_text(edited.read_text() + "\nMy note.\n")
    code, _, err = run_main(capsys, "update", "agent-skill-md", "--project", project)
    assert code == 1 and "local changes" in err
    assert "pull with --force" not in err, err
    assert hint(err) == "hubskills update agent-skill-md --force"
    assert "My note." in edited.read_text()
    code, out, err = run_main(capsys, *shlex.split(hint(err))[1:], "--project", project)
    assert code == 0, err
    assert "My note." not in edited.read_text()


def test_agents_hints_serving_an_agent_that_is_not_detected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """It said `--agent claude` where Claude Code was the one agent detected."""
    def served(folder: Path) -> str:
        code, out, err = run_main(capsys, "agents", "--project", folder)
        assert code == 0, err
        found = re.search(r"Serve one that is not detected:\s+hubskills pull NS/NAME "
                          r"--agent (\S+)\s*$", out)
        assert found, out
        return found.group(1)

    bare = tmp_path / "bare"
    bare.mkdir()
    assert served(bare) == "claude"
    (bare / ".claude").mkdir()
    (bare / ".windsurf").mkdir()
    named = served(bare)
    assert named not in ("claude", "windsurf")
    code, out, _ = run_main(capsys, "agents", "--project", bare, "--json")
    row = next(r for r in json.loads(out) if r["name"] == named)
    assert row["project"] is None and not row["reads_agents_skills"]


def test_a_mistyped_pull_hints_the_pull_of_the_closest_name_with_its_options(
        project: Path, capsys: pytest.CaptureFixture[str]):
    """It hinted `hubskills info hubskills/agent-skill-md`: a look, not the pull asked."""
    code, _, err = run_main(capsys, "pull", "hubskills/agent-skil-md", "--agent", "windsurf",
                            "--copy", "--project", project)
    assert code == 1 and "no skill 'hubskills/agent-skil-md'" in err
    assert hint(err) == shlex.join(["hubskills", "pull", SKILL, "--agent", "windsurf", "--copy",
                                    "--project", str(project)])
    code, out, err = run_main(capsys, *shlex.split(hint(err))[1:])
    assert code == 0, err
    assert (project / ".windsurf/skills/agent-skill-md").is_dir()


def test_a_mistyped_pull_far_from_any_name_hints_search(project: Path,
                                                       capsys: pytest.CaptureFixture[str]):
    code, _, err = run_main(capsys, "pull", "hubskills/zzzzqqq", "--project", project)
    assert code == 1 and hint(err) == "hubskills search zzzzqqq"


@pytest.mark.parametrize("verb", ["remove", "update"])
def test_a_mistyped_name_gets_did_you_mean_from_the_installed_names(
        project: Path, capsys: pytest.CaptureFixture[str], verb: str):
    code, _, err = run_main(capsys, verb, "agent-skil", "--project", project)
    assert code == 1 and "did you mean 'agent-skill-md'?" in err, err
    assert hint(err) == f"hubskills {verb} agent-skill-md"
    code, _, err = run_main(capsys, verb, "zzzzqqq", "--project", project)
    assert code == 1 and "did you mean" not in err and hint(err) == "hubskills list"
    if verb == "remove":
        code, _, err = run_main(capsys, "remove", "agent-skill-md", "--project", project)
        assert code == 0, err
        assert not (project / ".agents/skills/agent-skill-md").exists()
