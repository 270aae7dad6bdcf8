"""Registry references wherever a skill is taken, and which agents will see a pulled skill.

Every command runs as a process of its own, piped, from a folder outside the checkout, against
the seeded local registry (`hubskills/agent-skill-md` and two more).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from cli_process import hubskills
from fakes.openai_server import FakeOpenAIServer

SKILL = "hubskills/agent-skill-md"
SUITE = Path(__file__).resolve().parent.parent / "skills/agent-skill-md/evals/evals.json"


def run(*args, cwd: Path, ok: bool = True, **env):
    done = hubskills(*args, cwd=cwd, **env)
    assert (done.returncode == 0) == ok, (done.stdout, done.stderr)
    return done


def downloads(cwd: Path) -> int:
    found = json.loads(run("search", "agent-skill-md", "--json", cwd=cwd).stdout)
    return next(r["downloads"] for r in found if r["repo"] == SKILL)


def test_suite_show_and_scan_take_a_registry_reference_and_count_no_download(tmp_path):
    before = downloads(tmp_path)
    shown = json.loads(run("suite", "show", SKILL, "--json", cwd=tmp_path).stdout)
    assert len(shown["cases"]) == len(json.loads(SUITE.read_text())["cases"])
    scanned = json.loads(run("scan", SKILL, "--json", cwd=tmp_path).stdout)
    assert scanned["target"] == SKILL and scanned["worst"] is None
    table = run("suite", "show", f"{SKILL}@1.1.0", cwd=tmp_path, COLUMNS="200").stdout
    assert table.startswith(f"{SKILL}@1.1.0: evals/evals.json — ")  # the reference, no tmp path
    assert downloads(tmp_path) == before  # looks, not downloads
    run("pull", SKILL, cwd=tmp_path)
    assert downloads(tmp_path) == before + 1  # a pull is one
    assert list(tmp_path.iterdir()) != [] and not list(Path(tmp_path).glob("*.hubskills-*"))


@pytest.mark.parametrize("command", [["eval"], ["suite", "show"], ["scan"], ["info"]])
def test_a_missing_folder_says_so_and_hints_the_registry_reference(tmp_path, command):
    done = run(*command, "skills/agent-skill-md", cwd=tmp_path, ok=False)
    assert done.returncode == 1
    assert "skills/agent-skill-md: no such folder" in done.stderr
    assert f"Hint: hubskills {' '.join(command)} {SKILL}" in done.stderr
    unknown = run(*command, "no-skill-called-this", cwd=tmp_path, ok=False)
    assert "no-skill-called-this: no such folder" in unknown.stderr
    assert "Hint: hubskills search no-skill-called-this" in unknown.stderr


@pytest.mark.parametrize("command", [["eval"], ["suite", "show"], ["scan"], ["info"]])
def test_a_missing_dot_slash_folder_is_a_folder_not_a_registry_id(tmp_path, command):
    done = run(*command, "./agent-skill-md", cwd=tmp_path, ok=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "agent-skill-md: no such folder" in done.stderr  # eval and suite show drop the ./
    assert f"Hint: hubskills {' '.join(command)} {SKILL}" in done.stderr


def test_a_mistyped_skill_name_hints_the_closest_registry_skill(tmp_path):
    typo = run("info", "hubskills/agent-skil-md", cwd=tmp_path, ok=False)
    assert "no skill 'hubskills/agent-skil-md'" in typo.stderr
    assert f"Hint: hubskills info {SKILL}  # the closest name" in typo.stderr
    bare = run("eval", "agent-skil-md", cwd=tmp_path, ok=False)
    assert f"Hint: hubskills eval {SKILL}  # the closest name" in bare.stderr
    pulled = run("pull", "hubskills/agent-skil-md", cwd=tmp_path, ok=False)
    assert pulled.returncode == 1  # the pull of the closest name, not a look at it (a walk)
    assert f"Hint: hubskills pull {SKILL}  # the closest name" in pulled.stderr


def test_pull_of_a_bare_name_takes_the_folder_here_or_hints_the_registry_skill(tmp_path):
    missing = run("pull", "agent-skill-md", cwd=tmp_path, ok=False)
    assert missing.returncode == 1 and "agent-skill-md: no such folder" in missing.stderr
    assert f"Hint: hubskills pull {SKILL}" in missing.stderr  # not "is not a skill id"
    run("new", "my-skill", cwd=tmp_path)
    pulled = run("pull", "my-skill", cwd=tmp_path)  # as `new` said it, no ./ needed
    assert (tmp_path / ".agents/skills/my-skill/SKILL.md").is_file(), pulled.stdout
    # the scaffold is a draft: said before it reaches the agents, as `eval` says it
    said = " ".join(pulled.stderr.split())
    assert "publish would refuse this folder as it is" in said, pulled.stderr
    assert "so your agents will read a draft: hubskills validate my-skill" in said
    shutil.copytree(Path(__file__).parents[1] / "skills" / "agent-skill-md",
                    tmp_path / "mine" / "agent-skill-md")
    finished = run("pull", "./mine/agent-skill-md", cwd=tmp_path)
    assert "Warning" not in finished.stderr, finished.stderr  # a skill publish takes: no word


def test_tune_of_a_folder_not_pulled_yet_says_which_pull_makes_it(tmp_path):
    done = run("tune", ".agents/skills/agent-skill-md", "-m", "local/x", cwd=tmp_path, ok=False)
    assert done.returncode == 1 and "Usage:" not in done.stderr  # not click's usage error
    assert ".agents/skills/agent-skill-md: no such folder" in done.stderr
    assert f"Hint: hubskills pull {SKILL}" in done.stderr


def test_info_takes_a_pulled_folder_a_version_and_refuses_an_unknown_one(tmp_path):
    run("pull", SKILL, cwd=tmp_path)
    by_folder = json.loads(run("info", ".agents/skills/agent-skill-md", "--json",
                               cwd=tmp_path).stdout)
    assert by_folder["repo"] == SKILL
    assert json.loads(run("info", f"{SKILL}@1.1.0", "--json", cwd=tmp_path).stdout)["repo"] \
        == SKILL
    missing = run("info", f"{SKILL}@9.9.9", cwd=tmp_path, ok=False)
    assert "9.9.9" in missing.stderr and f"hubskills versions {SKILL}" in missing.stderr


def test_pull_with_an_empty_version_is_refused_and_writes_nothing(tmp_path):
    done = run("pull", f"{SKILL}@", cwd=tmp_path, ok=False)
    assert "names no version after '@'" in done.stderr
    assert f"hubskills versions {SKILL}" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_eval_of_a_registry_reference_is_placed_as_that_version(tmp_path):
    case = json.loads(SUITE.read_text())["cases"][0]["id"]
    with FakeOpenAIServer(responder=lambda body: "I do not know.") as server:
        done = run("eval", SKILL, "-m", "local/fake", "--base-url", server.url, "--runs", "1",
                   "--cases", case, "--json", cwd=tmp_path)
        assert len(server.bodies) == 2  # one case, both arms
    manifest = json.loads(done.stdout)["manifest"]
    assert manifest["skill_repo"] == SKILL and manifest["skill_version"] == "1.1.0"
    assert manifest["case_ids"] == [case]


def fake_binary(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


def test_agents_lists_every_agent_and_detects_claude_by_its_command(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "CLAUDE.md").write_text("# notes\n")
    bare = json.loads(run("agents", "--json", cwd=project, HOME=str(home),
                          PATH=os.defpath).stdout)
    by_name = {row["name"]: row for row in bare}
    assert {"claude", "codex", "cursor", "opencode", "gemini", "droid", "pi",
            "firebender", "letta", "mux", "autohand", "vibe", "openhands", "junie"} <= set(by_name)
    assert by_name["claude"]["project"] == "CLAUDE.md" and by_name["claude"]["global"] is None
    assert by_name["claude"]["project_folder"] == ".claude/skills"
    path = f"{fake_binary(tmp_path / 'bin', 'claude')}{os.pathsep}{os.defpath}"
    found = {r["name"]: r for r in json.loads(run("agents", "--json", cwd=project,
                                                  HOME=str(home), PATH=path).stdout)}
    assert found["claude"]["global"] == "claude on PATH"
    table = run("agents", cwd=project, HOME=str(home), PATH=path, COLUMNS="80").stdout
    # an agent that is not detected: claude is (CLAUDE.md), so not claude (a walk)
    assert "not detected" in table and "--agent windsurf" in table
    assert "--agent claude" not in table


def test_a_pull_says_which_agents_see_it_and_how_to_add_the_others(tmp_path):
    done = run("pull", SKILL, cwd=tmp_path, HOME=str(tmp_path / "home"), COLUMNS="80")
    assert "will see it: Codex, Cursor" in done.stdout
    assert "not seen by: Claude Code" in done.stdout
    # the command whole on a line of its own, at 80 columns too (it was cut after --agent)
    assert f"    hubskills pull {SKILL} --agent claude" in done.stdout.splitlines()
    added = run("pull", SKILL, "--agent", "claude", "--json", cwd=tmp_path,
                HOME=str(tmp_path / "home"))
    [result] = json.loads(added.stdout)
    assert "claude" in result["seen_by"] and "claude" not in result["not_seen_by"]
    assert (tmp_path / ".claude/skills/agent-skill-md/SKILL.md").is_file()


def test_agents_with_their_own_folder_get_a_link_and_readers_of_agents_none(tmp_path):
    (tmp_path / ".autohand").mkdir()  # Autohand reads .autohand/skills; Mux reads .agents/skills
    (tmp_path / ".mux").mkdir()
    [result] = json.loads(run("pull", SKILL, "--json", cwd=tmp_path,
                              HOME=str(tmp_path / "home")).stdout)
    assert {"autohand", "mux"} <= set(result["seen_by"])
    link = tmp_path / ".autohand/skills/agent-skill-md"
    assert link.is_symlink() and (link / "SKILL.md").is_file()
    assert not (tmp_path / ".mux/skills").exists()
    home, moved = tmp_path / "home3", tmp_path / "vibe-home"  # VIBE_HOME moves ~/.vibe
    home.mkdir()
    moved.mkdir()
    run("pull", SKILL, "--global", "--agent", "vibe", cwd=tmp_path, HOME=str(home),
        PATH=os.defpath, VIBE_HOME=str(moved))
    assert (moved / "skills/agent-skill-md/SKILL.md").is_file()


def test_a_global_pull_links_for_claude_when_its_command_is_installed(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    path = f"{fake_binary(tmp_path / 'bin', 'claude')}{os.pathsep}{os.defpath}"
    run("pull", SKILL, "--global", cwd=tmp_path, HOME=str(home), PATH=path)
    assert (home / ".claude/skills/agent-skill-md/SKILL.md").is_file()  # ~/.claude made for it
    moved = tmp_path / "claude-config"
    moved.mkdir()
    other = tmp_path / "home2"
    other.mkdir()
    done = run("pull", SKILL, "--global", "--json", cwd=tmp_path, HOME=str(other),
               PATH=os.defpath, CLAUDE_CONFIG_DIR=str(moved))
    assert (moved / "skills/agent-skill-md/SKILL.md").is_file()  # CLAUDE_CONFIG_DIR honoured
    assert not (other / ".claude").exists()
    assert "claude" in json.loads(done.stdout)[0]["seen_by"]
