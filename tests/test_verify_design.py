"""`verify`'s side of an adaptive run: every stop and skip recomputed from the rows
(`registry/verify/design.py`); a run cut, or stopped, where its design did not allow is a
mismatch."""

from __future__ import annotations

from registry.results.runs import ResultRow, RunManifest
from registry.results.sequential import ARMS, Design, plan_round
from registry.verify.design import design_problems

CASES = [f"c{i:02d}" for i in range(20)]


def outcome(cid: str, arm: str, r: int) -> bool:
    """Outcomes that keep a 3-run design going all three rounds; five cases always pass (they
    settle after two runs)."""
    return int(cid[1:]) < 5 or (int(cid[1:]) + r + (arm == "skill")) % 3 > 0


def adaptive_run(design: Design) -> tuple[RunManifest, list[ResultRow]]:
    """A run asked as the design plans it, with the manifest a closing run writes."""
    history = {c: {a: [] for a in ARMS} for c in CASES}
    rows = []
    while not (plan := plan_round(design, history)).stop:
        for cid, run in plan.samples:
            for arm in ARMS:
                value = outcome(cid, arm, run)
                history[cid][arm].append(value)
                rows.append(ResultRow(run_id="r", skill_name="s", model="m", arm=arm,
                                      case_id=cid, repeat=run, passed=value,
                                      round=plan.round))
    manifest = RunManifest(run_id="r", skill_name="s", content_hash="h", suite_hash="x",
                           models=["m"], runs=design.runs, case_ids=CASES, status="complete",
                           partial=False, design=design.to_dict(),
                           design_stops={"m": {"round": plan.round, "reason": plan.reason,
                                               "verdict": plan.verdict,
                                               "settled": plan.settled}})
    return manifest, rows


DESIGN = Design(runs=3, futility=0, settle_after=2, splits=1)  # a round a run


def test_an_honest_adaptive_run_checks_clean():
    manifest, rows = adaptive_run(DESIGN)
    assert {r.round for r in rows} == {1, 2, 3}
    assert design_problems(manifest, rows) == []


def test_rows_cut_where_the_design_had_not_stopped_are_a_mismatch():
    manifest, rows = adaptive_run(DESIGN)
    cut = [r for r in rows if r.round < 3]
    found = design_problems(manifest, cut)
    assert found and "where the design had not stopped" in found[0]
    partial = manifest.model_copy(update={"partial": True, "status": "interrupted"})
    assert design_problems(partial, cut) == []  # a partial run may be resumed; never ranked


def test_a_forged_early_stop_is_a_mismatch():
    manifest, rows = adaptive_run(DESIGN)
    forged = manifest.model_copy(update={"design_stops": {"m": {
        "round": 1, "reason": "helps, decided at round 1", "verdict": "helps"}}})
    found = design_problems(forged, [r for r in rows if r.round == 1])
    assert any("had not stopped" in f for f in found)
    assert any("records round 1" in f for f in design_problems(forged, rows))


def test_a_sample_the_plan_did_not_ask_or_a_row_without_its_round_is_a_mismatch():
    manifest, rows = adaptive_run(Design(runs=3, futility=0, settle_after=2))
    asked = {(r.case_id, r.repeat) for r in rows}
    skipped = next(c for c in CASES if (c, 2) not in asked)  # a settled case
    extra = [ResultRow(run_id="r", skill_name="s", model="m", arm=arm, case_id=skipped,
                       repeat=2, passed=True, round=3) for arm in ARMS]
    found = design_problems(manifest, rows + extra)
    assert any(f"{skipped} run 3" in f and "did not ask" in f for f in found)
    unplaced = [r.model_copy(update={"round": None}) if i == 0 else r
                for i, r in enumerate(rows)]
    assert "record no round" in design_problems(manifest, unplaced)[0]


def test_a_design_no_hubskills_could_run_is_a_mismatch_not_a_crash():
    manifest, rows = adaptive_run(DESIGN)
    for bad in ({**DESIGN.to_dict(), "alpha": 0.9}, {**DESIGN.to_dict(), "lucky": 1}):
        found = design_problems(manifest.model_copy(update={"design": bad}), rows)
        assert found and "cannot be replayed" in found[0]


def test_a_row_claiming_a_round_far_past_the_plan_is_a_mismatch_without_replaying_it():
    """A row's round sizes the replay's list of rounds: a submitter's round 10**12 is named,
    not allocated."""
    manifest, rows = adaptive_run(DESIGN)
    forged = [rows[0].model_copy(update={"round": 10**12}), *rows[1:]]
    found = design_problems(manifest, forged)
    assert len(found) == 1 and "past the design's 3" in found[0] and "1000000000000" in found[0]
