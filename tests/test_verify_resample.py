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
from registry.evaluation.arms import build_arm
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.evaluation.run_manifest import stored_summaries
from registry.format.skill import load_skill
from registry.format.suite import load_suite, suite_path
from registry.providers import worst_case
from registry.results.runs import ResultRow, RunManifest, read_manifest, read_rows
from registry.verify.replay import verify_run
from registry.verify.resample import (
    ALPHA,
    ARMS,
    check_cost,
    draw_cases,
    estimate,
    false_alarm_rate,
    plan_check,
)
from registry.verify.spot import spot_check


@pytest.fixture
def settings():
    return Settings.from_env()


def test_the_false_alarm_rate_is_at_most_its_level_by_simulation():
    for rates in ([0.5], [0.1, 0.5, 0.9], [0.02, 0.3, 0.7, 0.98]):
        assert false_alarm_rate(rates, k=30, trials=3000, seed=7) <= ALPHA
    assert false_alarm_rate([0.5], k=30, trials=3000, seed=7, alpha=0.5) > ALPHA  # it can fire


def test_a_spot_check_too_small_to_fail_is_refused_and_never_badged():
    """With K under MIN_K even pairs that all disagree one way stay above ALPHA / 2: such a
    check could only pass, yet a walk's K=1 earned `spot-checked` on the board."""
    from registry.results.formulas import mcnemar_exact
    from registry.results.leaderboard_badges import REPLAYED, SPOT_CHECKED, badge_from
    from registry.verify.resample import MIN_K

    assert mcnemar_exact(MIN_K, 0) < ALPHA / 2 <= mcnemar_exact(MIN_K - 1, 0)
    manifest = RunManifest(run_id="r", skill_name="s", content_hash="c", suite_hash="h",
                           models=["m"], runs=1, case_ids=["c0"])
    rows = [ResultRow(run_id="r", skill_name="s", model="m", arm=arm, case_id="c0")
            for arm in ("baseline", "skill")]
    with pytest.raises(HubskillsError, match=f"under {MIN_K} samples per arm"):
        plan_check(manifest, rows, MIN_K - 1, seed=0)
    assert plan_check(manifest, rows, MIN_K, seed=0)[1].k == MIN_K
    replay = {"kind": "replay", "status": "verified", "verified_at": "2026-12-01"}
    for k, badge in ((1, REPLAYED), (MIN_K - 1, REPLAYED), (MIN_K, SPOT_CHECKED)):
        spot = {"kind": "spot-check", "status": "consistent", "k": k,
                "verified_at": "2026-12-02"}
        assert badge_from([replay, spot]).verification == badge, k


def test_a_check_whose_fresh_answers_errored_compares_too_few_and_is_never_badged():
    """Review note: the badge counted the K asked, not the pairs compared: with 8 of 9 fresh
    answers per arm errored (they pair with nothing), a check of 1 pair called itself
    consistent and the board showed `spot-checked`."""
    from registry.results.leaderboard_badges import REPLAYED, badge_from
    from registry.verify.resample import MIN_K, compare, spot_record

    cases = [f"c{i}" for i in range(MIN_K)]
    manifest = RunManifest(run_id="r", skill_name="s", content_hash="c", suite_hash="h",
                           models=["m"], runs=1, case_ids=cases)
    stored = [ResultRow(run_id="r", skill_name="s", model="m", arm=arm, case_id=case,
                        passed=True) for arm in ARMS for case in cases]
    _, check = plan_check(manifest, stored, MIN_K, seed=0)
    fresh = [row.model_copy(update={"run_id": "f", "passed": None, "error": "timeout"}
                            if row.case_id != "c0" else {"run_id": "f"}) for row in stored]
    compare(stored, fresh, check)
    assert [arm.pairs for arm in check.arms] == [1, 1]
    assert (check.status, check.consistent) == ("inconclusive", False)
    assert check.first_problem() == (f"baseline: only 1 of {MIN_K} re-asked samples were "
                                     f"answered and paired, under the {MIN_K} a check needs "
                                     "to be able to fail")
    replay = {"kind": "replay", "status": "verified", "verified_at": "2026-12-01"}
    record = {**spot_record(check, "r", "h", skill_repo=None, skill_revision=None,
                            verified_by="v"), "verified_at": "2026-12-02"}
    assert record["status"] == "inconclusive"
    badge = badge_from([replay, record])
    assert badge.verification == REPLAYED and "compared too few" in badge.reason
    forged = {**record, "status": "consistent"}  # a record that says otherwise is not taken
    assert badge_from([replay, forged]).verification == REPLAYED


def test_cases_are_drawn_seeded_and_stratified():
    rows = [ResultRow(run_id="r", skill_name="s", model="m", arm="skill", case_id=f"c{i}")
            for i in range(4)]
    slots = draw_cases(rows, 6, seed=3)
    assert slots == draw_cases(rows, 6, seed=3)
    assert sorted(case for case, repeat in slots if repeat == 0) == ["c0", "c1", "c2", "c3"]
    assert [repeat for _, repeat in slots] == [0, 0, 0, 0, 1, 1]


