"""`hubskills verify RUN_ID --resample K` through the CLI, against a fake model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fakes.metered_server import MeteredOpenAIServer, billing_max
from fakes.openai_server import FakeOpenAIServer
from test_verify import FAST, knows_fact_if_told, make_skill

from registry.cli import main
from registry.config import Settings
from registry.errors import HubskillsError
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
    assert "estimated cost at most $0.0000" in stderr  # said before the calls (a free model)
    assert len(server.bodies) == 40  # the run's 20, then 10 cases re-asked in both arms
    from registry.config import Settings
    from registry.results.runs import list_runs

    [fresh] = [m for m in list_runs(Settings.from_env().runs_dir) if m.run_id != run_id]
    assert fresh.run_id == check["fresh_run_id"] and fresh.produced_via == "spot-check"
    assert fresh.label.startswith("a spot check's re-ask")  # in `runs`, not a bare subset


def test_an_output_edited_to_pass_is_caught(run_id, capsys):
    rewrite(run_id, forged_baseline)
    code, stdout, _ = verify(capsys, run_id, "--resample", "10")
    assert code == 1
    assert stdout.startswith(f"verified: run {run_id}")  # the grading holds ...
    assert "spot check: inconsistent (K=10 per arm" in stdout  # ... the model does not
    assert "baseline: 10 pairs, 10 passed only as stored, 0 only when re-asked" in stdout


def test_a_run_that_does_not_replay_is_not_re_asked(run_id, server, capsys):
    folder: Path = Settings.from_env().runs_dir / run_id
    rows = folder.joinpath("rows.jsonl").read_text().splitlines()
    folder.joinpath("rows.jsonl").write_text("\n".join(rows[1:]) + "\n")
    asked = len(server.bodies)
    code, stdout, stderr = verify(capsys, run_id, "--resample", "9")
    assert code == 1 and stdout.startswith("mismatch")
    assert "No spot check" in stderr and len(server.bodies) == asked


PRICED = "openai/gpt-4.1"  # $2 in / $8 out per Mtok


def loads_then_answers(body: dict) -> dict | str:
    """Tool mode: load the skill first, then answer (two calls in the skill arm)."""
    if body.get("tools") and not any(m["role"] == "tool" for m in body["messages"]):
        return {"text": "", "tool_calls": [{"name": "load_skill",
                                            "arguments": {"name": "zorblax-ports"}}]}
    return knows_fact_if_told(body)


@pytest.fixture
def metered(monkeypatch):
    """A fake OpenAI serving `openai/...` that bills each answer its whole max_tokens."""
    with MeteredOpenAIServer(responder=billing_max(loads_then_answers), api_key="k",
                             latency=0.05) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        yield fake


def priced_run(tmp_path, model: str = PRICED, mode: str = "inline") -> str:
    skill = make_skill(tmp_path, with_python=False)
    made = run_evaluation(skill, EvalConfig(models=[model], runs=1, retry=FAST, mode=mode,
                                            max_tokens=2000), Settings.from_env())
    return made.manifest.run_id


def estimate_said(stderr: str) -> str:
    found = re.search(r"estimated cost (?:about |at most )?(\$[0-9.]+|unknown)", stderr)
    return found.group(1) if found else stderr


def test_forged_row_costs_do_not_change_the_estimate(metered, tmp_path, capsys):
    run = priced_run(tmp_path)
    asked = metered.calls
    code, _, stderr = verify(capsys, run, "--resample", "10", "--max-cost", "0.05")
    genuine = estimate_said(stderr)
    assert code == 1 and "over --max-cost $0.05" in stderr and metered.calls == asked
    assert float(genuine[1:]) > 0.16  # 20 calls of up to 2,000 output tokens at $8/M
    rewrite(run, lambda row: row.model_copy(update={"cost_usd": 1e-9}))
    code, stdout, stderr = verify(capsys, run, "--resample", "10", "--max-cost", "0.05")
    # the rows' money is never read for the estimate, and the replay itself now holds each
    # row's claim against what its tokens must cost: the forgery is a mismatch, no call made
    assert code == 1 and "cost_usd" in stdout + stderr and metered.calls == asked
    assert metered.calls == asked  # refused before any call


def test_a_spot_check_never_spends_past_max_cost(metered, tmp_path, capsys):
    run = priced_run(tmp_path, mode="tool")  # the skill arm takes two calls a sample
    metered.usages.clear()
    metered.peak = 0
    code, stdout, stderr = verify(capsys, run, "--resample", "10", "--max-cost", "0.4",
                                  "--json")
    assert metered.peak >= 8  # OpenAI's 16 calls at once
    assert metered.billed(PRICED) <= 0.4, (metered.billed(PRICED), stderr)
    found = json.loads(stdout)["spot_check"]
    assert found["spent_usd"] == pytest.approx(metered.billed(PRICED))
    assert found["note"].startswith("--max-cost $0.4 reached after $0.3")


def test_a_model_without_a_price_needs_max_calls(metered, tmp_path, capsys):
    run = priced_run(tmp_path, model="openai/fake-unpriced")
    asked = metered.calls
    code, _, stderr = verify(capsys, run, "--resample", "10", "--max-cost", "1")
    assert code == 1 and "no known price" in stderr and "--max-calls N" in stderr
    assert "estimated cost unknown" in stderr
    code, _, stderr = verify(capsys, run, "--resample", "10", "--max-calls", "5")
    assert code == 1 and "at least 20 model calls, over --max-calls 5" in stderr
    assert metered.calls == asked  # neither made a call
    code, stdout, stderr = verify(capsys, run, "--resample", "10", "--max-cost", "1",
                                  "--max-calls", "20")
    assert code == 0, stdout + stderr
    assert metered.calls == asked + 20


def test_a_plan_for_jobs_is_priced_before_anything_starts(metered, tmp_path):
    """What `--on jobs` can price and refuse here: the same catalogue estimate, no call."""
    from registry.registries import get_store
    from registry.results.runs import read_manifest
    from registry.verify.spot import priced_plan

    run = priced_run(tmp_path)
    settings, asked = Settings.from_env(), metered.calls
    manifest, rows = read_manifest(settings.runs_dir, run), read_rows(settings.runs_dir, run)
    plan = priced_plan(run, manifest, rows, lambda: get_store(settings), k=10)
    assert plan.priced and plan.estimated_cost > 0.16 and plan.calls == 20
    with pytest.raises(HubskillsError, match="over --max-cost"):
        priced_plan(run, manifest, rows, lambda: get_store(settings), k=10, max_cost=0.05)
    assert metered.calls == asked
