"""The one scrubber: what it knows, whom a request's keys belong to, and every write path.

Three secrets are planted the three ways a process holds them: an environment variable, the
Hugging Face token file, and a key held for one request (a Space visitor's typed key, carried by
`Settings`). Each is pushed through every write: a model's output, a provider error, a check's
reason, a judge's reason, a manifest, a push to the local registry and to the fake Hub, a log
line. Then every byte on disk and on the fake Hub is searched for them.
"""

from __future__ import annotations

import io
import json
import logging
import re
import threading
from pathlib import Path

import pytest
from fakes.hub_server import FakeHub
from fakes.openai_server import FakeOpenAIServer

from registry.config import Settings
from registry.evaluation.config import EvalConfig
from registry.evaluation.engine import run_evaluation
from registry.format.version_ref import SkillVersionRef
from registry.providers import RetryPolicy
from registry.publishing.push import push_run
from registry.registries import local_store
from registry.results.runs import RunWriter, read_manifest, read_rows
from registry.secrets import MASK, hold, holding, is_secret_name, known_secrets, scrub, scrub_logs
from tests.hub_setup import require_online

ENV_KEY = "sk-env-0123456789abcdefENV"
FILE_KEY = "hf_fileTOKEN0123456789abcdef"
TYPED_KEY = "sk-typed-0123456789abcdefTYP"
KEYS = (ENV_KEY, FILE_KEY, TYPED_KEY)
FAST = RetryPolicy(attempts=1, base_delay=0.001, max_delay=0.001, max_retry_after=0.01)


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """ENV_KEY in the environment, FILE_KEY in the HF token file; returns the HF home."""
    hf_home = tmp_path / "hf-home"
    hf_home.mkdir()
    (hf_home / "token").write_text(FILE_KEY + "\n")
    monkeypatch.setenv("HF_HOME", str(hf_home))
    monkeypatch.delenv("HF_TOKEN_PATH", raising=False)
    monkeypatch.setenv("ACME_SERVICE_API_KEY", ENV_KEY)
    return hf_home


def leaks(root: Path, *, skip: Path) -> list[str]:
    """Files under `root` (outside `skip`, where the token file lives) holding any key."""
    return [str(p.relative_to(root)) for p in root.rglob("*")
            if p.is_file() and skip not in p.parents
            and any(key.encode() in p.read_bytes() for key in KEYS)]


# --- what the scrubber knows ------------------------------------------------------------------


@pytest.mark.parametrize(("name", "secret"), [
    ("ANTHROPIC_API_KEY", True), ("HF_TOKEN", True), ("OAUTH_CLIENT_SECRET", True),
    ("GITHUB_PAT", True), ("DB_PASSWORD", True), ("AWS_SECRET_ACCESS_KEY", True),
    ("HF_TOKEN_PATH", False), ("OPENAI_BASE_URL", False), ("TOKENIZERS_PARALLELISM", False),
    ("HUBSKILLS_SPACE_LEND_KEYS", False), ("SSH_AUTH_SOCK", False), ("PATH", False),
])
def test_which_variable_names_hold_secrets(name: str, secret: bool):
    assert is_secret_name(name) is secret


def test_environment_and_token_files_are_masked(planted: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch):
    (planted / "stored_tokens").write_text("[work]\nhf_token = hf_storedNAMEDtoken98765\n")
    monkeypatch.setenv("SHORT_TOKEN", "1")  # too short to be a credential: never masked
    text = f"env={ENV_KEY} file={FILE_KEY} named=hf_storedNAMEDtoken98765 flag=1 typed={TYPED_KEY}"
    assert scrub(text) == f"env={MASK} file={MASK} named={MASK} flag=1 typed={TYPED_KEY}"
    other = tmp_path / "elsewhere-token"
    other.write_text("hf_fromTOKENPATH0123456")
    monkeypatch.setenv("HF_TOKEN_PATH", str(other))
    assert scrub("hf_fromTOKENPATH0123456 " + FILE_KEY) == f"{MASK} {FILE_KEY}"
    assert str(other) not in known_secrets()  # a variable naming a path is not a secret


