"""`hubskills verify RUN_ID --resample K` through the CLI, against a fake model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer
from test_verify import FAST, knows_fact_if_told, make_skill

from registry.cli import main
from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.evaluation.run_manifest import stored_summaries
from registry.results.runs import ResultRow, read_rows


@pytest.fixture
def server(monkeypatch):
    with FakeOpenAIServer(responder=knows_fact_if_told) as fake:
        monkeypatch.setenv("HUBSKILLS_BASE_URL", fake.url)
        yield fake


@pytest.fixture
def run_id(server, tmp_path) -> str:
    """A genuine chat run (text checks only) of 10 cases, once per arm."""
    skill = make_skill(tmp_path, with_python=False)
    made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1, retry=FAST),
                          Settings.from_env())
    return made.manifest.run_id


def rewrite(run_id: str, edit) -> None:
    """Replace the run's rows by ``edit(row)`` and its stored summary by theirs (a forger's
    careful edit: the replay still verifies)."""
    folder = Settings.from_env().runs_dir / run_id
    rows = [edit(row) for row in read_rows(folder.parent, run_id)]
    (folder / "rows.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in rows))
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["summaries"] = json.loads(json.dumps(stored_summaries(rows), default=str))
    (folder / "manifest.json").write_text(json.dumps(manifest))


def forged_baseline(row: ResultRow) -> ResultRow:
    """`row`, when in the baseline arm, edited to pass with an answer the model never gave."""
    if row.arm != "baseline":
        return row
    return row.model_copy(update={
        "output": "Zorblax listens on port 4417.", "passed": True, "score": 1.0,
        "checks": [c.model_copy(update={"passed": True}) for c in row.checks]})


def verify(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["verify", *args])
        raise SystemExit(0)
    found = capsys.readouterr()
    return int(exit_info.value.code or 0), found.out, found.err


def test_a_genuine_run_is_consistent(run_id, server, capsys):
    code, stdout, stderr = verify(capsys, run_id, "--resample", "10", "--seed", "3", "--json")
    assert code == 0, stdout + stderr
    found = json.loads(stdout)
    assert found["status"] == "verified"
    check = found["spot_check"]
    assert check["consistent"] and check["k"] == 10 and check["record"] is None
    assert [(a["arm"], a["pairs"]) for a in check["arms"]] == [("baseline", 10), ("skill", 10)]
    assert "estimated cost about $0.0000" in stderr  # said before the calls (a free model)
    assert len(server.bodies) == 40  # the run's 20, then 10 cases re-asked in both arms


def test_an_output_edited_to_pass_is_caught(run_id, capsys):
    rewrite(run_id, forged_baseline)
    code, stdout, _ = verify(capsys, run_id, "--resample", "10")
    assert code == 1
    assert stdout.startswith(f"verified: run {run_id}")  # the grading holds ...
    assert "spot check: inconsistent (K=10 per arm" in stdout  # ... the model does not
    assert "baseline: 10 pairs, 10 passed only as stored, 0 only when re-asked" in stdout


def test_max_cost_refuses_before_any_call(run_id, server, capsys):
    rewrite(run_id, lambda row: row.model_copy(update={"cost_usd": 0.01}))
    asked = len(server.bodies)
    code, stdout, stderr = verify(capsys, run_id, "--resample", "10", "--max-cost", "0.1")
    assert code == 1
    assert "estimated cost about $0.2000" in stderr  # 10 cases x 2 arms x $0.01
    assert "would cost about $0.2000, over --max-cost $0.1" in stderr
    assert "Hint: lower --resample K, or raise --max-cost" in stderr
    assert len(server.bodies) == asked  # no model was asked


def test_a_run_that_does_not_replay_is_not_re_asked(run_id, server, capsys):
    folder: Path = Settings.from_env().runs_dir / run_id
    rows = folder.joinpath("rows.jsonl").read_text().splitlines()
    folder.joinpath("rows.jsonl").write_text("\n".join(rows[1:]) + "\n")
    asked = len(server.bodies)
    code, stdout, stderr = verify(capsys, run_id, "--resample", "5")
    assert code == 1 and stdout.startswith("mismatch")
    assert "No spot check" in stderr and len(server.bodies) == asked
