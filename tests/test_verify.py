"""`hubskills verify`: a genuine run replays as verified; each tampering is caught by name."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer
from sandbox_required import bwrap_sandbox

from registry.cli import cli, main
from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.format.suite import load_suite
from registry.format.version_ref import SkillVersionRef
from registry.providers import RetryPolicy
from registry.registries import get_store
from registry.verify.replay import ReplayLimits, verify_run

FAST = RetryPolicy(attempts=4, base_delay=0.001, max_delay=0.005, max_retry_after=0.01)
N_CASES = 10
# A python check over the output: the port must be said as a number on its own.
PORT_CHECK = ("import re\ndef check(output, files):\n"
              "    return bool(re.search(r'\\b4417\\b', output)), 'port said'\n")


def make_skill(root: Path, *, with_python: bool = True) -> Path:
    """A skill teaching one port; each case checks for it by text (and by python code)."""
    folder = root / "zorblax-ports"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: zorblax-ports\ndescription: \"Ports of the zorblax daemon. Use when "
        "configuring zorblax.\"\n---\n\nThe zorblax daemon listens on port 4417.\n")
    checks: list[dict] = [{"type": "contains", "value": ["4417"]},
                          {"type": "not_contains", "value": ["banana"]}]
    if with_python:
        checks.append({"type": "python", "code": PORT_CHECK})
    cases = [{"id": f"q{i}", "prompt": f"Question {i}: which port does zorblax use?",
              "checks": checks} for i in range(N_CASES)]
    (folder / "evals" / "evals.json").write_text(json.dumps({"cases": cases}))
    return folder


def knows_fact_if_told(body: dict) -> str:
    told = any("4417" in json.dumps(m.get("content")) for m in body["messages"])
    return "Zorblax listens on port 4417." if told else "Probably port 8080."


@pytest.fixture(scope="module")
def genuine(tmp_path_factory):
    """One genuine run with text and python checks (needs the sandbox), made once:
    (its home, its run id, the skill folder)."""
    bwrap_sandbox()
    root = tmp_path_factory.mktemp("genuine")
    skill = make_skill(root)
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=2,
                                                retry=FAST),
                              Settings.from_env({"HUBSKILLS_HOME": str(root / "home"),
                                                 "HUBSKILLS_BASE_URL": server.url}))
    return root / "home", made.manifest.run_id, skill


@pytest.fixture
def settings(monkeypatch):
    """The test's HUBSKILLS_HOME (the CLI reads it too) and the fake model server."""
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        monkeypatch.setenv("HUBSKILLS_BASE_URL", server.url)
        yield Settings.from_env()


@pytest.fixture
def run(genuine, settings):
    """A copy of the genuine run in this test's home, to tamper with: (run folder, skill)."""
    home, run_id, skill = genuine
    folder = settings.runs_dir / run_id
    shutil.copytree(home / "runs" / run_id, folder)
    return folder, skill


def rows_of(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "rows.jsonl").read_text().splitlines()]


def write_rows(folder: Path, rows: list[dict]) -> None:
    (folder / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def edit_manifest(folder: Path, **changes) -> None:
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.update(changes)
    (folder / "manifest.json").write_text(json.dumps(manifest))


def verify(settings, folder: Path, **kwargs):
    return verify_run(folder.name, settings, open_store=lambda: get_store(settings), **kwargs)


def test_a_genuine_run_verifies(run, settings):
    folder, _ = run
    report = verify(settings, folder)
    assert report.status == "verified", report.to_dict()
    assert report.samples == N_CASES * 2 * 2
    assert report.checks_regraded == 3 * report.samples  # text and python checks, all rerun
    result = CliRunner().invoke(cli, ["verify", folder.name])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"verified: run {folder.name} (40 samples")


def test_a_flipped_passed_is_a_mismatch(run, settings):
    folder, _ = run
    rows = rows_of(folder)
    failing = next(r for r in rows if r["arm"] == "baseline")
    failing["passed"] = True
    write_rows(folder, rows)
    report = verify(settings, folder)
    assert report.status == "mismatch"
    first = report.differences[0]
    assert (first.field, first.stored, first.regraded) == ("passed", True, False)
    assert first.sample == f"{failing['case_id']} #{failing['repeat']} baseline " \
                           "(local/fake-student)"
    result = CliRunner().invoke(cli, ["verify", folder.name])
    assert result.exit_code == 1
    assert result.output.startswith("mismatch:")
    assert "passed: stored True, regraded False" in result.output


