"""Wording a newcomer met (issue 38, item 11), each as the CLI runs it: a process of its own,
piped, against the fake model server or the seeded registry. A count of one is singular, a
p-value below 0.001 reads `p < 0.001`, a value said once above a table says something, and
`update` and `install` say an unchanged skill in one line, and a pull that only links an agent
says "Linked"."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from cli_process import hubskills
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import knows_fact_if_told, make_skill

SKILL = "hubskills/agent-skill-md"


def run(*args, cwd: Path, **env):
    done = hubskills(*args, cwd=cwd, **{"COLUMNS": "200", **env})
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done


def evaluate(tmp_path: Path, n_cases: int):
    """`eval` of `make_skill`'s suite of ``n_cases`` (the fake model knows the fact if told)."""
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        return run("eval", make_skill(tmp_path / str(n_cases), n_cases), "-m", "local/fake",
                   "--base-url", server.url, "--runs", "1", cwd=tmp_path)


def test_a_count_of_one_is_singular(tmp_path):
    one = evaluate(tmp_path, 1)
    assert "1 case × 1 run" in one.stdout and "(1 case scores higher" in one.stdout, one.stdout
    assert not re.search(r"\b1 (cases|runs|samples)\b", one.stdout), one.stdout


def test_a_p_value_below_the_third_decimal_reads_p_below(tmp_path):
    many = evaluate(tmp_path, 12)  # 12 of 12 cases up: p = 0.00049
    assert "exact test p < 0.001 (12 cases score higher" in many.stdout, many.stdout
    assert "p = <" not in many.stdout


def test_agents_with_none_detected_never_says_detected_not_detected(tmp_path):
    (tmp_path / "home").mkdir()
    done = run("agents", cwd=tmp_path, COLUMNS="80", HOME=str(tmp_path / "home"),
               PATH=str(tmp_path / "no-bin"))
    assert "detected: not detected" not in done.stdout, done.stdout
    assert re.search(r"^detected: no$", done.stdout, re.M), done.stdout


def test_update_says_an_unchanged_skill_in_one_line(tmp_path):
    for skill in (SKILL, "hubskills/hf-hub-python-2x"):
        run("pull", skill, "--agent", "claude", cwd=tmp_path, HOME=str(tmp_path))
    done = run("update", cwd=tmp_path, HOME=str(tmp_path))
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("Up to date: ") for line in lines), lines
    assert any(line.startswith(f"Up to date: {SKILL} ") for line in lines), lines
    assert json.loads(run("update", "--json", cwd=tmp_path, HOME=str(tmp_path)).stdout)[0][
        "status"] == "up-to-date"  # --json keeps every field


def test_install_says_a_skill_already_in_place_in_one_line(tmp_path):
    """`install --frozen` (CI's command) printed nine lines for each pinned skill already in
    place: its folders, which agents see it, which do not, a pull to add one. One line, as
    `update` says it."""
    for skill in (SKILL, "hubskills/hf-hub-python-2x"):
        run("pull", skill, "--agent", "claude", cwd=tmp_path, HOME=str(tmp_path))
    done = run("install", "--frozen", cwd=tmp_path, HOME=str(tmp_path))
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("Up to date: ") for line in lines), lines
    shutil.rmtree(tmp_path / ".agents" / "skills" / "hf-hub-python-2x")
    again = run("install", cwd=tmp_path, HOME=str(tmp_path)).stdout  # one to put back: whole
    assert "Installed hubskills/hf-hub-python-2x" in again and "will see it" in again, again


def test_a_pull_that_only_adds_an_agent_says_linked_not_up_to_date(tmp_path):
    """`pull --agent claude` of a skill already installed for others created the Claude Code
    link and said "Up to date:" above it; it says "Linked" (a dry run "Would link", writing
    nothing) and marks the new link, and a pull that changes nothing still says up to date."""
    home = {"HOME": str(tmp_path / "home")}
    run("pull", SKILL, cwd=tmp_path, **home)
    claude = tmp_path / ".claude" / "skills" / "agent-skill-md"
    would = run("pull", SKILL, "--agent", "claude", "--dry-run", cwd=tmp_path, **home).stdout
    assert would.startswith(f"Would link {SKILL} "), would
    assert not (claude.exists() or claude.is_symlink())
    done = run("pull", SKILL, "--agent", "claude", cwd=tmp_path, **home).stdout
    assert done.startswith(f"Linked {SKILL} "), done
    assert re.search(r"^  \.claude/skills/agent-skill-md  \(symlink: claude, new\)$", done,
                     re.M), done
    assert (claude / "SKILL.md").is_file()
    again = run("pull", SKILL, "--agent", "claude", cwd=tmp_path, **home).stdout
    assert again.startswith(f"Up to date: {SKILL} ") and ", new)" not in again, again


