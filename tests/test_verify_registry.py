"""`hubskills verify NS/NAME --run RUN_ID`: a run pushed to a registry replays from its rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from sandbox_required import bwrap_sandbox
from test_verify import FAST, N_CASES, knows_fact_if_told, make_skill

from registry.cli import cli, main
from registry.config import Settings
from registry.errors import RunNotFound
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.format.suite import load_suite
from registry.format.version_ref import SkillVersionRef
from registry.publishing.push import push_saved_run
from registry.registries import get_store
from registry.verify.pushed import verify_published

REPO = "local/zorblax-ports"


def publish_and_push(skill: Path, settings: Settings, **config) -> str:
    """Publish ``skill`` to the local registry, evaluate that revision, push the run."""
    result = CliRunner().invoke(cli, ["publish", str(skill), "--version", "1.0.0"])
    assert result.exit_code == 0, result.output
    store = get_store(settings)
    made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], retry=FAST,
                                            **config), settings,
                          published=SkillVersionRef(REPO, store.resolve(REPO).sha))
    push_saved_run(store, settings.runs_dir, made.manifest.run_id)
    return made.manifest.run_id


@pytest.fixture(scope="module")
def pushed(tmp_path_factory):
    """One genuine run (text and python checks) pushed to a local registry, made once: (its
    home, its run id, the skill folder)."""
    bwrap_sandbox()
    root = tmp_path_factory.mktemp("pushed")
    home = root / "home"
    with pytest.MonkeyPatch.context() as patch, \
            FakeOpenAIServer(responder=knows_fact_if_told) as server:
        patch.setenv("HUBSKILLS_HOME", str(home))
        patch.setenv("HUBSKILLS_BASE_URL", server.url)
        run_id = publish_and_push(make_skill(root), Settings.from_env(), runs=2)
    return home, run_id, root / "zorblax-ports"


@pytest.fixture
def settings(monkeypatch, pushed):
    """This test's home, holding a copy of the pushed run's registry, and the fake model."""
    home = Path(Settings.from_env().home)
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(pushed[0], home)
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        monkeypatch.setenv("HUBSKILLS_BASE_URL", server.url)
        yield Settings.from_env()


@pytest.fixture
def run_file(settings, pushed) -> Path:
    """The pushed run's file in this test's registry, to tamper with."""
    store = get_store(settings)
    [path] = store.dataset_dir.glob(f"data/evals/*/{pushed[1]}.jsonl")
    return path


def rows_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def verify(settings, run_id: str, **kwargs):
    return verify_published(get_store(settings), REPO, run_id, settings, **kwargs)


def test_a_pushed_run_verifies_from_its_rows(settings, pushed, run_file):
    run_id = pushed[1]
    rows = rows_of(run_file)
    assert {r["temperature"] for r in rows} == {0.7} and rows[0]["hubskills_version"]
    assert sum(r["run_summary"] is not None for r in rows) == 1  # the one model's
    report = verify(settings, run_id)
    assert report.status == "verified", report.to_dict()
    assert report.samples == N_CASES * 2 * 2
    assert report.checks_regraded == 3 * report.samples
    assert report.skill_source.startswith(f"{REPO}@")
    same = verify(settings, run_id, data=run_file.read_bytes())  # the exact bytes given
    assert same.status == "verified"
    result = CliRunner().invoke(cli, ["verify", REPO, "--run", run_id])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"verified: run {run_id} (40 samples")


def test_a_flipped_passed_is_a_mismatch(settings, pushed, run_file):
    rows = rows_of(run_file)
    failing = next(r for r in rows if r["arm"] == "baseline")
    failing["passed"] = True
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "mismatch"
    first = report.differences[0]
    assert (first.field, first.stored, first.regraded) == ("passed", True, False)


def test_an_edited_output_that_no_longer_passes(settings, pushed, run_file):
    rows = rows_of(run_file)
    next(r for r in rows if r["arm"] == "skill")["output"] = "Port 4418, I think."
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    fields = {d.field: (d.stored, d.regraded) for d in report.differences}
    assert report.status == "mismatch"
    assert fields["check 3 (python)"] == ("passed", "failed")  # rerun in the sandbox
    assert fields["passed"] == (True, False)


def test_an_edited_summary_is_a_mismatch(settings, pushed, run_file):
    rows = rows_of(run_file)
    first = next(r for r in rows if r["run_summary"])
    summary = json.loads(first["run_summary"])
    summary["stats"]["lift"] = 0.9
    first["run_summary"] = json.dumps(summary)
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "mismatch"
    [difference] = report.differences
    assert (difference.field, difference.stored, difference.regraded) == ("stats.lift", 0.9, 1.0)


def test_a_dropped_sample_and_a_dropped_case(settings, pushed, run_file):
    rows = rows_of(run_file)
    write_rows(run_file, rows[1:])
    report = verify(settings, pushed[1])
    assert report.status == "mismatch"
    assert report.problems[0].startswith("1 planned sample(s) missing, first q")
    write_rows(run_file, [r for r in rows if r["case_id"] != "q3"])
    report = verify(settings, pushed[1])
    assert report.problems[0] == (f"the rows hold samples of {N_CASES - 1} case(s), but the run "
                                  f"planned {N_CASES}: every sample of a case is missing")


def test_a_suite_swapped_for_an_easier_one(settings, pushed, run_file):
    easier = load_suite(pushed[2] / "evals" / "evals.json")
    easier = easier.model_copy(update={"cases": [
        case.model_copy(update={"checks": case.checks[1:2]}) for case in easier.cases]})
    rows = rows_of(run_file)
    for row in rows:
        row["suite_hash"] = easier.suite_hash()
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "mismatch"
    assert report.problems[0].startswith(f"the run names suite {easier.suite_hash()} (10 "
                                         "cases), but the suite of the skill at")


def test_a_skill_revision_that_does_not_match(settings, pushed, run_file, tmp_path):
    other = make_skill(tmp_path)
    with open(other / "SKILL.md", "a") as handle:
        handle.write("\nAlso: port 4418 for the admin console.\n")
    published = CliRunner().invoke(cli, ["publish", str(other), "--version", "1.0.1"])
    assert published.exit_code == 0, published.output
    rows = rows_of(run_file)
    for row in rows:
        row["skill_revision"] = get_store(settings).resolve(REPO).sha
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "mismatch"
    assert "it was made with another version of the skill" in report.problems[0]
    for row in rows:
        row["skill_revision"] = "0" * 40
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "not replayable"
    assert list(report.unreplayable)[0].startswith(f"revision 000000000000 of {REPO} is no "
                                                   "published version of it")


def test_bad_files_never_verify(settings, pushed, run_file, capsys):
    text = run_file.read_text()
    run_file.write_text(text[:-40])
    report = verify(settings, pushed[1])
    assert report.status == "mismatch"
    assert "is not a valid row (cut short: a truncated file)" in report.problems[0]
    rows = [json.loads(line) for line in text.splitlines()]
    rows[5]["planned_runs"] = 1  # one row edited by hand: its run-level fields disagree
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "mismatch"
    assert report.problems[0].startswith("row 6 (")
    assert "its planned_runs differ from row 1's (1, not 2)" in report.problems[0]
    write_rows(run_file, [*rows[:3], rows[2], *rows[3:]])
    assert verify(settings, pushed[1]).status == "mismatch"
    run_file.write_text("")
    assert verify(settings, pushed[1]).problems == ["the run's results file holds no rows"]
    with pytest.raises(RunNotFound):
        verify(settings, "20990101-000000-abcdef")
    with pytest.raises(SystemExit) as exit_info:
        main(["verify", REPO, "--run", "20990101-000000-abcdef"])
    assert exit_info.value.code == 1
    assert "no run 20990101-000000-abcdef in the local registry" in capsys.readouterr().err


def _board_status(listing: str) -> str:
    """The status of REPO's one entry on the board, which still lists the seeded skills."""
    entries = json.loads(listing)
    [status] = [e["status"] for e in entries if e["repo"] == REPO]
    assert len(entries) > 1  # the others are still there
    return status