def test_an_edited_output_that_no_longer_passes(run, settings):
    folder, _ = run
    rows = rows_of(folder)
    edited = next(r for r in rows if r["arm"] == "skill")
    edited["output"] = "Port 4418, I think."
    write_rows(folder, rows)
    report = verify(settings, folder)
    assert report.status == "mismatch"
    fields = {d.field: (d.stored, d.regraded) for d in report.differences}
    assert fields["check 1 (contains)"] == ("passed", "failed")
    assert fields["check 3 (python)"] == ("passed", "failed")  # the sandboxed check reran
    assert fields["passed"] == (True, False)


def test_an_edited_summary_is_a_mismatch(run, settings):
    folder, _ = run
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["summaries"][0]["stats"]["lift"] = 0.9
    (folder / "manifest.json").write_text(json.dumps(manifest))
    report = verify(settings, folder)
    assert report.status == "mismatch"
    [difference] = report.differences
    assert (difference.sample, difference.field) == ("summary (local/fake-student)",
                                                     "stats.lift")
    assert (difference.stored, difference.regraded) == (0.9, 1.0)


def test_a_dropped_sample_is_a_mismatch(run, settings):
    folder, _ = run
    write_rows(folder, rows_of(folder)[1:])
    report = verify(settings, folder)
    assert report.status == "mismatch"
    assert report.problems[0].startswith("1 planned sample(s) missing, first q")
    assert report.problems[0].endswith("the manifest says the run is complete")


def test_a_duplicated_sample_is_a_mismatch(run, settings):
    folder, _ = run
    rows = rows_of(folder)
    write_rows(folder, [*rows, rows[3]])
    report = verify(settings, folder)
    assert report.status == "mismatch"
    assert report.problems == [f"sample {rows[3]['case_id']} #{rows[3]['repeat']} "
                               f"{rows[3]['arm']} (local/fake-student) appears 2 times"]


def test_a_run_that_never_started_is_never_verified(run, settings):
    folder, _ = run  # a failed start: nothing answered, closed interrupted, summaries empty
    edit_manifest(folder, status="interrupted", partial=True, samples_done=0, summaries=[])
    write_rows(folder, [])
    report = verify(settings, folder)
    assert (report.status, report.samples) == ("not replayable", 0)
    assert list(report.unreplayable) == [
        f"no samples: the run answered none of its {N_CASES * 2 * 2} planned samples"]
    result = CliRunner().invoke(cli, ["verify", folder.name])
    assert result.exit_code == 1
    assert result.output.startswith(f"not replayable: run {folder.name} (0 of "
                                    f"{N_CASES * 2 * 2} planned samples: a partial run")


def test_a_partial_run_says_so_when_it_verifies(settings, tmp_path):
    """The rows a partial run holds replay as any run's do; the line says they are part of
    its plan (a walk read 'verified: ... (4 samples ...)' for an interrupted run)."""
    skill = make_skill(tmp_path, with_python=False)
    made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1, retry=FAST,
                                            max_calls=4, design="fixed"), settings)
    manifest = made.manifest
    assert manifest.is_partial and 0 < manifest.samples_done < manifest.samples_planned
    result = CliRunner().invoke(cli, ["verify", manifest.run_id])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(
        f"verified: run {manifest.run_id} ({manifest.samples_done} of "
        f"{manifest.samples_planned} planned samples: a partial run"), result.output
    report = verify(settings, settings.runs_dir / manifest.run_id)
    assert report.to_dict()["planned"] == manifest.samples_planned


def test_a_suite_swapped_for_an_easier_one(run, settings, tmp_path):
    folder, skill = run
    easier = load_suite(skill / "evals" / "evals.json")
    easier = easier.model_copy(update={"cases": [
        case.model_copy(update={"checks": case.checks[1:2]}) for case in easier.cases]})
    rows = rows_of(folder)
    for row in rows:
        row["suite_hash"] = easier.suite_hash()
    write_rows(folder, rows)
    edit_manifest(folder, suite_hash=easier.suite_hash())
    report = verify(settings, folder)
    assert report.status == "mismatch"
    assert report.problems[0].startswith(f"the run names suite {easier.suite_hash()} (10 "
                                         "cases), but the suite of the skill at")


def test_a_skill_that_does_not_match_the_run(run, settings, tmp_path, capsys):
    folder, skill = run
    edited = shutil.copytree(skill, tmp_path / "edited")
    with open(edited / "SKILL.md", "a") as handle:
        handle.write("\nAlso: port 4418 for the admin console.\n")
    report = verify(settings, folder, skill_dir=edited)
    assert report.status == "mismatch"
    assert report.problems[0].startswith("the skill's content hash is sha256:")
    assert "it was made with another version of the skill" in report.problems[0]
    from tests.test_install import run_main

    code, _, err = run_main(capsys, "verify", folder.name, "--skill", edited)
    assert code == 1  # a mismatch, with the way on (a walk saw none)
    assert f"Hint: hubskills eval {edited}  # a run of the folder as it is now" in err, err


