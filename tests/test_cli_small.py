"""The smaller things a newcomer met (issue 15, item 9), each as the CLI runs: a process of its
own, piped, against the fake model server or the seeded registry."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_process import hubskills
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import knows_fact_if_told, make_skill

from registry.generate.parse import name_from_task

SKILL = "hubskills/agent-skill-md"


def run(*args, cwd: Path, ok: bool = True, **env):
    done = hubskills(*args, cwd=cwd, **{"COLUMNS": "200", **env})
    assert (done.returncode == 0) == ok, (done.stdout, done.stderr)
    return done


@pytest.fixture
def evals(tmp_path):
    """Run `eval` of a 4-case skill against the fake server; returns a runner and the skill."""
    skill = make_skill(tmp_path, 4)
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        def evaluate(*extra: str, ok: bool = True):
            return run("eval", skill, "-m", "local/fake", "--base-url", server.url, *extra,
                       cwd=tmp_path, ok=ok)
        yield evaluate, skill, server


def test_a_cached_rerun_says_it_came_from_the_cache(evals):
    evaluate, _, server = evals
    first = evaluate("--runs", "1")
    assert "from the cache" not in first.stdout
    calls = len(server.bodies)
    again = evaluate("--runs", "1")
    assert len(server.bodies) == calls  # nothing asked twice
    assert "all answers came from the cache" in again.stdout and "--no-cache" in again.stdout


def test_resume_refuses_a_different_runs_count(evals, tmp_path):
    evaluate, skill, _ = evals
    run_id = json.loads(evaluate("--runs", "1", "--json").stdout)["manifest"]["run_id"]
    refused = evaluate("--resume", run_id, "--runs", "5", ok=False)
    assert refused.returncode == 1
    assert f"--runs 5 cannot change run {run_id}: it was started with --runs 1" in refused.stderr
    assert f"--resume {run_id}" in refused.stderr and "--runs 5" in refused.stderr
    evaluate("--resume", run_id, "--runs", "1")  # its own count is fine


def test_runs_compare_gives_skill_versions_and_a_noise_caveat(evals, tmp_path):
    evaluate, _, _ = evals
    a = json.loads(evaluate("--runs", "1", "--json").stdout)["manifest"]["run_id"]
    b = json.loads(evaluate("--runs", "2", "--json", "--no-cache").stdout)["manifest"]["run_id"]
    compared = json.loads(run("runs", "compare", a, b, "--json", cwd=tmp_path).stdout)
    assert compared["runs"][a]["skill"] == "zorblax-ports" and compared["runs"][b]["runs"] == 2
    assert "version" in compared["runs"][a]
    # the fewest to the most answers a compared case's rate rests on, as answered (a walk: an
    # adaptive run's cap is not what each case got)
    assert "rests on 1 to 2 answers per run" in compared["note"]
    table = run("runs", "compare", a, b, cwd=tmp_path).stdout
    assert "note: each case's rate rests on 1 to 2 answers per run" in table
    assert "lift intervals" in table


def test_an_unknown_case_hint_names_the_suite_the_run_uses(evals):
    evaluate, skill, _ = evals
    done = evaluate("--cases", "no-such-case", ok=False)
    # the skill folder: `suite show` lists its suites (a fetched skill's reads as its reference)
    assert f"Hint: hubskills suite show {skill}  #" in done.stderr


def test_install_frozen_force_restores_what_the_lock_pins(tmp_path):
    run("pull", SKILL, cwd=tmp_path)
    skill_md = tmp_path / ".agents/skills/agent-skill-md/SKILL.md"
    pinned = skill_md.read_text()
    skill_md.write_text(pinned + "\nlocal edit\n")
    lock = (tmp_path / "skills.lock").read_text()
    refused = run("install", "--frozen", cwd=tmp_path, ok=False)
    assert "hubskills install --frozen --force" in refused.stderr
    run("install", "--frozen", "--force", cwd=tmp_path)
    assert skill_md.read_text() == pinned
    assert (tmp_path / "skills.lock").read_text() == lock  # frozen: the lock is untouched


def test_seed_force_counts_only_what_it_adds(tmp_path):
    run("search", cwd=tmp_path)  # first use seeds the registry
    again = run("registry", "seed", "--force", cwd=tmp_path)
    assert again.stdout.strip().endswith("0 skills, 0 runs seeded.")
    assert "already seeded" in again.stdout


def test_json_on_new_publish_and_remove(tmp_path):
    created = json.loads(run("new", "my-skill", "--json", cwd=tmp_path).stdout)
    assert created["next"] == "hubskills validate my-skill"
    assert all((tmp_path / f).is_file() for f in created["files"])
    # the untouched scaffold publishes only with --force (issue 38), which says what it overrode
    planned = run("publish", "my-skill", "--dry-run", "--json", "--force", cwd=tmp_path)
    plan = json.loads(planned.stdout)
    assert plan["published"] is False and plan["plan"]["repo"].endswith("/my-skill")
    assert "placeholder-description" in planned.stderr and "overridden by --force" in planned.stderr
    run("pull", SKILL, cwd=tmp_path)
    removed = json.loads(run("remove", "agent-skill-md", "--json", cwd=tmp_path).stdout)
    assert removed["repo"] == SKILL and removed["lock_updated"] is True
    assert not (tmp_path / ".agents/skills/agent-skill-md").exists()


def test_limit_zero_means_all_everywhere(tmp_path):
    everything = json.loads(run("search", "--limit", "0", "--json", cwd=tmp_path).stdout)
    assert len(everything) == 3
    assert len(json.loads(run("search", "--limit", "1", "--json", cwd=tmp_path).stdout)) == 1
    board = json.loads(run("leaderboard", "--limit", "0", "--json", cwd=tmp_path).stdout)
    assert len(board) == 3


def test_suite_generate_takes_count_and_the_old_spelling_still_works(tmp_path):
    helped = run("suite", "generate", "--help", cwd=tmp_path).stdout
    assert re.search(r"-n, --count INTEGER", helped) and "--n " not in helped
    assert "Add N verified cases" in run("tests", "generate", "--help", cwd=tmp_path).stdout
    listed = run("--help", cwd=tmp_path).stdout
    assert not re.search(r"^\s+tests\s", listed, re.M)
    assert re.search(r"^Author commands:\n\s+new\s", listed, re.M)
    missing = run("suite", "generate", str(tmp_path / "nope"), "-n", "2", cwd=tmp_path, ok=False)
    assert missing.returncode == 1 and "nope: no such folder" in missing.stderr


@pytest.mark.parametrize(("task", "name"), [
    ("Write commit messages in the conventional commits format", "write-commit-messages"),
    ("Clean messy CSV files with pandas", "clean-messy-csv-files"),
    ("Fix flaky pytest fixtures", "fix-flaky-pytest-fixtures"),
    ("Parse CSV", "parse-csv"),
    ("Summarize the staged git diff", "summarize-the-staged-git-diff"),
    ("Convert CSV to Parquet with pandas", "convert-csv-to-parquet"),  # the target stays
    ("Teach the agent to write tests", "teach-the-agent"),
])
def test_generated_names_end_at_a_phrase_boundary(task, name):
    assert name_from_task(task) == name


def test_runs_on_a_fresh_home_says_there_are_none_and_how_to_make_one(tmp_path):
    done = run("runs", cwd=tmp_path)
    assert done.stdout == "No evaluation runs yet.\n"  # not an empty table
    assert "Hint: hubskills eval " in done.stderr
    assert json.loads(run("runs", "--json", cwd=tmp_path).stdout) == []


def test_models_at_80_columns_shows_every_price_whole(tmp_path):
    done = run("models", cwd=tmp_path, COLUMNS="80", OPENAI_API_KEY=None,
               ANTHROPIC_API_KEY=None)
    assert "$ per million tokens in / out" in done.stdout.splitlines()[0]
    prices = {row["ref"]: row["price"] for row in json.loads(
        run("models", "--json", cwd=tmp_path).stdout)["models"]}
    priced = [ref for ref, price in prices.items() if price.endswith(" out per Mtok")]
    assert len(priced) >= 4  # --json keeps the long form
    lines = {line.split()[0]: line.rstrip() for line in done.stdout.splitlines() if line}
    for ref in priced:
        short = prices[ref].replace(" in / ", " / ").removesuffix(" out per Mtok")
        assert lines[ref].endswith(short), lines[ref]  # whole: it was cut to "$0.1 in / …"
    assert lines["embedded/smollm2-135m"].endswith("free (local)")