def test_pull_commands_paste_into_a_shell_as_printed_with_a_long_id(tmp_path):
    """At 80 columns `Pull it:  hubskills pull` and the long id on the next line ran as two
    commands when pasted (the pull without its skill, then the id), and pull's command that
    adds an agent was cut likewise, and new's `validate` and keys new's `sign`. Each goes on
    lines of its own now, cut with a ` \\` continuation where it must be."""
    import subprocess

    name = "an-extremely-long-skill-name-that-tests-how-wide-tables-get-ok"
    shim = tmp_path / "bin" / "hubskills"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/ran\n')
    shim.chmod(0o755)

    def pasted_runs(printed: str, after: str) -> str:
        pasted = printed.split(after, 1)[1].split("\n  scan:", 1)[0].strip()
        (tmp_path / "ran").unlink(missing_ok=True)
        shell = subprocess.run(["bash", "-c", pasted], capture_output=True, text=True,
                               env={"PATH": f"{shim.parent}:/usr/bin:/bin"})
        assert shell.returncode == 0, (pasted, shell.stderr)
        return (tmp_path / "ran").read_text()

    created = run("new", name, cwd=tmp_path, HOME=str(tmp_path), COLUMNS="80").stdout
    assert pasted_runs(created, "then run") == f"validate {name}\n", created
    key = tmp_path / "a-folder-of-signing-keys-with-a-long-name" / "acme-signing-key.key"
    made = run("keys", "new", key, cwd=tmp_path, HOME=str(tmp_path), COLUMNS="80").stdout
    assert pasted_runs(made, "sign with:") == f"sign FOLDER --key {key}\n", made
    published = run("publish", name, "--force", cwd=tmp_path, HOME=str(tmp_path), COLUMNS="80")
    shown = run("info", f"local/{name}", cwd=tmp_path, HOME=str(tmp_path), COLUMNS="80")
    for done in (published, shown):
        assert max(map(len, done.stdout.splitlines())) <= 80, done.stdout
        assert pasted_runs(done.stdout, "Pull it:").startswith(f"pull local/{name}")
    pulled = run("pull", f"local/{name}", cwd=tmp_path, HOME=str(tmp_path), COLUMNS="80")
    assert max(map(len, pulled.stdout.splitlines())) <= 80, pulled.stdout
    assert pasted_runs(pulled.stdout, "every one):").startswith(
        f"pull local/{name} --agent claude")  # it was cut mid-command too


def test_info_of_an_unpublished_folder_gives_it_no_downloads(tmp_path):
    """`info my-skill` of a fresh scaffold said `downloads 0, likes 0, updated -` and that
    `my-skill is no published version of a skill` (issue 38, second walk): a folder that is
    in no registry has no downloads, and the sentence did not parse."""
    run("new", "my-skill", cwd=tmp_path)
    done = run("info", "my-skill", cwd=tmp_path)
    assert "downloads" not in done.stdout, done.stdout
    assert "my-skill matches no published version of a skill in the local registry" in \
        done.stderr, done.stderr
    refused = hubskills("eval", "my-skill", "--push", "-m", "local/m", "--base-url",
                        "http://127.0.0.1:9/v1", cwd=tmp_path, COLUMNS="200")
    assert refused.returncode == 1 and "my-skill matches no published version of a skill in " \
        "the local registry, so pushed results would belong to none" in refused.stderr
    published = run("info", SKILL, cwd=tmp_path)
    assert re.search(r"^downloads \d+, likes \d+, updated 20", published.stdout, re.M)


def test_runs_compare_with_no_changed_case_prints_no_empty_table(tmp_path):
    """It printed the per-case table's header alone under '0 improved, 0 regressed' (issue
    38, second walk)."""
    ids = [re.search(r"run (\d{8}-\d{6}-\w+)", evaluate(tmp_path, n).stdout)[1] for n in (1, 2)]
    done = run("runs", "compare", *ids, cwd=tmp_path)
    assert "0 improved, 0 regressed" in done.stdout, done.stdout
    assert "A (skill)" not in done.stdout, done.stdout