def test_the_estimate_is_the_catalogue_price_of_the_suites_prompts(tmp_path):
    """Each arm's first request, as the run builds it, at most `max_tokens` out, at the
    catalogue price: what the cost cap reserves per call. The rows' costs play no part."""
    skill = load_skill(make_skill(tmp_path, with_python=False))
    suite = load_suite(suite_path(skill.path), skill_dir=skill.path)
    manifest = RunManifest(run_id="r", skill_name=skill.name, content_hash="", suite_hash="",
                           models=["openai/gpt-4.1"], mode="inline", max_tokens=700)
    rows = [ResultRow(run_id="r", skill_name="s", model="openai/gpt-4.1", arm=arm,
                      case_id=f"q{i}", cost_usd=1e-9) for i in range(10) for arm in ARMS]
    slots, check = plan_check(manifest, rows, 9, seed=0)
    assert check.estimated_cost is None  # nothing priced from the rows
    estimate(check, manifest, skill, suite, runs=1)
    wanted = sum(worst_case("openai/gpt-4.1", build_arm(arm, case, skill).messages, None, 700)
                 for case in suite.cases if case.id in check.cases for arm in ARMS)
    assert check.estimated_cost == pytest.approx(wanted) and check.calls == 18
    assert check.estimated_cost > 18 * 700 * 8 / 1e6  # the output alone: $8 per Mtok
    with pytest.raises(HubskillsError, match=r"may cost up to \$0\.\d+, over --max-cost"):
        check_cost(check.estimated_cost, 0.01)
    manifest.models = ["openai/fake-unpriced"]
    estimate(check, manifest, skill, suite, runs=1)
    assert check.estimated_cost is None and check.calls == 18


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


def told_and_easy(body: dict) -> str:
    """Right only when told the port and asked one of questions 0-2: the skill arm fails 7 of
    the 10 cases."""
    told = any("4417" in json.dumps(m.get("content")) for m in body["messages"])
    easy = any(f"Question {i}:" in json.dumps(body["messages"]) for i in range(3))
    return "Zorblax listens on port 4417." if told and easy else "Probably port 8080."


def hidden_failure(row: ResultRow) -> ResultRow:
    """A failed skill-arm sample rewritten as a transport error: out of every denominator."""
    if row.arm != "skill" or row.passed:
        return row
    return row.model_copy(update={
        "output": "", "passed": None, "score": None, "checks": [], "cached": False,
        "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "error_kind": "transport",
        "error": "openai keeps failing for fake-student after 4 attempts: HTTP 503"})


def test_failures_rewritten_as_transport_errors_are_caught(settings, tmp_path):
    skill = make_skill(tmp_path, with_python=False)
    with FakeOpenAIServer(responder=told_and_easy) as server:
        fake = settings.with_(base_url=server.url)
        made = run_evaluation(skill, EvalConfig(models=["local/fake-student"], runs=1,
                                                retry=FAST), fake)
        run_id = made.manifest.run_id
        folder = fake.runs_dir / run_id
        forged = [hidden_failure(r) for r in read_rows(fake.runs_dir, run_id)]
        assert sum(r.is_error for r in forged) == 7  # the skill arm now "passes" 3 of 3
        (folder / "rows.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in forged))
        manifest = json.loads((folder / "manifest.json").read_text())
        manifest["summaries"] = json.loads(json.dumps(stored_summaries(forged), default=str))
        (folder / "manifest.json").write_text(json.dumps(manifest))
        assert verify_run(run_id, fake).status == "verified"  # lost samples replay cleanly
        caught = spot_check(read_manifest(fake.runs_dir, run_id), forged, skill, fake, k=20,
                            seed=1)
    assert not caught.consistent, caught.to_dict()
    skill_arm = caught.arms[1]
    assert (skill_arm.arm, skill_arm.pairs, skill_arm.b, skill_arm.c) == ("skill", 20, 14, 0)
    assert skill_arm.stored_errors == 14  # each re-asked, each answered (and failed)
    assert "skill: of 20 pairs, 14 passed only as stored" in caught.first_problem()


def test_the_too_few_hint_is_the_whole_command_at_the_fewest_k():
    """Review note: the hint kept only the target, --run and --resample, so the check it
    named ran here, on the default registry, with no spending cap."""
    from click.testing import CliRunner

    from registry.cli import cli
    from registry.verify.resample import MIN_K

    said = CliRunner().invoke(cli, ["verify", "alice/x", "--run", "R1", "--resample", "3",
                                    "--on", "jobs", "--registry", "hub", "--max-cost", "1.5",
                                    "--max-calls", "40", "--seed", "4", "--json"])
    assert isinstance(said.exception, HubskillsError)
    assert said.exception.hint == (f"hubskills verify alice/x --run R1 --registry hub --resample "
                                   f"{MIN_K} --max-cost 1.5 --max-calls 40 --seed 4 --on jobs "
                                   "--json")
