"""Blind review of a run's answers (issue 42): the feedback file, the sides, the checks on a
file edited by hand or from another run, the preference summary, and the push beside the run.

The page itself is driven in a browser by `test_review_browser`; here the data model and the
CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from registry.config import Settings
from registry.errors import HubskillsError
from registry.publishing.push import push_saved_run
from registry.registries import get_store
from registry.results.runs import ResultRow, RunManifest, RunWriter, new_run_id
from registry.review import open_local_review, open_registry_review, summarize
from registry.review.feedback import MAX_COMMENT, MAX_FILE_BYTES, Answer, seal, skill_side
from registry.review.session import SECRET, runs_feedback
from registry.review.teacher import MAX_FEEDBACK, teacher_feedback
from registry.stores.feedback import read_feedback
from tests.test_install import run_main

SKILL_REPO = "hubskills/agent-skill-md"


def seeded_run(runs_dir: Path, cases: int = 6, *, arms: tuple[str, ...] = ("baseline", "skill"),
               errors: bool = False, repo: str | None = None, run_id: str | None = None
               ) -> str:
    """A finished run of `cases` cases: case i's skill answer passes when i is even, the
    baseline's never; the last case's skill arm is an error (so it has no pair)."""
    manifest = RunManifest(run_id=run_id or new_run_id(), skill_name="agent-skill-md",
                           skill_repo=repo, skill_version="1.0.0", content_hash="sha256:0",
                           suite_hash="sha256:0", models=["local/x"],
                           case_ids=[f"c{i}" for i in range(cases)], status="complete",
                           partial=False, samples_planned=2 * cases, samples_done=2 * cases)
    writer = RunWriter(runs_dir, manifest)
    for i in range(cases):
        for arm in arms:
            broken = errors or (arm == "skill" and i == cases - 1)
            writer.add(ResultRow(
                run_id=manifest.run_id, skill_name="agent-skill-md", skill_repo=repo,
                skill_version="1.0.0", model="local/x", arm=arm, case_id=f"c{i}",
                passed=None if broken else (arm == "skill" and i % 2 == 0), score=1.0,
                output=f"{arm} answer to c{i} <script>alert(1)</script>",
                error="timeout" if broken else None))
    writer.close("complete")
    return manifest.run_id


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    return tmp_path / "runs"


def test_sides_are_drawn_from_the_secret_not_the_case_id():
    cases = [f"c{i}" for i in range(40)]
    one = [skill_side("1" * 64, "r", c, "m#0") for c in cases]
    other = [skill_side("2" * 64, "r", c, "m#0") for c in cases]
    assert one == [skill_side("1" * 64, "r", c, "m#0") for c in cases]  # the same each time
    assert {"A", "B"} <= set(one) and one != other  # both sides; another secret, other sides
    assert 10 <= one.count("A") <= 30  # a fair draw (40 cases: outside this p < 0.002)


def test_each_reviewer_is_shown_sides_of_their_own():
    """Red-team round 5: sides were drawn per case alone, and each answer published says where
    the skill was, so a second reviewer read every answered case's sides off the first one's
    file (or off their own second account's) before answering "blind"."""
    cases = [f"c{i}" for i in range(40)]
    alice = [skill_side("1" * 64, "r", c, "m#0", "alice") for c in cases]
    bob = [skill_side("1" * 64, "r", c, "m#0", "bob") for c in cases]
    agree = sum(a == b for a, b in zip(alice, bob, strict=True))
    assert 10 <= agree <= 30  # independent draws (40 cases: outside this p < 0.002)


def test_a_review_is_resumed_with_the_same_sides_and_answers(runs_dir: Path):
    run_id = seeded_run(runs_dir)
    review = open_local_review(runs_dir, run_id)
    assert [c.case for c in review.cases] == ["c0", "c1", "c2", "c3", "c4"]  # c5: no pair
    sides = {c.case: review.case(c.case, "ann").skill_side for c in review.cases}
    first = review.next_case("ann")
    assert first is not None and first.case == "c0"
    assert first.side(first.skill_side).output.startswith("skill answer")
    saved = review.answer("ann", "c0", first.skill_side, "  clearer  ")
    assert saved.preferred == "skill" and saved.comment == "clearer"
    again = open_local_review(runs_dir, run_id)
    assert {c.case: again.case(c.case, "ann").skill_side for c in again.cases} == sides
    assert again.progress("ann") == (1, 5) and again.next_case("ann").case == "c1"
    line = json.loads((runs_dir / run_id / "feedback.jsonl").read_text())
    assert {k: line[k] for k in ("run_id", "case", "sample", "skill_side", "choice",
                                 "reviewer")} == {
        "run_id": run_id, "case": "c0", "sample": "local/x#0", "skill_side": sides["c0"],
        "choice": sides["c0"], "reviewer": "ann"}
    assert oct((runs_dir / run_id / SECRET).stat().st_mode & 0o777) == "0o600"


def test_a_second_answer_to_a_case_is_refused_and_nothing_changes(runs_dir: Path):
    run_id = seeded_run(runs_dir)
    review = open_local_review(runs_dir, run_id)
    review.answer("ann", "c1", "tie")
    path = runs_dir / run_id / "feedback.jsonl"
    before = path.read_bytes()
    with pytest.raises(HubskillsError, match="already answered case 'c1'"):
        review.answer("ann", "c1", "A")
    with pytest.raises(HubskillsError, match="not a choice"):
        review.answer("ann", "c2", "C")
    with pytest.raises(HubskillsError, match="not a reviewer name"):
        review.answer("../ann", "c2", "A")  # it names the pushed file
    assert path.read_bytes() == before
    review.answer("bob", "c1", "both_bad")  # another reviewer may
    duplicated = path.read_bytes() + before
    path.write_bytes(duplicated)
    with pytest.raises(HubskillsError, match="line 3 is ann's second answer"):
        open_local_review(runs_dir, run_id)
    assert path.read_bytes() == duplicated


@pytest.mark.parametrize("edit, says", [
    (lambda a: a | {"choice": "B" if a["choice"] == "A" else "A"}, "does not match its seal"),
    (lambda a: a | {"skill_side": "B" if a["skill_side"] == "A" else "A"},  # or the side an
     "(which is not the side shown|does not match its seal)"),  # older answer had: its seal
    (lambda a: a | {"run_id": "20260101-000000-abcdef"}, "copied from another run"),
    (lambda a: a | {"case": "c5"}, "has no pair for"),
    (lambda a: {k: v for k, v in a.items() if k != "time"}, "not a review answer"),
])
def test_a_feedback_file_edited_by_hand_is_refused_whole(runs_dir: Path, edit, says):
    run_id = seeded_run(runs_dir)
    review = open_local_review(runs_dir, run_id)
    review.answer("ann", "c0", "A")
    review.answer("ann", "c1", "A")
    path = runs_dir / run_id / "feedback.jsonl"
    first, second = path.read_text().splitlines()
    edited = f"{first}\n{json.dumps(edit(json.loads(second)))}\n"
    path.write_text(edited)
    with pytest.raises(HubskillsError, match=f"line 2 .*{says}") as info:
        open_local_review(runs_dir, run_id)
    assert "nothing was changed" in info.value.message and "mv " in info.value.hint
    assert path.read_text() == edited


def test_answers_from_another_run_with_the_same_cases_are_refused(runs_dir: Path):
    one, other = seeded_run(runs_dir), seeded_run(runs_dir)
    open_local_review(runs_dir, one).answer("ann", "c0", "A")
    copied = (runs_dir / one / "feedback.jsonl").read_text().replace(one, other)
    (runs_dir / other / "feedback.jsonl").write_text(copied)
    with pytest.raises(HubskillsError, match="line 1"):  # another secret: side or seal
        open_local_review(runs_dir, other)


@pytest.mark.parametrize("kind, says", [("one arm", "only the skill arm answered"),
                                        ("errors", "every sample is an error")])
def test_a_run_with_no_pairs_cannot_be_reviewed(runs_dir: Path, kind: str, says: str):
    run_id = seeded_run(runs_dir, arms=("skill",)) if kind == "one arm" else \
        seeded_run(runs_dir, errors=True)
    with pytest.raises(HubskillsError, match=f"no pairs of answers to review: {says}"):
        open_local_review(runs_dir, run_id)
    assert sorted(p.name for p in (runs_dir / run_id).iterdir()) == ["manifest.json",
                                                                     "rows.jsonl"]


def _answer(case: str, preferred: str, reviewer: str = "ann") -> Answer:
    choice = {"skill": "A", "baseline": "B"}.get(preferred, preferred)
    return Answer(run_id="r", case=case, sample="m#0", skill_side="A", choice=choice,
                  reviewer=reviewer, time="2026-12-06T00:00:00+00:00")


def test_the_preference_rate_has_the_wilson_interval_over_cases_ties_apart():
    answers = [_answer("c0", "skill"), _answer("c1", "skill"), _answer("c2", "skill"),
               _answer("c3", "skill"), _answer("c4", "baseline"), _answer("c5", "tie"),
               _answer("c6", "both_bad")]
    summary = summarize(answers)
    assert (summary.skill, summary.baseline, summary.ties, summary.both_bad) == (4, 1, 1, 1)
    assert summary.rate == pytest.approx(0.8)
    # Wilson 95% for 4 of 5 (statsmodels proportion_confint(4, 5, method="wilson"))
    assert summary.low == pytest.approx(0.37553, abs=1e-5)
    assert summary.high == pytest.approx(0.96378, abs=1e-5)
    assert summary.headline == "people preferred the skill's answer in 4 of 7 reviewed cases"
    assert summary.interval == "80% of 5 cases with a preference (95% CI 38%–96%)"
    # a case counts once: two reviewers for the skill and one against make one skill case
    two = summarize([_answer("c0", "skill"), _answer("c0", "skill", "bob"),
                     _answer("c0", "baseline", "eve")])
    assert (two.skill, two.reviewed, two.answers) == (1, 1, 3)


def test_the_summary_names_where_people_and_the_checks_disagree(runs_dir: Path):
    run_id = seeded_run(runs_dir)  # the skill passes c0, c2, c4 and fails c1, c3
    review = open_local_review(runs_dir, run_id)
    for case in review.cases:
        want_skill = case.case in ("c1", "c3")  # people side with the failing skill answers
        side = review.case(case.case, "ann").skill_side  # where ann is shown the skill's
        review.answer("ann", case.case, side if want_skill else "B" if side == "A" else "A")
    summary = review.summary()
    assert summary.checks_pass_people_baseline == ("c0", "c2", "c4")
    assert summary.checks_fail_people_skill == ("c1", "c3")


def test_the_cli_summary_and_its_errors(runs_dir: Path, tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path))
    run_id = seeded_run(Settings.from_env().runs_dir)
    review = open_local_review(Settings.from_env().runs_dir, run_id)
    for case in review.cases[:3]:
        review.answer("local", case.case, review.case(case.case, "local").skill_side)
    code, out, err = run_main(capsys, "review-outputs", run_id, "--summary")
    assert code == 0, err
    assert "people preferred the skill's answer in 3 of 3 reviewed cases" in out
    assert "95% CI" in out
    code, out, _ = run_main(capsys, "review-outputs", run_id, "--summary", "--json")
    assert json.loads(out)["skill"] == 3
    one_arm = seeded_run(Settings.from_env().runs_dir, arms=("baseline",))
    code, out, err = run_main(capsys, "review-outputs", one_arm, "--summary")
    assert code == 1 and "no pairs of answers to review" in err + out
    assert "Traceback" not in err + out


