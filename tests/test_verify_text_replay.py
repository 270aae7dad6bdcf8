"""`hubskills verify` on a run graded by text checks alone: samples sharing a case and an output
are graded once and share a score, and each tampering is still named on its own sample.

The fake model answers every repeat of a case the same way, so each output below is shared by
two samples: the one tampered with and a genuine one that must still hold.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer
from test_verify import FAST, N_CASES, knows_fact_if_told, make_skill, rows_of, write_rows

from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.verify.replay import verify_run


@pytest.fixture
def text_run(tmp_path):
    """A genuine run of a skill graded by `contains` and `not_contains`, 2 repeats: (its
    settings, its folder)."""
    skill = make_skill(tmp_path, with_python=False)
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                      "HUBSKILLS_BASE_URL": server.url})
        made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=2,
                                                retry=FAST), settings)
    return settings, settings.runs_dir / made.manifest.run_id


def _label(row: dict) -> str:
    return f"{row['case_id']} #{row['repeat']} {row['arm']} (local/fake-student)"


def _twin(rows: list[dict], row: dict) -> dict:
    """The other repeat of `row`'s case and arm: the same output."""
    twin = next(r for r in rows if r is not row and (r["case_id"], r["arm"]) ==
                (row["case_id"], row["arm"]))
    assert twin["output"] == row["output"]
    return twin


def _sample_differences(folder: Path, settings: Settings) -> dict[str, dict[str, tuple]]:
    report = verify_run(folder.name, settings)
    assert report.status == "mismatch", report.to_dict()
    found: dict[str, dict[str, tuple]] = {}
    for d in report.differences:
        if not d.sample.startswith("summary"):
            found.setdefault(d.sample, {})[d.field] = (d.stored, d.regraded)
    return found


def test_a_genuine_text_run_verifies_with_every_check_regraded(text_run):
    settings, folder = text_run
    report = verify_run(folder.name, settings)
    assert report.status == "verified", report.to_dict()
    assert (report.samples, report.checks_regraded) == (N_CASES * 4, N_CASES * 4 * 2)


def test_a_flipped_check_is_named_on_its_sample_not_on_its_twin(text_run):
    settings, folder = text_run
    rows = rows_of(folder)
    flipped = next(r for r in rows if r["arm"] == "baseline")  # "Probably port 8080."
    flipped["checks"][0].update(passed=True, reason="found '4417'")
    flipped.update(passed=True, score=1.0)
    write_rows(folder, rows)
    found = _sample_differences(folder, settings)
    assert found == {_label(flipped): {"check 1 (contains)": ("passed", "failed"),
                                       "passed": (True, False)}}
    assert _label(_twin(rows, flipped)) not in found


@pytest.mark.parametrize(("field", "value", "named"), [
    ("weight", 2.0, "check 2 (not_contains) weight"),
    ("label", "absent", "check 2"),
    ("skipped", True, "check 2 (not_contains)"),
])
def test_an_edited_verdict_is_named_though_its_output_was_graded_before(
        text_run, field, value, named):
    settings, folder = text_run
    rows = rows_of(folder)
    genuine = next(r for r in rows if r["arm"] == "skill")
    edited = _twin(rows, genuine)  # graded after its twin: its output is known by then
    edited["checks"][1][field] = value
    write_rows(folder, rows)
    found = _sample_differences(folder, settings)
    assert list(found) == [_label(edited)]
    assert named in found[_label(edited)]


def test_an_edited_score_alone_is_named(text_run):
    settings, folder = text_run
    rows = rows_of(folder)
    edited = _twin(rows, next(r for r in rows if r["arm"] == "baseline"))
    edited["score"] = 0.75  # one check of two passes: 0.5
    write_rows(folder, rows)
    assert _sample_differences(folder, settings) == {_label(edited): {"score": (0.75, 0.5)}}



def test_a_replay_pauses_the_collector_and_leaves_it_as_it_found_it(text_run):
    settings, folder = text_run
    started: list[int] = []

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(info["generation"])

    thresholds = gc.get_threshold()
    gc.collect()  # none of the 50 allocations that start the next collection is made yet
    gc.set_threshold(50)  # running, the collector would run a hundred times in this replay
    gc.callbacks.append(record)
    try:
        report = verify_run(folder.name, settings)
    finally:
        gc.callbacks.remove(record)
        gc.set_threshold(*thresholds)
    assert report.status == "verified", report.to_dict()
    assert len(started) <= 1, started  # at most the one its objects set off once it is back
    assert gc.isenabled()
    gc.disable()
    try:
        assert verify_run(folder.name, settings).status == "verified"
        assert not gc.isenabled()  # a collector the caller paused stays paused
    finally:
        gc.enable()
