"""The Space's "Spot-check on my Jobs": shown to the results dataset's owner only, it runs the
spot check as a Job under the owner's sign-in token, and the badge follows the Job's record.

A simulated Space (`SPACE_ID` set, its own token in its settings) talks to the fake Hub, whose
Jobs really run (`tests/fakes/jobs_server.py`); "boss" owns the results dataset and signs in
with an OAuth token of their own, "visitor" is anyone else.
"""

from __future__ import annotations

import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import json  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import gradio as gr  # noqa: E402
import pytest  # noqa: E402
from fakes.hub_server import FakeHub  # noqa: E402
from space_pages import handler
from spot_setup import ALICE, SKILL, fake_hub, propose_as_alice  # noqa: E402
from test_verify_hub import evaluate, verify  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.publishing.push import push_saved_run  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from registry.stores.verifications import pending_badges  # noqa: E402
from space import build_demo, spot_check  # noqa: E402

OWNER_TOKEN = "hf_boss_oauth_token_0123456789"
VISITOR_TOKEN = "hf_visitor_oauth_token_0123456789"


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    yield from fake_hub(monkeypatch, users={"boss": OWNER_TOKEN, "visitor": VISITOR_TOKEN})


def replayed_run(tmp_path: Path, capsys) -> str:
    """A run boss pushed and replayed: badged `replayed`."""
    run_id = evaluate(tmp_path)
    settings = Settings.from_env()
    push_saved_run(HubStore(settings), settings.runs_dir, run_id)
    code, stdout, stderr = verify(capsys, "--run", run_id)
    assert code == 0, stdout + stderr
    return run_id


def as_whom(token: str) -> gr.OAuthToken:
    return gr.OAuthToken(token=token, scope="write", expires_at=0)


def test_only_the_owner_sees_the_control_and_their_job_changes_the_badge(
        hub, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(spot_check, "POLL_S", 0.2)
    run_id = replayed_run(tmp_path, capsys)
    demo = build_demo(Settings.from_env({**os.environ, "SPACE_ID": "boss/hubskills",
                                         "HUBSKILLS_HOME": str(tmp_path / "space")}))
    pending = handler(demo, "pending")
    for who in (None, as_whom(VISITOR_TOKEN)):
        _, _, group, target = pending(oauth=who)
        assert group.visible is False and target.choices == []
    _, _, group, target = pending(oauth=as_whom(OWNER_TOKEN))
    assert group.visible is True
    [(label, value)] = target.choices
    assert run_id in label and json.loads(value)[1] == run_id

    launch = handler(demo, "spot_check")
    refused = list(launch(value, 9, None, "", "", "", oauth=as_whom(VISITOR_TOKEN)))
    assert "for the owner of its results dataset" in refused[-1] and hub.jobs.specs == {}

    said = list(launch(value, 9, None, "", "", "", oauth=as_whom(OWNER_TOKEN)))
    assert "running as [Job" in said[0] and "estimated cost" in said[0]
    assert "**consistent**" in said[-1] and "badged **spot-checked**" in said[-1]
    [spec] = hub.jobs.specs.values()
    assert spec["secrets"]["HF_TOKEN"] == OWNER_TOKEN  # the owner's sign-in, as a secret
    assert OWNER_TOKEN not in json.dumps([spec["command"], spec.get("environment")])
    table, _, _ = handler(demo, "leaderboard")("", "All", "All", "All")
    assert "spot-checked" in json.dumps(table)


def test_the_owner_spot_checks_a_pending_submission_at_its_pull_request(
        hub, tmp_path, monkeypatch):
    monkeypatch.setattr(spot_check, "POLL_S", 0.2)
    hub.add_user("alice", ALICE)
    run_id = evaluate(tmp_path)
    propose_as_alice(tmp_path, run_id)
    demo = build_demo(Settings.from_env({**os.environ, "SPACE_ID": "boss/hubskills",
                                         "HUBSKILLS_HOME": str(tmp_path / "space")}))
    show = handler(demo, "pending")  # the replay runs in the background: shown again
    deadline = time.monotonic() + 120
    while "<strong>verified</strong>" not in (found := show(oauth=as_whom(OWNER_TOKEN)))[1] \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    _, note, group, target = found
    assert "<strong>verified</strong>" in note and group.visible is True
    [(label, value)] = target.choices
    assert "pending, PR #1" in label and json.loads(value) == [SKILL, run_id, "refs/pr/1"]

    said = list(handler(demo, "spot_check")(value, 9, None, "", "", "",
                                            oauth=as_whom(OWNER_TOKEN)))
    assert "**consistent**" in said[-1], said
    assert pending_badges(HubStore(Settings.from_env()))[run_id].verification == "spot-checked"