def test_answers_are_pushed_beside_the_run_and_change_no_badge(tmp_path: Path):
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path), "HUBSKILLS_REGISTRY":
                                  "local"})
    store = get_store(settings)
    run_id = seeded_run(settings.runs_dir, repo=SKILL_REPO)
    review = open_local_review(settings.runs_dir, run_id)
    for case in review.cases:
        review.answer("ann", case.case, case.skill_side, "the skill's is right")
    frame_before = store.results_frame()
    token_before = store.results.change_token()
    pushed = push_saved_run(store, settings.runs_dir, run_id)
    assert pushed.feedback == (f"feedback/{run_id}/ann.jsonl",)
    files = read_feedback(store, run_id)
    assert list(files) == [f"feedback/{run_id}/ann.jsonl"]
    assert files[pushed.feedback[0]] == (settings.runs_dir / run_id / "feedback.jsonl"
                                         ).read_bytes()
    # not rows: the evals split reads only the run's rows, and the badges' token is the same
    assert len(store.results_frame()) == len(frame_before) + 12
    assert store.results.change_token() != token_before  # the run's rows did change it
    token_after_push = store.results.change_token()
    online = open_registry_review(store, run_id, "9" * 64)  # as the Space reads it
    assert [a.reviewer for a in online.answers] == ["ann"] * 5
    online.answer("bob", "c0", "tie")
    assert store.results.change_token() == token_after_push  # feedback changes no result
    assert runs_feedback(store, {run_id}).reviewed == 5
    # lines in one reviewer's file that name others are not more people (a red-team note)
    counted = runs_feedback(store, {run_id}).answers
    mine = (store.dataset_dir / f"feedback/{run_id}/bob.jsonl")
    others = [json.loads(line) | {"reviewer": f"sock{i}"} for i, line in
              enumerate(mine.read_text().splitlines() * 3)]
    mine.write_text(mine.read_text() + "".join(json.dumps(o) + "\n" for o in others))
    assert runs_feedback(store, {run_id}).answers == counted