def test_a_truncated_file_and_a_hand_edited_row_never_verify(run, settings):
    folder, _ = run
    text = (folder / "rows.jsonl").read_text()
    (folder / "rows.jsonl").write_text(text[:-40])
    report = verify(settings, folder)
    assert report.status == "mismatch"
    assert "is not a valid row (cut short: a truncated file)" in report.problems[0]
    rows = [json.loads(line) for line in text.splitlines()]
    rows[0]["passed"] = "yes please"
    write_rows(folder, rows)
    result = CliRunner().invoke(cli, ["verify", folder.name])
    assert result.exit_code == 1
    assert "rows.jsonl line 1 is not a valid row" in result.output


def test_a_hand_edited_manifest_and_an_unknown_run(run, settings, capsys):
    folder, _ = run
    (folder / "manifest.json").write_text('{"run_id": 3')
    report = verify(settings, folder)
    assert report.status == "mismatch"
    assert report.problems[0].startswith("manifest.json is not a valid run manifest")
    (folder / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)  # past Python's
    report = verify(settings, folder)  # recursion limit: a RecursionError, no ValueError
    assert report.status == "mismatch"
    assert report.problems == ["manifest.json is not a valid run manifest: nested too deeply"]
    with pytest.raises(SystemExit) as exit_info:
        main(["verify", "20990101-000000-abcdef"])
    assert exit_info.value.code == 1
    assert "no run '20990101-000000-abcdef'" in capsys.readouterr().err


def test_a_run_without_its_skill_folder_is_not_replayable(settings, tmp_path):
    skill = make_skill(tmp_path, with_python=False)
    made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1,
                                            retry=FAST), settings)
    folder = settings.runs_dir / made.manifest.run_id
    moved = skill.rename(tmp_path / "moved")
    report = verify(settings, folder)
    assert report.status == "not replayable"
    assert list(report.unreplayable) == [f"its skill folder {skill.resolve()} is gone: name "
                                         "it with --skill FOLDER"]
    result = CliRunner().invoke(cli, ["verify", folder.name, "--skill", str(moved), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["status"] == "verified"


def test_a_run_of_a_published_version_is_checked_against_the_registry(settings, tmp_path):
    skill = make_skill(tmp_path, with_python=False)
    published = CliRunner().invoke(cli, ["publish", str(skill), "--version", "1.0.0"])
    assert published.exit_code == 0, published.output
    made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1,
                                            retry=FAST), settings,
                          published=SkillVersionRef("local/zorblax-ports",
                                                    _revision(settings, "local/zorblax-ports")))
    folder = settings.runs_dir / made.manifest.run_id
    (skill / "SKILL.md").write_text("---\nname: zorblax-ports\ndescription: edited since\n---\n")
    report = verify(settings, folder)  # the revision the run names, not the edited folder
    assert report.status == "verified", report.to_dict()
    assert report.skill_source.startswith("local/zorblax-ports@")
    assert report.skill_source.endswith("(local registry)")
    edit_manifest(folder, skill_revision="0" * 40)
    report = verify(settings, folder)
    assert report.status == "not replayable"
    assert list(report.unreplayable)[0].startswith(
        "revision 000000000000 of local/zorblax-ports is no published version of it")


def _revision(settings, repo: str) -> str:
    return get_store(settings).resolve(repo).sha


@pytest.mark.parametrize("output", ["Port 4417.", "port 8080", "banana 4417", "",
                                    "```json\n{}\n```"])
def test_text_checks_regrade_as_the_check_engine_grades(output):
    from registry.evaluation.checks import run_checks
    from registry.format.suite import Case
    from registry.verify.regrade import grade_text

    case = Case.model_validate({"id": "c", "prompt": "p", "checks": [
        {"type": "contains", "value": ["4417"]}, {"type": "not_contains", "value": "banana"},
        {"type": "regex", "pattern": r"\d{4}", "weight": 2}, {"type": "not_regex", "pattern": "x"},
        {"type": "equals", "value": "port 8080"}, {"type": "contains_any", "value": ["a", "z"]},
        {"type": "json"}, {"type": "icontains", "value": "PORT"}]})
    engine = asyncio.run(run_checks(case, output))
    assert [tuple(v) for v in grade_text(case, output)] == \
        [(v.type, v.label, v.passed, v.reason, v.weight, v.skipped) for v in engine]


