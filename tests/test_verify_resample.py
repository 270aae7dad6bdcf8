"""`--resample`: a spot check re-asks the model and catches outputs edited to pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import get_type_hints

import pytest
from fakes.openai_server import FakeOpenAIServer
from test_verify import FAST, knows_fact_if_told, make_skill

from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.evaluation.run_manifest import stored_summaries
from registry.results.runs import ResultRow, RunManifest, read_manifest, read_rows
from registry.verify.replay import verify_run
from registry.verify.resample import (
    ALPHA,
    check_cost,
    draw_cases,
    estimate_cost,
    false_alarm_rate,
)
from registry.verify.spot import spot_check


@pytest.fixture
def settings():
    return Settings.from_env()


def test_the_false_alarm_rate_is_at_most_its_level_by_simulation():
    for rates in ([0.5], [0.1, 0.5, 0.9], [0.02, 0.3, 0.7, 0.98]):
        assert false_alarm_rate(rates, k=30, trials=3000, seed=7) <= ALPHA
    assert false_alarm_rate([0.5], k=30, trials=3000, seed=7, alpha=0.5) > ALPHA  # it can fire


def test_cases_are_drawn_seeded_and_stratified():
    rows = [ResultRow(run_id="r", skill_name="s", model="m", arm="skill", case_id=f"c{i}")
            for i in range(4)]
    slots = draw_cases(rows, 6, seed=3)
    assert slots == draw_cases(rows, 6, seed=3)
    assert sorted(case for case, repeat in slots if repeat == 0) == ["c0", "c1", "c2", "c3"]
    assert [repeat for _, repeat in slots] == [0, 0, 0, 0, 1, 1]
    priced = [r.model_copy(update={"cost_usd": 0.01}) for r in rows]
    assert estimate_cost(priced, slots) == pytest.approx(0.12)  # 6 cases x 2 arms
    with pytest.raises(HubskillsError, match=r"cost about \$0.1200, over --max-cost \$0.05"):
        check_cost(estimate_cost(priced, slots), 0.05)


def test_an_output_edited_to_pass_regrades_cleanly_but_fails_the_spot_check(settings, tmp_path):
    skill = make_skill(tmp_path, with_python=False)
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        fake = settings.with_(base_url=server.url)
        made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1,
                                                retry=FAST), fake)
        run_id = made.manifest.run_id
        genuine = spot_check(read_manifest(fake.runs_dir, run_id),
                             read_rows(fake.runs_dir, run_id), skill, fake, k=10, seed=1)
        assert genuine.consistent, genuine.to_dict()
        folder = fake.runs_dir / run_id
        rows = read_rows(fake.runs_dir, run_id)
        forged = [r.model_copy(update={
            "output": "Zorblax listens on port 4417.", "passed": True, "score": 1.0,
            "checks": [c.model_copy(update={"passed": True}) for c in r.checks]})
            if r.arm == "baseline" else r for r in rows]
        (folder / "rows.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in forged))
        manifest = json.loads((folder / "manifest.json").read_text())
        manifest["summaries"] = json.loads(json.dumps(stored_summaries(forged), default=str))
        (folder / "manifest.json").write_text(json.dumps(manifest))
        assert verify_run(run_id, fake).status == "verified"  # the grading holds
        caught = spot_check(read_manifest(fake.runs_dir, run_id), forged, skill, fake, k=10,
                            seed=1)
    assert not caught.consistent
    baseline = caught.arms[0]
    assert (baseline.arm, baseline.pairs, baseline.b, baseline.c) == ("baseline", 10, 10, 0)
    assert baseline.p_value < ALPHA / 2


def test_the_registry_side_of_verify_is_typed_with_the_store_protocol_and_settings():
    """What reads runs from a registry sits above `stores`, so its seams name `SkillStore` and
    `Settings` (resolved here as a type checker would), not `Any`."""
    from registry.stores.base import SkillStore
    from registry.verify import pushed as verify_pushed
    from registry.verify import spot as resample

    names = {"Settings": Settings, "SkillStore": SkillStore, "ResultRow": ResultRow,
             "RunManifest": RunManifest}
    opener = Callable[[], SkillStore]
    wanted = {verify_pushed.verify_published: {"store": SkillStore, "settings": Settings},
              verify_pushed.read_pushed: {"store": SkillStore},
              resample.load_run: {"settings": Settings, "open_store": opener},
              resample.resample_run: {"settings": Settings, "open_store": opener},
              resample.spot_check: {"settings": Settings}}
    for function, params in wanted.items():
        hints = get_type_hints(function, localns=names)
        assert {name: hints[name] for name in params} == params, function.__name__