def test_answers_are_pushed_to_a_hub_dataset_with_the_run(tmp_path: Path):
    import huggingface_hub
    from fakes.hub_server import FakeHub

    if huggingface_hub.constants.HF_HUB_OFFLINE:
        pytest.skip("huggingface_hub was imported with HF_HUB_OFFLINE=1 (read once, at import)")
    with FakeHub() as hub:
        settings = Settings.from_env({
            "HUBSKILLS_HOME": str(tmp_path / "home"), "HUBSKILLS_REGISTRY": "hub",
            "HF_ENDPOINT": hub.url, "HF_TOKEN": hub.token,
            "HUBSKILLS_RESULTS_REPO": "tester/evals"})
        store = get_store(settings)
        run_id = seeded_run(settings.runs_dir, repo="tester/agent-skill-md")
        review = open_local_review(settings.runs_dir, run_id)
        for case in review.cases[:2]:
            review.answer("ann", case.case, "tie", "close")
        pushed = push_saved_run(store, settings.runs_dir, run_id)
        path = f"feedback/{run_id}/ann.jsonl"
        assert pushed.feedback == (path,)
        files = hub.repo("tester/evals", "dataset").head.files
        assert files[path] == (settings.runs_dir / run_id / "feedback.jsonl").read_bytes()
        assert [p for p in files if p.startswith("data/evals/")] == [
            f"data/evals/{pushed.path.split('/')[2]}/{run_id}.jsonl"]
        online = open_registry_review(store, run_id, "3" * 64)  # the Space's reading
        assert len(online.answers) == 2
        online.answer("bob", "c0", "A")
        assert f"feedback/{run_id}/bob.jsonl" in hub.repo("tester/evals", "dataset").head.files