def test_judged_verdicts_replay_from_the_stored_reply(settings, tmp_path):
    def student_or_judge(body: dict) -> str:
        if "VERDICT" in json.dumps(body["messages"]):  # the judge's instructions
            ok = "4417" in body["messages"][-1]["content"].split("<answer>")[1]
            return f"VERDICT: {'PASS' if ok else 'FAIL'}\nREASON: checked the port."
        return knows_fact_if_told(body)

    skill = make_skill(tmp_path, with_python=False)
    suite = json.loads((skill / "evals" / "evals.json").read_text())
    for case in suite["cases"]:
        case["assertions"] = ["The answer names port 4417."]
    (skill / "evals" / "evals.json").write_text(json.dumps(suite))
    with FakeOpenAIServer(responder=student_or_judge) as server:
        made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1,
                                                judge="local/fake-judge", retry=FAST),
                              Settings.from_env().with_(base_url=server.url))
    folder = settings.runs_dir / made.manifest.run_id
    assert verify(settings, folder).status == "verified"  # the judge's replies re-parsed
    rows = rows_of(folder)
    for row in rows:
        row["checks"][-1]["answer"] = None  # as rows stored before the replies were
    write_rows(folder, rows)
    report = verify(settings, folder)
    assert report.status == "not replayable"
    assert report.unreplayable == {"judge checks and assertions: the judge's answers are not "
                                   "stored": N_CASES * 2}
    assert report.checks_regraded == 2 * N_CASES * 2  # contains and not_contains, every sample
    next(r for r in rows if r["arm"] == "skill")["output"] = "Port 4418."  # text checks rerun
    write_rows(folder, rows)
    assert verify(settings, folder).status == "mismatch"


def test_code_checks_left_out_by_choice_are_regraded_the_same_way(settings, tmp_path):
    skill = make_skill(tmp_path)
    made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1,
                                            code_checks="skip", retry=FAST), settings)
    folder = settings.runs_dir / made.manifest.run_id
    assert verify(settings, folder).status == "verified"
    rows = rows_of(folder)
    failing = next(r for r in rows if r["arm"] == "baseline")
    failing["checks"][0] |= {"passed": None, "skipped": True, "reason": "skipped"}
    failing["passed"], failing["score"] = None, 1.0  # its failing check hidden as skipped
    write_rows(folder, rows)
    report = verify(settings, folder)
    assert report.status == "mismatch"
    assert report.differences[0].field == "check 1 (contains)"
    assert (report.differences[0].stored, report.differences[0].regraded) == ("skipped",
                                                                              "failed")


def test_the_verifier_caps_each_code_check_and_the_samples_a_replay_regrades(settings,
                                                                            tmp_path):
    bwrap_sandbox()
    skill = make_skill(tmp_path, with_python=False)
    suite = json.loads((skill / "evals" / "evals.json").read_text())
    slow = ("import time\ndef check(output, files):\n    time.sleep(1.5)\n"
            "    return '4417' in output, 'slept, then looked'\n")
    for case in suite["cases"]:  # the suite allows 30 s a check; the replay, less
        case["checks"].append({"type": "python", "code": slow, "timeout": 30})
    (skill / "evals" / "evals.json").write_text(json.dumps(suite))
    made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1,
                                            case_ids=["q0", "q1"], retry=FAST), settings)
    folder = settings.runs_dir / made.manifest.run_id
    assert verify(settings, folder).status == "verified"  # default cap: 60 s a check
    capped = verify(settings, folder, limits=ReplayLimits(check_timeout_s=0.2))
    assert capped.status == "not replayable", capped.to_dict()
    assert capped.unreplayable == {"code checks: timed out under this replay's cap of 0.2s a "
                                   "check (their suite allows longer)": 4}  # both arms
    few = verify(settings, folder, limits=ReplayLimits(max_samples=3))
    assert (few.status, few.checks_regraded) == ("not replayable", 0)
    assert list(few.unreplayable) == ["the run has 4 samples, more than the 3 this replay "
                                      "regrades (its sample cap)"]


def test_a_pattern_graded_in_the_sandbox_replays_in_the_sandbox(tmp_path):
    """A lookahead (which RE2 cannot match) was graded in the sandbox by the run: the replay
    grades it there too, instead of refusing it in-process and calling the run a mismatch."""
    bwrap_sandbox()
    skill = make_skill(tmp_path, with_python=False)
    suite = json.loads((skill / "evals" / "evals.json").read_text())
    for case in suite["cases"]:
        case["checks"].append({"type": "regex", "pattern": r"port (?=4417)"})
    (skill / "evals" / "evals.json").write_text(json.dumps(suite))
    home = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home")})
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1,
                                                retry=FAST),
                              home.with_(base_url=server.url))
    assert made.manifest.code_checks is None or "skipped" not in str(made.manifest.code_checks)
    report = verify_run(made.manifest.run_id, home, skill_dir=skill)
    assert report.status == "verified", report.to_dict()


