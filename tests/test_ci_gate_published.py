"""`hubskills ci` finds the published version a changed skill is compared with: under the
team's namespace, found by a search when it is the one repo of that name, named with
`--namespace`, and said when there is none or more than one (never a silent `-`).

The fake model and the skills' text are `test_ci_gate`'s: PASS-ODD helps against the baseline
but is worse than a published ALWAYS-PASS, so a comparison made shows as a failure.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_process import hubskills
from fakes.openai_server import FakeOpenAIServer
from test_ci_gate import N_CASES, ci, commit_all, git, scripted, write_skill

WORSE = "significantly worse than the published"


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=scripted) as srv:
        yield srv


def checkout(tmp_path: Path, *published_as: str) -> Path:
    """A repo whose skill csv-clean (ALWAYS-PASS) is published as each of ``published_as``,
    then made worse in the working tree."""
    root = tmp_path / "checkout"
    root.mkdir()
    git(root, "init", "-q")
    folder = write_skill(root, "csv-clean", "ALWAYS-PASS")
    commit_all(root, "csv-clean v1")
    for repo in published_as:
        done = hubskills("publish", folder, "--repo", repo, cwd=root)
        assert done.returncode == 0, done.stderr
    write_skill(root, "csv-clean", "PASS-ODD")
    return root


def test_a_skill_published_under_a_team_namespace_is_found_and_compared(tmp_path, server):
    """A walk: a team publishing as acme/csv-clean got `vs published: -` silently, since only
    local/<name> and hubskills/<name> were looked up: a regression against it passed."""
    root = checkout(tmp_path, "acme/csv-clean")
    summary = tmp_path / "s.md"
    result = ci(root, server, "--base", "HEAD", "--min-lift", "0", "--summary", str(summary))
    assert result.returncode == 1, result.stdout + result.stderr
    said = " ".join(result.stdout.split())
    assert f"FAIL skills/csv-clean on local/fake: {WORSE} acme/csv-clean v1.0.0" in said
    assert ("NOTE skills/csv-clean: compared with acme/csv-clean, the one published skill named "
            "csv-clean (found by a search; --namespace acme names it)") in said
    assert "acme/csv-clean v1.0.0: -50 [" in summary.read_text()
    assert len(server.bodies) == N_CASES * 2 + N_CASES  # its skill arm was evaluated

    named = ci(root, server, "--base", "HEAD", "--min-lift", "0", "--namespace", "acme")
    assert named.returncode == 1 and f"{WORSE} acme/csv-clean v1.0.0" in named.stdout
    assert "found by a search" not in named.stdout


def test_two_skills_of_that_name_are_not_guessed_and_none_found_is_said(tmp_path, server):
    root = checkout(tmp_path, "acme/csv-clean", "beta/csv-clean")
    summary, junit = tmp_path / "s.md", tmp_path / "ci.xml"
    result = ci(root, server, "--base", "HEAD", "--min-lift", "0", "--summary", str(summary))
    assert result.returncode == 0, result.stdout + result.stderr  # it helps; nothing compared
    said = " ".join(result.stdout.split())
    assert ("NOTE skills/csv-clean: 2 published skills are named csv-clean (acme/csv-clean, "
            "beta/csv-clean): the gate does not guess which one this is; name its namespace: "
            "hubskills ci --namespace NS") in said, result.stdout
    assert "| not guessed | pass |" in summary.read_text()
    assert len(server.bodies) == N_CASES * 2  # no published version was evaluated

    picked = ci(root, server, "--base", "HEAD", "--min-lift", "0", "--namespace", "beta")
    assert picked.returncode == 1 and f"{WORSE} beta/csv-clean v1.0.0" in picked.stdout

    nowhere = ci(root, server, "--base", "HEAD", "--namespace", "nobody", "--summary",
                 str(summary), "--junit", str(junit))
    assert nowhere.returncode == 0, nowhere.stdout + nowhere.stderr
    looked = "no published version found (looked for nobody/csv-clean)"
    assert f"NOTE skills/csv-clean: {looked}" in " ".join(nowhere.stdout.split())
    assert "| none found | pass |" in summary.read_text() and looked in summary.read_text()
    out = ET.parse(junit).getroot().find("testsuite/testcase/system-out")
    assert f"vs published: {looked}" in out.text


def test_a_skill_never_published_says_where_it_was_looked_for(tmp_path, server):
    root = checkout(tmp_path)
    result = ci(root, server, "--base", "HEAD")
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("NOTE skills/csv-clean: no published version found (looked for local/csv-clean, "
            "hubskills/csv-clean and any other skill named csv-clean)") \
        in " ".join(result.stdout.split())


@pytest.mark.parametrize("namespace", ["acme/x", "../up", ""])
def test_a_namespace_that_cannot_be_one_is_refused_before_any_call(tmp_path, server,
                                                                   namespace):
    root = checkout(tmp_path)
    result = ci(root, server, "--base", "HEAD", "--namespace", namespace)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    said = " ".join(result.stderr.split())
    assert f"--namespace '{namespace}' is not a namespace" in said, said
    assert "hubskills ci --namespace NS" in said and server.bodies == []
