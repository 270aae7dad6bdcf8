"""Ctrl-C and SIGTERM in the middle of `hubskills eval`, sent to a real process.

The CLI runs as a child process (its output a pipe, as in CI) against a fake model server that
answers the first few calls and holds every later one until the test lets it go. The process
must end while those calls are still held: a stop that waited for a call in flight would wait
until the end of the test (a behaviour that holds on any machine, however slow). The first
signal must say "stopping…", end the process without waiting for them, keep every finished row,
mark the run `interrupted` (so `hubskills runs` shows it), print the command that resumes it,
and exit 130 (SIGINT) or 143 (SIGTERM); resuming finishes the run without asking any finished
answer again. A second signal ends the process at once, even when the clean stop hangs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_process import REPO_ROOT, cli_env, hubskills, row_count, runs, start
from fakes.gate import Gate
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import knows_fact_if_told, make_skill

from registry.providers import EMBEDDED_REF, embedded_availability

CASES, RUNS = 6, 5
ANSWERS = CASES * 2 * RUNS
HELD_S = 900  # how long a held call waits at most: longer than any wait below (a guard only)


@pytest.fixture
def held():
    """A fake model whose first 12 answers come at once and the others wait for the gate."""
    gate = Gate(free=12, answer=knows_fact_if_told, wait_s=HELD_S)
    with FakeOpenAIServer(responder=gate) as srv:
        srv.gate = gate
        yield srv
        gate.opened.set()  # let the server's threads end


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HUBSKILLS_HOME"])


def completions(server: FakeOpenAIServer) -> int:
    return len(server.bodies)


def wait_for_rows(process: subprocess.Popen, home: Path, at_least: int,
                  timeout: float = 60) -> str:
    """The run id once the running eval has written `at_least` rows."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        found = runs(home)
        if found and row_count(home, found[0]["run_id"]) >= at_least:
            return found[0]["run_id"]
        time.sleep(0.05)
    raise AssertionError("the eval wrote no rows in time")


def interrupt(process: subprocess.Popen, sig: int, server: FakeOpenAIServer) -> tuple[str, str]:
    """Send `sig`; the process's stdout and stderr once it ended, which it must do while the
    server still holds its calls in flight (`fakes.gate.Gate`)."""
    process.send_signal(sig)
    out, err = process.communicate(timeout=HELD_S / 2)
    assert not server.gate.opened.is_set()
    return out, err


@pytest.mark.parametrize(("sig", "name", "code"), [
    (signal.SIGINT, "SIGINT", 130),
    (signal.SIGTERM, "SIGTERM", 143),
])
def test_a_signal_mid_eval_stops_cleanly_and_the_run_resumes(held, tmp_path, home, sig,
                                                             name, code):
    skill = make_skill(tmp_path, CASES)
    process = start("eval", skill, "-m", "local/fake", "--base-url", held.url,
                    "--runs", str(RUNS))
    run_id = wait_for_rows(process, home, at_least=6)
    kept_before = row_count(home, run_id)
    out, err = interrupt(process, sig, held)

    assert process.returncode == code, err
    assert "Traceback" not in err and out == ""  # no summary of a partial run on stdout
    assert f"{name}: stopping…" in err
    [manifest] = runs(home)
    assert manifest["status"] == "interrupted" and name in manifest["note"]
    kept = row_count(home, run_id)
    assert kept_before <= kept < ANSWERS
    assert f"stopped: run {run_id} is marked interrupted; {kept} of {ANSWERS} answers are kept" \
        in err
    listed = json.loads(hubskills("runs", "--json").stdout)
    assert [(m["run_id"], m["status"]) for m in listed] == [(run_id, "interrupted")]

    hint = re.search(r"^Hint: (hubskills eval .*--resume \S+)", err, re.MULTILINE)
    assert hint, err
    words = shlex.split(hint.group(1))
    assert words[:3] == ["hubskills", "eval", str(skill)]
    assert words[-2:] == ["--resume", run_id] and "--base-url" in words
    asked_before = completions(held)
    held.gate.opened.set()
    resumed = hubskills(*words[1:])
    assert resumed.returncode == 0, resumed.stderr
    assert f"run {run_id} (complete)" in resumed.stdout
    assert row_count(home, run_id) == ANSWERS
    # Finished answers are never asked again (an answer cancelled mid-check may be cached).
    assert completions(held) - asked_before <= ANSWERS - kept


