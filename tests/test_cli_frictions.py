"""A newcomer's smaller frictions (issue 30): what the program prints is what it does."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from registry.cli import cli
from registry.gate.run import failures
from registry.results.runs import RunManifest
from registry.results.stats import compare_arms


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env={"NO_COLOR": "1", "COLUMNS": "200"})


@pytest.mark.parametrize(("typed", "meant"), [("evl", "eval"), ("leaderbord", "leaderboard"),
                                              ("serch", "search")])
def test_a_mistyped_command_gets_did_you_mean(typed, meant):
    result = invoke(typed)
    assert result.exit_code == 2
    assert f"No such command '{typed}'. Did you mean '{meant}'?" in result.output


def test_a_mistyped_option_gets_clicks_own_suggestion():
    result = invoke("leaderboard", "--jsn")
    assert result.exit_code == 2 and "Did you mean '--json'?" in result.output


@pytest.mark.parametrize(("args", "said"), [
    (["leaderboard", "--sort", "lift"], "No such option '--sort'. It is an option of hubskills "
                                        "search."),
    (["runs", "--model", "x"], "No such option '--model'. It is an option of hubskills ci,"),
    (["search", "--limt", "3"], "No such option '--limt'. Did you mean '--limit'?"),
    (["runs", "show", "--jsn", "x"], "No such option '--jsn'. Did you mean '--json'?"),
    (["leaderboard", "--zzzqqq"], "No such option '--zzzqqq'.\n"),
])
def test_a_mistyped_option_is_offered_only_a_close_one(args, said):
    """click offered `leaderboard --sort` '--json' and `runs --model` '--help' (issue 38,
    second walk): a guess at 0.6 of difflib's ratio; the option is another command's."""
    result = invoke(*args)
    assert result.exit_code == 2 and said in result.output, result.output
    assert "'--help'" not in result.output


def test_an_unknown_command_far_from_any_gets_no_guess():
    result = invoke("zzzzqqq")
    assert result.exit_code == 2 and "Did you mean" not in result.output


def test_min_lift_means_the_lower_bound_must_exceed_it():
    same = {f"c{i}": [True, False] for i in range(12)}
    flat = compare_arms(same, same)  # +0 [-31, +31]: 12 cases, none changed
    assert flat.lift == 0 and round(flat.lo, 4) == -0.3057 == -round(flat.hi, 4)
    assert failures(flat, None, None, -0.3) == [
        "the lift's lower bound -31 is not above --min-lift -30 (lift +0 [-31, +31])"]
    assert failures(flat, None, None, -0.31) == []
    assert failures(flat, None, None, None) == []


def test_doctor_counts_every_skill_in_the_registry():
    result = invoke("doctor", "--json")
    report = json.loads(result.stdout)
    registry = report["registry"]
    assert registry["skills"] == 3 and "(3 skills)" in registry["why"]
    assert invoke("search", "--json").stdout.count('"repo"') == 3


def test_an_interrupted_run_says_so_where_it_is_listed():
    manifest = RunManifest(run_id="r", skill_name="s", suite_hash="h", content_hash="c",
                           models=["local/m"], runs=1, case_ids=["a"], partial=True,
                           samples_planned=72, samples_done=12, status="interrupted")
    assert manifest.label == "partial: 12 of 72 samples, interrupted"
    manifest.status = "running"  # killed: nothing said it stopped
    assert manifest.label == "partial: 12 of 72 samples"


def write_suite(folder, cases: list[dict]) -> None:
    (folder / "evals").mkdir(exist_ok=True)
    (folder / "evals" / "evals.json").write_text(json.dumps({"cases": cases}))


def warnings_of(folder) -> dict[str, str]:
    result = invoke("validate", "--json", str(folder))
    assert result.exit_code == 0, result.output  # warnings never fail validate
    return {f["code"]: f["message"] for f in json.loads(result.stdout)[str(folder)]}


def test_validate_warns_on_a_missing_a_small_and_a_placeholder_suite(tmp_path):
    folder = tmp_path / "csv-clean"
    assert invoke("new", "csv-clean", "--dir", str(tmp_path)).exit_code == 0
    (folder / "evals" / "evals.json").unlink()
    assert "suite generate" in warnings_of(folder)["no-suite"]

    case = {"prompt": "Which port?", "checks": [{"type": "contains", "value": ["4417"]}]}
    write_suite(folder, [{"id": f"c{i}", **case} for i in range(9)])
    assert warnings_of(folder)["small-suite"].startswith("9 cases, under 10")
    write_suite(folder, [{"id": f"c{i}", **case} for i in range(10)])
    assert not {"small-suite", "no-suite", "placeholder-suite"} & set(warnings_of(folder))

    from registry.format.skill import load_skill
    from registry.generate.suite import placeholder_suite

    placeholder = placeholder_suite(load_skill(folder), "clean a CSV file").cases
    write_suite(folder, [c.model_dump(mode="json", exclude_unset=True) for c in placeholder])
    assert "placeholder-task" in warnings_of(folder)["placeholder-suite"]


def test_a_suite_error_names_the_case_the_field_and_the_allowed_values(tmp_path):
    folder = tmp_path / "csv-clean"
    assert invoke("new", "csv-clean", "--dir", str(tmp_path)).exit_code == 0
    write_suite(folder, [
        {"id": "typo", "prompt": "p", "checks": [{"type": "contain", "value": ["a"]}]},
        {"id": "no-value", "prompt": "p", "checks": [{"type": "contains"}]},
        {"id": "flag", "prompt": "p",
         "checks": [{"type": "contains", "value": ["a"], "case_sensitive": "maybe"}]},
    ])
    result = invoke("validate", str(folder))
    text = " ".join(result.output.split())  # as one line, whatever the wrapping
    assert result.exit_code == 1
    assert ("case 1 ('typo'): field checks[0].type: 'contain' is not a check type (did you "
            "mean 'contains'?); allowed: contains, icontains, contains_any") in text
    assert "case 2 ('no-value'): field checks[0].value: missing (it is required)" in text
    assert "case 3 ('flag'): field checks[0].case_sensitive: must be true or false" in text
    assert "Input tag" not in text and "more)" not in text


def natural_skill(root):
    """A skill whose cases are numbered past 9 (`build-1`, `build-2` … `build-10`)."""
    folder = root / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: zorblax-ports\ndescription: \"Ports of the zorblax daemon. Use when "
        "configuring zorblax.\"\n---\n\nZorblax listens on port 4417.\n")
    write_suite(folder, [{"id": f"build-{i}", "prompt": f"Question {i}: which port?",
                          "checks": [{"type": "contains", "value": ["4417"]}]}
                         for i in (10, 1, 2, 11)])
    return folder


def test_cases_are_listed_in_natural_order_and_compare_says_what_else_changed(tmp_path):
    from fakes.openai_server import FakeOpenAIServer
    from test_evaluate import knows_fact_if_told

    skill = natural_skill(tmp_path)
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        runs = []
        for mode in ("inline", "tool"):
            done = invoke("eval", str(skill), "-m", "local/m", "--base-url", server.url,
                          "--runs", "1", "--mode", mode, "--verbose", "--json")
            assert done.exit_code == 0, done.output
            runs.append(json.loads(done.stdout)["manifest"]["run_id"])
        shown = invoke("eval", str(skill), "-m", "local/m", "--base-url", server.url,
                       "--runs", "1", "--verbose").output
    listed = [line.split()[0] for line in shown.splitlines() if line.startswith("build-")]
    assert listed == ["build-1", "build-2", "build-10", "build-11"], shown
    compared = invoke("runs", "compare", *runs).output
    assert compared.splitlines()[0] == "differs: mode: inline (user) → tool", compared
    first_number = min(compared.find("%"), compared.find("+"))
    assert compared.find("differs:") < first_number
    data = json.loads(invoke("runs", "compare", *runs, "--json").stdout)
    assert data["differences"] == ["mode: inline (user) → tool"]
    same = json.loads(invoke("runs", "compare", runs[0], runs[0], "--json").stdout)
    assert same["differences"] == []
    # another skill's run: its "build-1" is another question, so no case is paired (a walk
    # read "c1 improved" across two skills)
    other = tmp_path / "other" / "zorblax-admin"
    shutil.copytree(skill, other)
    text = (other / "SKILL.md").read_text().replace("name: zorblax-ports", "name: zorblax-admin")
    (other / "SKILL.md").write_text(text)
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        done = invoke("eval", str(other), "-m", "local/m", "--base-url", server.url,
                      "--runs", "1", "--mode", "tool", "--json")
    assert done.exit_code == 0, done.output
    across = invoke("runs", "compare", runs[1], json.loads(done.stdout)["manifest"]["run_id"])
    lines = across.output.splitlines()
    assert lines[0] == "differs: skill: zorblax-ports → zorblax-admin", across.output
    assert "two different skills: their cases are not compared" in across.output
    assert "improved" not in across.output and "build-" not in across.output


def test_update_all_updates_every_skill_it_can_and_reports_the_skipped(tmp_path):
    import shutil

    from cli_process import REPO_ROOT

    from registry.config import Settings
    from registry.registries import local_store

    project = tmp_path / "project"
    project.mkdir()
    names = ("agent-skill-md", "hf-hub-python-2x", "kernel-builder-cuda-kernels")
    for name in names:
        pulled = invoke("pull", f"hubskills/{name}", "--project", str(project))
        assert pulled.exit_code == 0, pulled.output
        newer = shutil.copytree(REPO_ROOT / "skills" / name, tmp_path / "v2" / name)
        (newer / "references").mkdir(exist_ok=True)
        (newer / "references" / "extra.md").write_text("# Extra\n")
        local_store(Settings.from_env()).publish(newer, repo=f"hubskills/{name}",
                                                 version="1.1.1")
    edited = project / ".agents" / "skills" / "agent-skill-md" / "SKILL.md"
    edited.write_text(edited.read_text() + "\nMy own note.\n")  # a local change

    result = invoke("update", "--project", str(project))
    assert result.exit_code == 1
    for name in names[1:]:  # after the skipped one, in name order: both updated
        assert f"Updated hubskills/{name} 1.1.1 (was 1.1.0)" in result.stdout
    assert result.exception.message.startswith("1 skill not updated:\n  agent-skill-md: ")
    assert "has local changes" in result.exception.message
    assert result.exception.hint == ("hubskills update agent-skill-md --force  # discards its "
                                     "local changes")
    assert "My own note." in edited.read_text()  # the local change is kept


def test_doctor_shows_the_registrys_count_and_folder_whole_at_80_columns():
    """Under a long HOME the row read `/tmp/…/registry answers (3 ski…`: the count first, and
    the folder under HOME as `~/…` (issue 38)."""
    import os
    from pathlib import Path

    from cli_process import hubskills

    store_home = Path(os.environ["HUBSKILLS_HOME"])
    done = hubskills("doctor", COLUMNS="80", HOME=str(store_home.parent))
    [row] = [line for line in done.stdout.splitlines() if line.startswith("registry (local)")]
    assert row.split()[-3:] == ["skills", "at", f"~/{store_home.name}/registry"]
    assert row.split()[-4] == "3"


@pytest.mark.parametrize("args", [[], ["suite"], ["trust"]])
def test_a_group_named_alone_prints_its_help_not_an_error(args, capsys):
    """`hubskills` alone, a newcomer's first try, printed "Error: Usage: ..." and the whole
    help on stderr, then "Hint: hubskills --help", and exited 2 (click 8.2's no-args error
    taken for a mistake): it prints the help, as `--help` does."""
    from registry.cli import main

    main(args)
    printed = capsys.readouterr()
    assert printed.out.startswith(f"Usage: {' '.join(['hubskills', *args])} [OPTIONS] COMMAND")
    assert "ommands:" in printed.out and "Error" not in printed.out + printed.err
    assert printed.err == ""