def test_a_file_the_leaderboard_reads_otherwise_never_verifies(settings, pushed, run_file):
    """Red-team round 4: the replay read rows leniently ("0" was a repeat of 0, bytes not
    UTF-8 were replaced) while the board parses them typed and strict, so a "verified" file
    emptied the board (one bad value dropped every row parsed with it) or crashed it for
    everyone (a byte not UTF-8 reached pandas). What is verified is now what is ranked, and
    the board leaves out only the line it cannot read."""
    rows = rows_of(run_file)
    rows[4]["repeat"] = str(rows[4]["repeat"])
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "mismatch"
    assert report.problems[0].endswith(f"the leaderboard reads {len(rows) - 1} of its "
                                       f"{len(rows)} rows (the others hold a value of a type "
                                       "or range it does not take)")
    board = CliRunner().invoke(cli, ["leaderboard", "--include-unverified", "--json"])
    assert board.exit_code == 0, board.output
    assert _board_status(board.stdout) == f"partial: {len(rows) - 1} of {len(rows)} samples"
    rows[4]["repeat"] = int(rows[4]["repeat"])
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    run_file.write_bytes(data.replace(b'"produced_by": "', b'"produced_by": "\xff', 1))
    report = verify(settings, pushed[1])
    assert report.status == "mismatch"
    assert report.problems == [f"{pushed[1]}.jsonl is not UTF-8 (byte "
                               f"{data.index(b'produced_by') + 15}), so the leaderboard would "
                               "not read it as a replay does"]
    board = CliRunner().invoke(cli, ["leaderboard", "--include-unverified", "--json"])
    assert board.exit_code == 0, board.output
    assert _board_status(board.stdout) == f"partial: {len(rows) - 1} of {len(rows)} samples"


