"""Progress as users see it: never silent in a log, a bar on a terminal.

Without a terminal (CI logs, `> log`, pipes) `eval` prints its run id before the first answer
and a plain line every few answers or ten seconds; on a terminal (a pseudo-terminal here) it
draws the rich bar instead. Progress goes to stderr, so `--json` keeps stdout parseable.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_process import REPO_ROOT, cli_env, hubskills, read_all, row_count, runs, start
from fakes.gate import Gate
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import knows_fact_if_told, make_skill
from test_generate import Scripted

from registry.cli import _output, _progress
from registry.results.runs import ResultRow, RunManifest

LINE = re.compile(r"^run (\S+): (\d+)/(\d+) answers \(\d+%\)")


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HUBSKILLS_HOME"])


def progress_counts(stderr: str, run_id: str) -> list[int]:
    counts = []
    for line in stderr.splitlines():
        if found := LINE.match(line):
            assert found.group(1) == run_id
            counts.append(int(found.group(2)))
    return counts


def test_without_a_terminal_the_run_id_comes_first_then_steady_lines(tmp_path, home):
    gate = Gate(free=0, answer=knows_fact_if_told)  # every answer held until the id is read
    with FakeOpenAIServer(responder=gate, latency=0.5) as server:
        process = start("eval", make_skill(tmp_path, 6), "-m", "local/fake", "--base-url",
                        server.url, "--runs", "2", "--json")
        first = process.stderr.readline()  # blocks until the CLI says something
        while first.startswith("Warning: "):  # said before the run: publish would refuse it
            first = process.stderr.readline()
        [manifest] = runs(home)
        assert row_count(home, manifest["run_id"]) == 0  # said before any answer came back
        gate.opened.set()
        out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    run_id = manifest["run_id"]
    # the estimate before the first answer: a local server's typical second an answer, free
    assert first == (f"run {run_id} (zorblax-ports): 24 answers to get (about 24 s at a typical "
                     "pace; free); Ctrl-C stops and keeps the finished ones\n")
    counts = progress_counts(err, run_id)
    assert counts == sorted(counts) and counts[-1] == 24
    assert len(counts) >= 5  # every few answers, not only at the end
    # Whether an estimate is shown yet depends on how fast this machine answered (the fake
    # clock tests below pin when it appears); every line has the shape either way.
    lines = [x for x in err.splitlines() if LINE.match(x)]
    assert all(re.search(r" · \d+:\d\d elapsed( · ~\d+:\d\d left)?$", x) for x in lines), lines
    assert json.loads(out)["manifest"]["run_id"] == run_id  # stdout is only the JSON


def test_on_a_terminal_the_bar_is_drawn_instead(tmp_path):
    with FakeOpenAIServer(responder=knows_fact_if_told, latency=0.05) as server:
        primary, secondary = pty.openpty()
        process = subprocess.Popen(
            [sys.executable, "-m", "registry.cli", "eval", str(make_skill(tmp_path, 3)), "-m",
             "local/fake", "--base-url", server.url, "--runs", "2"],
            cwd=REPO_ROOT, env=cli_env(COLUMNS="120"), stdout=subprocess.PIPE,
            stderr=secondary, text=True)
        os.close(secondary)
        terminal = read_all(primary)
        os.close(primary)
        out, _ = process.communicate(timeout=120)
    assert process.returncode == 0, terminal
    assert "evaluating" in terminal and "12/12" in terminal  # the rich bar, to the end
    assert re.search(r"run \S+ \(zorblax-ports\): 12 answers to get", terminal)
    assert not LINE.search(terminal)  # no plain lines on a terminal
    assert "zorblax-ports · 3 cases × 2 runs" in out


def test_on_a_terminal_a_refused_run_shows_no_bar(tmp_path):
    primary, secondary = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "registry.cli", "eval", str(make_skill(tmp_path, 3)), "-m",
         "local/fake", "--base-url", "http://127.0.0.1:9/v1", "--cases", "no-such-case"],
        cwd=REPO_ROOT, env=cli_env(COLUMNS="120"), stdout=subprocess.PIPE, stderr=secondary,
        text=True)
    os.close(secondary)
    terminal = read_all(primary)
    os.close(primary)
    process.communicate(timeout=120)
    assert process.returncode == 1
    assert "no case with id no-such-case" in terminal and "suite show" in terminal
    assert "evaluating" not in terminal  # the bar starts with the run, not before its checks


def test_generate_streams_its_steps_to_stderr_and_keeps_json_on_stdout(tmp_path):
    with FakeOpenAIServer(responder=Scripted()) as server:
        done = hubskills("generate", "Operate the zorblax daemon", "--teacher", "local/teacher",
                         "--base-url", server.url, "--no-eval", "--out", tmp_path / "out",
                         "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == "zorblax-ops"
    assert done.stderr.startswith("draft: asking local/teacher to write the skill\n")
    assert f"saved {tmp_path / 'out' / 'zorblax-ops'}" in done.stderr


# --- the plain lines' pace, with a fake clock ------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _row(error: bool = False) -> ResultRow:
    return ResultRow(run_id="r", skill_name="s", model="m", arm="skill", case_id="c",
                     passed=None if error else True, error="boom" if error else None)


def _capture(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    buffer = io.StringIO()
    monkeypatch.setattr(_output, "err", _output.Console(file=buffer, highlight=False,
                                                         soft_wrap=True))
    return buffer


def test_plain_progress_prints_every_twentieth_of_the_run(monkeypatch):
    buffer, clock = _capture(monkeypatch), FakeClock()
    manifest = RunManifest(run_id="r1", skill_name="s", content_hash="", suite_hash="",
                           models=["m"])
    with _progress.PlainProgress(clock=clock) as progress:
        progress.start(manifest, 100)
        for done in range(1, 101):
            clock.now += 1
            progress.update(done, 100, _row(error=done == 3))
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "run r1 (s): 100 answers to get; Ctrl-C stops and keeps the finished ones"
    assert [int(LINE.match(x).group(2)) for x in lines[1:]] == list(range(5, 101, 5))
    assert lines[1] == "run r1: 5/100 answers (5%) · 1 error · 0:05 elapsed · ~1:35 left"
    assert lines[-1] == "run r1: 100/100 answers (100%) · 1 error · 1:40 elapsed"


def test_the_bar_says_the_time_left_as_the_plain_lines_do(monkeypatch):
    _capture(monkeypatch)  # the run's first line
    clock, screen = FakeClock(), io.StringIO()
    manifest = RunManifest(run_id="r3", skill_name="s", content_hash="", suite_hash="",
                           models=["m"])
    terminal = _output.Console(file=screen, width=120, force_terminal=True)
    with _progress.BarProgress(clock=clock, console=terminal) as progress:
        progress.start(manifest, 100)
        assert progress.left() == ""  # nothing known yet
        for done in range(1, 51):
            clock.now += 1
            progress.update(done, 100, _row())
        assert progress.left() == "~0:50 left"  # one answer a second, 50 to go
        drawn = io.StringIO()
        _output.Console(file=drawn, width=120).print(progress.bar.get_renderable())
        assert re.search(r"evaluating .* 50/100 .* 0:50 elapsed · ~0:50 left", drawn.getvalue())
        for done in range(51, 101):
            clock.now += 1
            progress.update(done, 100, _row())
        assert progress.left() == ""  # done: nothing left to estimate


def test_plain_progress_speaks_every_ten_seconds_of_silence(monkeypatch):
    buffer, clock = _capture(monkeypatch), FakeClock()
    manifest = RunManifest(run_id="r2", skill_name="s", content_hash="", suite_hash="",
                           models=["m"])
    progress = _progress.PlainProgress(clock=clock)
    progress.heartbeat.poll = 0.01
    with progress:
        progress.start(manifest, 40)
        clock.now += 9  # not yet ten seconds of silence
        assert not _wait_for(lambda: buffer.getvalue().count("\n") > 1, 0.3)
        clock.now += 2
        assert _wait_for(lambda: buffer.getvalue().count("\n") == 2, 5)
    assert buffer.getvalue().splitlines()[1] == "run r2: 0/40 answers (0%) · 0:11 elapsed"


def test_step_progress_says_what_it_is_still_doing(monkeypatch):
    buffer, clock = _capture(monkeypatch), FakeClock()
    steps = _progress.StepProgress(clock=clock)
    steps.heartbeat.poll = 0.01
    with steps:
        steps.say("suite: asking for 12 cases")
        clock.now += 25
        assert _wait_for(lambda: "still working" in buffer.getvalue(), 5)
    assert buffer.getvalue().splitlines() == [
        "suite: asking for 12 cases",
        "… still working (0:25 elapsed): suite: asking for 12 cases"]


def _wait_for(condition, seconds: float) -> bool:
    done = threading.Event()
    for _ in range(int(seconds / 0.01)):
        if condition():
            return True
        done.wait(0.01)
    return condition()