def test_a_signal_before_the_first_answer_leaves_a_resumable_run(held, tmp_path, home):
    held.gate.free = 0  # no answer will come back before the signal
    process = start("eval", make_skill(tmp_path, 2), "-m", "local/fake", "--base-url",
                    held.url, "--runs", "1")
    deadline = time.monotonic() + 60
    while completions(held) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    _, err = interrupt(process, signal.SIGINT, held)
    assert process.returncode == 130, err
    [manifest] = runs(home)
    assert manifest["status"] == "interrupted"
    assert "0 of 4 answers are kept" in err and "--resume " + manifest["run_id"] in err


def test_a_second_ctrl_c_quits_at_once(held, tmp_path, home):
    process = start("eval", make_skill(tmp_path, CASES), "-m", "local/fake", "--base-url",
                    held.url, "--runs", str(RUNS))
    wait_for_rows(process, home, at_least=2)
    process.send_signal(signal.SIGINT)
    _, err = interrupt(process, signal.SIGINT, held)
    assert process.returncode == 130, err
    # marked by the first, or by the second if the first's marking had not run yet
    assert runs(home)[0]["status"] == "interrupted"


# `eval ns/name` fetches the skill into a temporary folder; the second signal quits at once,
# skipping every `finally`, so the folder must be removed by the handler itself.
FETCH_THEN_QUIT = """
import os, signal, time
from registry.cli._signals import interrupts
from registry.cli._skill_ref import skill_folder
with skill_folder("hubskills/agent-skill-md", command="eval") as folder, interrupts() as caught:
    print("fetched:", folder, flush=True)
    os.kill(os.getpid(), signal.SIGINT)
    while not caught.stop.is_set():
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(60)
"""


def test_a_second_ctrl_c_leaves_no_fetched_skill_behind(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    child = subprocess.run([sys.executable, "-c", FETCH_THEN_QUIT], env=cli_env(TMPDIR=str(tmp)),
                           capture_output=True, text=True, timeout=60, check=False)
    assert child.returncode == 130, child.stderr
    assert f"fetched: {tmp}" in child.stdout  # it was there, under TMPDIR
    assert not any(tmp.iterdir())


# The clean stop after the first signal can hang (a call that ignores cancellation): the second
# must not wait for it. This child installs the CLI's handlers around a stop that never ends.
HANGING_STOP = """
import os, signal, time
from registry.cli._signals import interrupts
with interrupts() as caught:
    os.kill(os.getpid(), signal.SIGINT)
    deadline = time.monotonic() + 5
    while not caught.stop.is_set() and time.monotonic() < deadline:
        time.sleep(0.01)
    print("first:", caught.stop.reason, caught.exit_code, flush=True)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(60)
print("not reached", flush=True)
"""


def test_the_second_signal_does_not_wait_for_a_hanging_stop():
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", HANGING_STOP], cwd=REPO_ROOT, env=cli_env(),
                          capture_output=True, text=True, timeout=60, check=False)
    assert time.monotonic() - started < 30  # the 60 s sleep was cut short
    assert done.returncode == 130
    assert done.stdout == "first: SIGINT 130\n"
    assert "SIGINT: stopping…" in done.stderr and "SIGINT again: quitting now" in done.stderr


@pytest.mark.skipif(not embedded_availability()[0], reason="the embedded model is not installed")
def test_an_answer_the_embedded_model_is_writing_is_abandoned_not_awaited(tmp_path, home):
    skill = make_skill(tmp_path, 1)
    suite = skill / "evals" / "evals.json"
    data = json.loads(suite.read_text())
    data["cases"][0]["prompt"] = "Write a long essay, at least 2000 words, on network ports."
    suite.write_text(json.dumps(data))
    process = start("eval", skill, "-m", EMBEDDED_REF, "--runs", "1", "--max-tokens", "2000",
                    "--no-cache")
    first = process.stderr.readline()
    while first.startswith("Warning: "):  # said before the run: publish would refuse it
        first = process.stderr.readline()
    assert "answers to get" in first  # the run exists; the model is called
    time.sleep(1.0)  # 2000 tokens take the 135M model far longer than this
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=600)
    assert process.returncode == 130, err
    [manifest] = runs(home)
    assert manifest["status"] == "interrupted"
    # had the stop awaited the answer, its row would be kept: it was abandoned mid-answer
    assert row_count(home, manifest["run_id"]) == 0