def test_a_run_id_that_is_a_pattern_or_a_path_is_refused(tmp_path: Path):
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path), "HUBSKILLS_REGISTRY":
                                  "local"})
    store = get_store(settings)
    push_saved_run(store, settings.runs_dir, seeded_run(settings.runs_dir, repo=SKILL_REPO))
    for typed in ("*", "../x", "a/b"):
        with pytest.raises(HubskillsError, match="not a usable run id"):
            open_registry_review(store, typed, "1" * 64)


def test_the_cli_pushes_the_answers_of_a_pushed_run(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("HUBSKILLS_HOME", str(tmp_path))
    monkeypatch.setenv("HUBSKILLS_REGISTRY", "local")
    settings = Settings.from_env()
    run_id = seeded_run(settings.runs_dir, repo=SKILL_REPO)
    review = open_local_review(settings.runs_dir, run_id)
    review.answer("ann", "c0", "tie")
    code, out, err = run_main(capsys, "review-outputs", run_id, "--push")
    assert code == 1 and "does not hold run" in err + out  # the run first
    push_saved_run(get_store(settings), settings.runs_dir, run_id)
    review.answer("ann", "c1", "A")
    code, out, err = run_main(capsys, "review-outputs", run_id, "--push")
    assert code == 0 and f"feedback/{run_id}/ann.jsonl" in out, err
    [data] = read_feedback(get_store(settings), run_id).values()
    assert len(data.splitlines()) == 2


def _sealed_line(runs_dir: Path, run_id: str, **fields: str) -> str:
    """A line of the run's feedback file sealed with its review's own secret: only its
    bounds can refuse it."""
    secret = (runs_dir / run_id / SECRET).read_text().strip()
    sample = "local/x#0"
    body = {"run_id": run_id, "case": "c0", "sample": sample, "choice": "tie",
            "skill_side": skill_side(secret, run_id, fields.get("case", "c0"), sample),
            "comment": "", "reviewer": "ann", "time": "2026-12-06T10:00:00+00:00", **fields}
    answer = Answer.model_construct(**body)
    return json.dumps({**body, "seal": seal(secret, answer)})


@pytest.mark.parametrize("line, says", [
    ({"time": "2026-12-06T10:00:00+00:00" + " " * 200}, "time"),  # no time, and long
    ({"time": "x" * 70_000}, "longer than 64 KiB"),
    ({"case": "c0" + "\u200b" * 2000}, "case"),  # an id over MAX_ID is refused unread
])
def test_feedback_lines_are_bounded_before_they_are_used(runs_dir: Path, line, says):
    run_id = seeded_run(runs_dir)
    open_local_review(runs_dir, run_id)  # makes its secret
    path = runs_dir / run_id / "feedback.jsonl"
    path.write_text(_sealed_line(runs_dir, run_id, **line) + "\n")
    with pytest.raises(HubskillsError, match=f"line 1 .*{says}") as info:
        open_local_review(runs_dir, run_id)
    assert len(info.value.message) < 1000  # the line is not echoed back


def test_a_feedback_file_over_its_size_is_refused_whole(runs_dir: Path):
    run_id = seeded_run(runs_dir)
    open_local_review(runs_dir, run_id).answer("ann", "c0", "A")
    path = runs_dir / run_id / "feedback.jsonl"
    path.write_bytes(path.read_bytes() + b"\n" * (MAX_FILE_BYTES + 1))  # blank lines: no shape
    with pytest.raises(HubskillsError, match="larger than 16 MiB"):
        open_local_review(runs_dir, run_id)


def test_the_teacher_gets_comments_without_control_characters_and_within_a_budget(
        runs_dir: Path):
    run_id = seeded_run(runs_dir, cases=40)
    review = open_local_review(runs_dir, run_id)
    typed = "\x1b[2Jcleared \u202eesrever\x07 screen"  # as a visitor could type it
    review.answer("ann", "c0", "both_bad", typed)
    kept = review.answered("ann")["c0"].comment
    assert kept == "[2Jcleared esrever screen"  # written without what a terminal acts on
    path = runs_dir / run_id / "feedback.jsonl"
    hand = _sealed_line(runs_dir, run_id, case="c1", comment="\x1b]0;owned\x07title \ue000ok")
    path.write_text(path.read_text() + hand + "\n")  # written by an older version, or by hand
    for i in range(2, 39):
        review = open_local_review(runs_dir, run_id)
        review.answer("ann", f"c{i}", "both_bad", "w" * MAX_COMMENT)
    found = teacher_feedback(runs_dir, run_id, "agent-skill-md")
    assert "[2Jcleared esrever screen" in found.text and "]0;ownedtitle ok" in found.text
    assert not any(c in found.text for c in "\x1b\x07\u202e\ue000")
    assert found.marked == 39 and len(found.text) < MAX_FEEDBACK + 2000
    assert "more marked case" in found.text and "left out" in found.text
