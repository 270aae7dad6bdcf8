"""What the tests of verifying runs on the fake Hub share: the fake Hub and model behind their
`hub` fixtures, a run of the published skill (`evaluate`), and a run alice proposes as a pull
request.

"boss" owns the results dataset `DATASET` and the skill `SKILL` and uses the hub's own token;
"alice" (`ALICE`) may only open pull requests.
"""

from __future__ import annotations

import os

# huggingface_hub reads these once, at import: set them before anything imports it.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from fakes.hub_server import FakeHub  # noqa: E402
from fakes.openai_server import FakeOpenAIServer  # noqa: E402
from test_verify import FAST, knows_fact_if_told, make_skill  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.evaluation.config import EvalConfig  # noqa: E402
from registry.evaluation.engine import run_evaluation  # noqa: E402
from registry.format.version_ref import SkillVersionRef  # noqa: E402
from registry.publishing.push import PushedRun, push_saved_run  # noqa: E402
from registry.stores.hub import HubStore  # noqa: E402
from tests.hub_setup import require_online  # noqa: E402

DATASET = "boss/hubskills-evals"
SKILL = "boss/zorblax-ports"
ALICE = "hf_alice_token"


def fake_hub(monkeypatch: pytest.MonkeyPatch, *, users: dict[str, str] | None = None,
             env: dict[str, str] | None = None) -> Iterator[FakeHub]:
    """A `hub` fixture's body: the fake Hub ("boss" owns it; `users` are added, by name and
    token) and the fake model (`server.model`), the environment pointing the CLI at both, as
    boss, plus `env`. Its Jobs run in an image that has hubskills' dependencies and no index."""
    require_online()
    with FakeHub(user="boss") as server, \
            FakeOpenAIServer(responder=knows_fact_if_told) as model:
        server.jobs.image_env = {"PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1"}
        for name, token in (users or {}).items():
            server.add_user(name, token)
        for name, value in {"HF_HUB_OFFLINE": "0", "HUBSKILLS_REGISTRY": "hub",
                            "HF_ENDPOINT": server.url, "HF_TOKEN": server.token,
                            "HUBSKILLS_RESULTS_REPO": DATASET,
                            "HUBSKILLS_BASE_URL": model.url, **(env or {})}.items():
            monkeypatch.setenv(name, value)
        server.model = model  # type: ignore[attr-defined]
        yield server


def evaluate(tmp_path: Path, model: str = "local/fake-student") -> str:
    """Boss publishes the skill (`test_verify.make_skill`) as `SKILL` 1.0.0 and runs it once
    per arm on ``model`` at that revision: the run id."""
    settings = Settings.from_env()
    store = HubStore(settings)
    skill = make_skill(tmp_path, with_python=False)
    store.publish(skill, repo=SKILL, version="1.0.0")
    made = run_evaluation(skill, EvalConfig(models=[model], runs=1, retry=FAST), settings,
                          published=SkillVersionRef(SKILL, store.resolve(SKILL).sha))
    return made.manifest.run_id


def propose_as_alice(tmp_path: Path, run_id: str) -> PushedRun:
    """Boss's saved run `run_id`, proposed by alice as a pull request on boss's dataset."""
    settings = Settings.from_env()
    HubStore(settings).results._ensure_dataset(DATASET)
    alice = HubStore(Settings.from_env({**os.environ, "HF_TOKEN": ALICE,
                                        "HUBSKILLS_HOME": str(tmp_path / "alice")}))
    pushed = push_saved_run(alice, settings.runs_dir, run_id)
    assert pushed.pending
    return pushed