def test_rows_pushed_before_verify_recorded_settings_are_not_replayable(settings, pushed,
                                                                         run_file):
    rows = rows_of(run_file)
    for row in rows:
        del row["temperature"], row["hubskills_version"]
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "not replayable"
    assert list(report.unreplayable) == ["the pushed rows do not record the run's temperature, "
                                         "hubskills_version (pushed by a hubskills that did "
                                         "not store them)"]


DEEP = "[" * 100_000 + "]" * 100_000  # nested past Python's recursion limit


@pytest.mark.parametrize("value", ["{", "[1, 2]", DEEP])
def test_an_agent_budget_a_replay_cannot_read_is_a_mismatch_not_a_crash(settings, pushed,
                                                                        run_file, value):
    """A red-team note: a pushed row's run-level JSON (the agent budget, the design, the
    dependencies, the summary) was read with `json.loads` unguarded, or guarded against
    `ValueError` alone, so a value that does not parse, is not a budget or nests deeper than
    Python recurses raised out of `verify NS/NAME --run` with a traceback (in the gate's
    child: `not replayable`, never recorded, where the rows are simply bad)."""
    rows = rows_of(run_file)
    for row in rows:
        row["agent_budget"] = value
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "mismatch", report.to_dict()
    assert any("agent_budget is not an agent budget" in p for p in report.problems)


@pytest.mark.parametrize("field", ["design", "dependencies"])
def test_run_level_json_nested_too_deep_reads_as_json_that_does_not_parse(settings, pushed,
                                                                         run_file, field):
    """The design and the dependencies are read leniently (one that does not parse is none);
    one nested past the recursion limit is read the same way, not raised."""
    found = {}
    for value in ("{", DEEP):
        rows = rows_of(run_file)
        for row in rows:
            row[field] = value
        write_rows(run_file, rows)
        found[value] = verify(settings, pushed[1]).to_dict()
    assert found[DEEP] == found["{"]


def test_a_summary_nested_past_the_recursion_limit_is_a_mismatch(settings, pushed, run_file):
    rows = rows_of(run_file)
    next(r for r in rows if r["run_summary"])["run_summary"] = DEEP
    write_rows(run_file, rows)
    report = verify(settings, pushed[1])
    assert report.status == "mismatch"
    assert any("is not JSON" in p for p in report.problems), report.problems
