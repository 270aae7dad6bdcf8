"""The response cache: keyed by the endpoint too, and never stores a secret."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from fakes.gate import Gate
from fakes.openai_server import FakeOpenAIServer

from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.cache import ResponseCache, completion_key
from registry.evaluation.calls import ModelCalls
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.evaluation.judge import make_judge
from registry.secrets import MASK, holding


def one_case_skill(root: Path) -> Path:
    folder = root / "one-case"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: one-case\ndescription: \"One case. Use when "
                                     "testing.\"\n---\n\nSay which server you are.\n")
    cases = [{"id": "c1", "prompt": "Which server?", "checks": [
        {"type": "contains", "value": ["server A"]}]}]
    (folder / "evals" / "evals.json").write_text(json.dumps({"cases": cases}))
    return folder


def test_two_servers_behind_one_local_name_never_share_answers(tmp_path: Path):
    skill = one_case_skill(tmp_path)
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home")})
    config = EvalConfig(models=["local/x"], runs=2)
    with FakeOpenAIServer(responder=lambda body: "I am server A") as a, \
            FakeOpenAIServer(responder=lambda body: "I am server B") as b:
        first = run_evaluation(skill, EvalConfig(**{**vars(config), "base_url": a.url}),
                               settings)
        second = run_evaluation(skill, EvalConfig(**{**vars(config), "base_url": b.url}),
                                settings)
        again = run_evaluation(skill, EvalConfig(**{**vars(config), "base_url": a.url}),
                               settings)
        b_calls = len([r for r in b.requests if r["path"].endswith("/chat/completions")])
    assert {r.output for r in first.rows} == {"I am server A"}
    assert {r.output for r in second.rows} == {"I am server B"} and b_calls == 4
    assert {r.output for r in again.rows} == {"I am server A"}
    assert all(r.cached for r in again.rows)  # the same server again: answered from the cache


def test_the_key_changes_with_every_part_and_only_then():
    base = {"model": "local/x", "endpoint": "http://127.0.0.1:1/v1", "messages": [],
            "seed": 0, "repeat": 0}
    assert completion_key(**base) == completion_key(**{**base, "endpoint": base["endpoint"] + "/"})
    for change in ({"endpoint": "http://127.0.0.1:2/v1"}, {"model": "local/y"}, {"seed": 1},
                   {"repeat": 1}, {"endpoint": None}):
        assert completion_key(**{**base, **change}) != completion_key(**base), change


def test_a_cached_answer_is_stored_scrubbed(tmp_path: Path):
    key = "sk-cached-0123456789abcdef"
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with holding(key):
        cache.put("k", {"text": f"the key is {key}"})
    assert cache.get("k") == {"text": f"the key is {MASK}"}
    cache.close()
    assert not any(key.encode() in p.read_bytes() for p in tmp_path.iterdir())


def test_runs_opening_one_new_cache_at_once_never_see_database_is_locked(tmp_path):
    # Switching a new database to WAL takes an exclusive lock without waiting: before the
    # retry, about 1 in 70 of these rounds failed with "database is locked".
    failures: list[BaseException] = []
    for round_no in range(60):
        path = tmp_path / f"round-{round_no}" / "cache.sqlite"
        barrier = threading.Barrier(4)

        def open_cache(path: Path = path, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                ResponseCache(path).close()
            except BaseException as err:  # noqa: BLE001 - collected and asserted below
                failures.append(err)

        threads = [threading.Thread(target=open_cache) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []


def grade_twice_at_once(tmp_path: Path, reply: object, *, cancel_first: bool = False
                        ) -> tuple[list[object], int, int]:
    """Two identical judge calls, the second made while the first is held at the judge (a
    gated fake that answers `reply`; the first cancelled then, if asked): (their outcomes,
    requests the judge got, cached keys)."""
    arrived = threading.Event()
    gate = Gate(free=0, answer=lambda body: "")

    def responder(body: dict) -> object:
        arrived.set()
        gate(body)  # held until the test opens the gate
        return reply

    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home")})
    with FakeOpenAIServer(responder=responder) as server:
        calls = ModelCalls(EvalConfig(models=["local/x"], base_url=server.url, concurrency=4),
                           settings)
        judge = make_judge(calls.resolve("local/judge"), calls.complete)

        async def both() -> list[object]:
            first = asyncio.create_task(judge("Cites a source.", "Why?", "See RFC 9110."))
            await asyncio.to_thread(arrived.wait)  # the first call is at the judge, held
            second = asyncio.create_task(judge("Cites a source.", "Why?", "See RFC 9110."))
            # One turn of the loop: the second runs until it waits (on the first's answer, or,
            # before the fix, on a call of its own), past its look in the cache either way.
            await asyncio.sleep(0)
            if cancel_first:
                first.cancel()
                await asyncio.wait([first])
            gate.opened.set()
            try:
                return list(await asyncio.gather(first, second, return_exceptions=True))
            finally:
                await calls.aclose()

        outcomes = asyncio.run(both())
        sent = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    cached = len(calls.cache)
    calls.cache.close()
    return outcomes, len(sent), cached


def test_two_identical_judge_calls_in_flight_call_the_judge_once(tmp_path: Path):
    verdicts, sent, cached = grade_twice_at_once(tmp_path, "VERDICT: PASS\nREASON: it cites one")
    assert sent == 1 and cached == 1
    assert verdicts[0] == verdicts[1] and verdicts[0][:2] == (True, "it cites one")


def test_a_failed_call_in_flight_fails_the_identical_one_waiting_and_is_not_cached(
        tmp_path: Path):
    outcomes, sent, cached = grade_twice_at_once(
        tmp_path, {"status": 400, "error": {"message": "bad request"}})
    assert sent == 1 and cached == 0
    assert all(isinstance(o, HubskillsError) for o in outcomes)


def test_when_the_call_in_flight_is_cancelled_the_identical_one_waiting_makes_its_own(
        tmp_path: Path):
    outcomes, sent, cached = grade_twice_at_once(
        tmp_path, "VERDICT: FAIL\nREASON: no source", cancel_first=True)
    assert isinstance(outcomes[0], asyncio.CancelledError)
    assert outcomes[1][:2] == (False, "no source")
    assert sent == 2 and cached == 1