def test_a_forged_near_zero_cost_is_a_mismatch(tmp_path, monkeypatch):
    """The replay holds each row's claimed dollars against the least its stored tokens cost at
    the catalogue's price (hole 8: forged costs were shown under `replayed`)."""
    skill = make_skill(tmp_path, with_python=False)
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path / "home"))
        home = Settings.from_env()
        made = run_evaluation(skill, EvalConfig(models=["openai/gpt-4.1-mini"], runs=1,
                                                retry=FAST), home)
    run_id = made.manifest.run_id
    assert verify_run(run_id, home, skill_dir=skill).status == "verified"
    rows = home.runs_dir / run_id / "rows.jsonl"
    forged = [json.loads(line) for line in rows.read_text().splitlines()]
    assert all(row["cost_usd"] > 0 for row in forged)
    forged[0]["cost_usd"] = 0.0
    rows.write_text("".join(json.dumps(row) + "\n" for row in forged))
    report = verify_run(run_id, home, skill_dir=skill)
    assert report.status == "mismatch"
    assert [d.field for d in report.differences if d.field == "cost_usd"] == ["cost_usd"]


def test_cost_floors_are_per_model_when_rows_of_several_models_interleave():
    """`cost_differences` looks each model's price up once and keeps it per model: a free
    model's rows, an unknown model's and a priced model's interleaved are each held against
    their own floor, and a forged cost is found after rows of the other models."""
    from registry.results.runs import ResultRow
    from registry.verify.costs import cost_differences, least_cost

    def row(model: str, case: str, cost: float | None) -> ResultRow:
        return ResultRow(run_id="r", skill_name="s", model=model, arm="skill", case_id=case,
                         passed=True, input_tokens=1_000_000, output_tokens=1_000_000,
                         cost_usd=cost)

    priced = "openai/gpt-4.1-mini"  # $0.1 (cache read) + $1.6 a million: a floor of $1.70
    rows = [row(priced, "a", 2.0), row("local/x", "a", 0.0), row("nobody/unknown", "a", 0.0),
            row(priced, "b", 0.0), row("local/x", "b", None), row(priced, "c", 0.9)]
    assert least_cost(rows[0]) == pytest.approx(1.7)
    found = cost_differences(rows, lambda r: f"{r.model} {r.case_id}")
    assert [d.sample for d in found] == [f"{priced} b"]  # 0.9 is over half the floor


def test_a_run_closed_with_an_earlier_interval_replays_without_that_methods_figures(run,
                                                                                     settings):
    """Runs closed before the score interval stored a paired t interval (and no verdict rule):
    they replay as verified on every figure the change left alone; a method name hubskills never
    used, or an edited figure beside an earlier method, is still a mismatch."""
    folder, _ = run
    manifest = json.loads((folder / "manifest.json").read_text())
    summary = manifest["summaries"][0]
    summary["methods"]["lift_interval"] = "paired t 95% interval over per-case differences " \
                                          "(df = cases - 1)"
    del summary["methods"]["verdict"]
    summary["stats"].update(lo=1.0, hi=1.0, verdict="helps", note=None)  # what t gave
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert verify(settings, folder).status == "verified"
    summary["stats"]["lift"] = 0.9
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert [d.field for d in verify(settings, folder).differences] == ["stats.lift"]
    summary["stats"]["lift"] = 1.0
    summary["methods"]["lift_interval"] = "an interval of my own"
    (folder / "manifest.json").write_text(json.dumps(manifest))
    fields = {d.field for d in verify(settings, folder).differences}
    assert {"stats.lo", "methods.lift_interval"} <= fields


@pytest.mark.parametrize("forged", [{"cost_usd": float("nan")}, {"cost_usd": float("-inf")},
                                    {"input_tokens": -10_000}, {"output_tokens": -5}])
def test_a_non_finite_cost_or_negative_tokens_is_a_mismatch(run, settings, forged):
    """A row's money and tokens come from whoever wrote it: NaN would slip past any floor
    comparison, negative tokens would lower the floor itself."""
    folder, _ = run
    rows = rows_of(folder)
    rows[0].update(forged)
    write_rows(folder, rows)
    report = verify(settings, folder)
    assert report.status == "mismatch"
    assert "tokens or cost_usd" in {d.field for d in report.differences}
