"""What a resumed run takes back from its manifest: one declaration (`RESTORED_ON_RESUME`) that
`resumed_config` restores and `hubskills eval`'s resume hint leaves out."""

from __future__ import annotations

import shlex
from dataclasses import asdict, fields

from registry.agent import Budget
from registry.cli.eval import _resume_command, eval_command
from registry.evaluation.config import EvalConfig
from registry.evaluation.run_manifest import RESTORED_ON_RESUME, resumed_config
from registry.results.runs import RunManifest


def test_a_resumed_run_takes_back_exactly_the_declared_fields():
    budget = Budget(max_turns=3, max_tool_calls=4)
    manifest = RunManifest(
        run_id="r", skill_name="s", content_hash="c", suite_hash="h", models=["local/a"],
        mode="agent", placement="system", runs=5, temperature=0.1, max_tokens=99,
        judge="local/j", case_ids=["x"], harness="codex", agent_budget=asdict(budget))
    given = EvalConfig(models=["local/b"], runs=2, concurrency=7, max_cost=1.5,
                       base_url="http://127.0.0.1:1", use_cache=False, sandbox="bwrap")
    resumed = resumed_config(manifest, given)
    for field in fields(EvalConfig):
        got = getattr(resumed, field.name)
        if field.name in RESTORED_ON_RESUME:
            kept = budget if field.name == "budget" else getattr(manifest, field.name)
            assert got == kept != getattr(given, field.name), field.name
        else:
            assert got == getattr(given, field.name), field.name


def test_the_resume_hint_repeats_only_options_the_manifest_does_not_restore(tmp_path):
    args = [str(tmp_path), "--model", "local/m", "--temperature", "0.2", "--cases", "a,b",
            "--max-turns", "7", "--harness", "codex", "--mode", "agent", "--judge", "local/j",
            "--concurrency", "3", "--max-cost", "2.5", "--no-cache", "--sandbox", "bwrap",
            "--tests", "suite.json", "--shards", "4", "--flavor", "t4-small"]
    with eval_command.make_context("eval", args):
        words = shlex.split(_resume_command("RUN"))
    assert words[-2:] == ["--resume", "RUN"]
    for left_out in ("--model", "--temperature", "--cases", "--max-turns", "--harness",
                     "--mode", "--judge", "--shards"):
        assert left_out not in words
    for repeated in ("--concurrency", "--max-cost", "--no-cache", "--sandbox", "--tests",
                     "--flavor"):
        assert repeated in words


def test_a_resumed_trigger_run_takes_back_its_modes_declared_fields(tmp_path):
    from registry.evaluation.run_manifest import RESTORED_ON_TRIGGER_RESUME

    manifest = RunManifest(
        run_id="r", skill_name="s", content_hash="c", suite_hash="h", models=["local/a"],
        mode="trigger", runs=5, temperature=0.1, max_tokens=99, case_ids=["q1"],
        harness="codex", distractors=["x"], distractors_hash="d",
        distractors_from=str(tmp_path))
    given = EvalConfig(models=["local/b"], mode="trigger", runs=2, concurrency=7,
                       max_cost=1.5, use_cache=False)
    resumed = resumed_config(manifest, given)
    assert resumed.distractors == tmp_path
    for field in fields(EvalConfig):
        got = getattr(resumed, field.name)
        if field.name in RESTORED_ON_TRIGGER_RESUME and field.name != "distractors":
            assert got == getattr(manifest, field.name), field.name
        elif field.name not in RESTORED_ON_TRIGGER_RESUME:
            assert got == getattr(given, field.name), field.name
    bundled = manifest.model_copy(update={"distractors_from": "bundled"})
    assert resumed_config(bundled, given).distractors is None