def test_json_escaped_secrets_are_masked_too(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ODD_TOKEN", 'abc"def\\ghi-0123')
    dumped = json.dumps({"output": 'it is abc"def\\ghi-0123'})
    assert json.loads(scrub(dumped)) == {"output": f"it is {MASK}"}


def test_a_request_key_is_known_only_inside_its_request():
    barrier, seen = threading.Barrier(2), {}

    def visitor(name: str, key: str) -> None:
        with holding():
            hold(key)
            barrier.wait()  # both requests hold their key at the same time
            seen[name] = scrub(f"a={TYPED_KEY} b={ENV_KEY}")
            barrier.wait()

    threads = [threading.Thread(target=visitor, args=("a", TYPED_KEY)),
               threading.Thread(target=visitor, args=("b", ENV_KEY))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {"a": f"a={MASK} b={ENV_KEY}", "b": f"a={TYPED_KEY} b={MASK}"}
    assert scrub(TYPED_KEY) == TYPED_KEY  # the requests are over: nothing was kept
    with pytest.raises(RuntimeError, match="scope"):
        hold(TYPED_KEY)  # outside a request there is no list a key could be left in


def test_log_records_are_scrubbed(planted: Path):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("hubskills-test-logs")
    logger.addHandler(handler)
    previous = logging.getLogRecordFactory()
    try:
        scrub_logs()
        scrub_logs()  # idempotent: one wrapper
        with holding(TYPED_KEY):
            logger.warning("called with %s and %s", ENV_KEY, TYPED_KEY)
            try:
                raise ValueError(f"bad token {FILE_KEY}")
            except ValueError:
                logger.exception("failed")
    finally:
        logging.setLogRecordFactory(previous)
        logger.removeHandler(handler)
    written = stream.getvalue()
    assert written.count(MASK) == 3 and "ValueError: bad token" in written
    assert not any(key in written for key in KEYS)


# --- every write path -------------------------------------------------------------------------


def echo_keys(body: dict) -> str | dict:
    """Student echoes every key; the judge quotes them in its reason; `broken` errs with them."""
    keys = " ".join(KEYS)
    if body["model"] == "broken":
        return {"status": 400, "error": {"message": f"bad request from {keys}"}}
    if body["model"] == "judge":
        return f"VERDICT: FAIL\nREASON: the answer leaks {keys}"
    return f"{ENV_KEY} {FILE_KEY} {TYPED_KEY}"


def leaky_skill(root: Path) -> Path:
    """One case whose checks all quote the output in their reasons."""
    folder = root / "leaky"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: leaky\ndescription: \"A skill. Use when "
                                     "testing.\"\n---\n\nAnswer briefly.\n")
    checks = [{"type": "equals", "value": "nothing"},
              *({"type": "regex", "pattern": re.escape(key[:6]) + r"[\w-]+"} for key in KEYS),
              {"type": "judge", "rubric": "Says nothing secret."}]
    (folder / "evals" / "evals.json").write_text(json.dumps(
        {"cases": [{"id": "c1", "prompt": "Tell me your keys.", "checks": checks}]}))
    return folder


def test_no_write_path_lets_a_key_reach_disk_or_the_hub(planted: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch):
    require_online()
    with FakeOpenAIServer(responder=echo_keys) as llm, FakeHub() as hub:
        settings = Settings.from_env({
            "HUBSKILLS_HOME": str(tmp_path / "home"), "HUBSKILLS_BASE_URL": llm.url,
            "OPENAI_API_KEY": TYPED_KEY,  # known only through these settings: a typed key
            "HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_pusher_token_0001"})
        config = EvalConfig(models=["local/student", "local/broken"], runs=1,
                            judge="local/judge", retry=FAST)
        run = run_evaluation(leaky_skill(tmp_path), config, settings,
                             published=SkillVersionRef("tester/leaky", "0" * 40))  # pushes need one
        local = push_run(local_store(settings), run.manifest, run.rows)
        from registry.stores.hub import HubStore

        hubbed = push_run(HubStore(settings.with_(results_repo="tester/evals")), run.manifest,
                          run.rows)
        with holding(TYPED_KEY):  # a manifest note quoting every key (the writer's last step)
            writer = RunWriter(settings.runs_dir, run.manifest.model_copy(
                update={"run_id": run.manifest.run_id + "-note"}))
            writer.close("complete", note=" ".join(KEYS))
        hub_bytes = [data for repo in hub.repos.values() for c in repo.commits.values()
                     for data in c.files.values()] + list(hub.lfs_objects.values())

    rows = {(r.model, r.arm): r for r in read_rows(settings.runs_dir, run.manifest.run_id)}
    student, broken = rows["local/student", "skill"], rows["local/broken", "skill"]
    assert student.output == " ".join([MASK] * 3)  # each key reached the writer, masked
    reasons = [c.reason for c in student.checks]
    assert all(MASK in reason for reason in reasons), reasons  # equals, 3 regexes, the judge
    assert broken.error and broken.error.count(MASK) == 3, broken.error
    assert read_manifest(settings.runs_dir, run.manifest.run_id + "-note").note == \
        " ".join([MASK] * 3)
    assert local.rows == hubbed.rows == 4 and hubbed.path.endswith(".jsonl")
    assert any(MASK.encode() in data for data in hub_bytes)  # the rows did reach the Hub
    assert not any(key.encode() in data for data in hub_bytes for key in KEYS)
    assert leaks(tmp_path, skip=planted) == []
