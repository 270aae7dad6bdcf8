"""A new user's first hour, second pass: a path that is not there, a search with no hit, the
first line of `search`, and the time left in a run's progress line.

The CLI runs as users run it (`registry.cli.main`, or a child process from a folder outside
the checkout with the test's fresh HUBSKILLS_HOME); the time left is driven by a scripted
clock, never by sleeping.
"""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from cli_process import cli_env, hubskills, read_all

from registry.cli import _output, _progress, cli, main
from registry.cli._path_arg import closest_sibling
from registry.results.runs import ResultRow, RunManifest

# --- a path that is not there: an error with a hint (exit 1), not a usage error (exit 2) ------


def test_publish_of_a_missing_folder_says_so_and_names_the_command_that_makes_one(tmp_path):
    done = hubskills("publish", "./nope", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr == ("Error: ./nope: no such folder\n"
                           "Hint: hubskills new nope  # a new skill folder there\n")
    assert done.stdout == ""


def _world(tmp_path: Path) -> Path:
    (tmp_path / "skills" / "pdf-tools").mkdir(parents=True)
    (tmp_path / "skills" / "pdf-tools" / "SKILL.md").write_text("---\nname: pdf-tools\n---\n")
    (tmp_path / "session.jsonl").write_text("{}\n")
    return tmp_path


@pytest.mark.parametrize(("args", "error", "hint"), [
    (["publish", "skills/pdf-tool"], "skills/pdf-tool: no such folder",
     "hubskills publish skills/pdf-tools  # the closest name there"),
    (["eval", "skills/pdf-tool"], "skills/pdf-tool: no such folder",  # not the registry's
     "hubskills eval skills/pdf-tools  # the closest skill folder there"),
    (["info", "skills/pdf-tool"], "skills/pdf-tool: no such folder",
     "hubskills info skills/pdf-tools  # the closest skill folder there"),
    (["publish", "skills/nope"], "skills/nope: no such folder",
     "hubskills new nope --dir skills  # a new skill folder there"),
    (["publish", "skills/pdf-tools/SKILL.md"], "skills/pdf-tools/SKILL.md is a file, not a folder",
     "hubskills publish skills/pdf-tools  # the folder that holds it"),
    (["suite", "generate", "nope"], "nope: no such folder",
     "hubskills new nope  # a new skill folder there"),
    (["trace", "show", "sesion.jsonl"], "sesion.jsonl: no such file",
     "hubskills trace show session.jsonl  # the closest name there"),
    (["trace", "show", "skills"], "skills is a folder, not a file",
     "hubskills trace show --help  # the traces it reads"),  # HOME has no agent's traces
    (["generate", "clean csv files", "--from", "sessions.jsonl"],
     "sessions.jsonl: no such file or folder",
     "hubskills generate TASK --from session.jsonl  # the closest name there"),
    (["registry", "seed", "--from", "skils"], "skils: no such folder",
     "hubskills registry seed --from skills  # the closest name there"),
    (["verify", "20261129-000000-abcdef", "--skill", "nope"], "nope: no such folder",
     "hubskills verify RUN_ID  # the folder it recorded"),
])
def test_every_path_that_must_exist_is_an_error_with_a_hint(tmp_path, monkeypatch, capsys, args,
                                                             error, hint):
    monkeypatch.chdir(_world(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 1
    err = capsys.readouterr().err
    assert f"Error: {error}\n" in err and f"Hint: {hint}" in err
    assert "Usage:" not in err and "Traceback" not in err


def _commands(group: click.Group, ctx: click.Context) -> list[click.Command]:
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            found += _commands(command, click.Context(command, parent=ctx))
        elif command is not None:
            found.append(command)
    return found


def test_no_command_leaves_a_missing_path_to_click():
    commands = _commands(cli, click.Context(cli))
    assert len(commands) > 30
    left_to_click = [f"{command.name} {param.name}" for command in commands
                     for param in command.params
                     if isinstance(param.type, click.Path) and param.type.exists]
    assert left_to_click == []


def test_a_shared_suffix_is_not_a_typo(tmp_path):
    for name in ("notes.jsonl", "notes.json"):
        (tmp_path / name).write_text("")
    assert closest_sibling(tmp_path / "nope.jsonl", "file") is None
    assert closest_sibling(tmp_path / "note.jsonl", "file") == tmp_path / "notes.jsonl"
    assert closest_sibling(tmp_path / "no-parent" / "x", "folder") is None


# --- search: a near match when nothing matches, and no stray line above the table -------------


def test_a_search_with_a_typo_offers_the_closest_skill_and_the_search_that_finds_it(tmp_path):
    done = hubskills("search", "kernal", cwd=tmp_path, COLUMNS="80")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "No skills match 'kernal'. The closest:"
    assert "hubskills/kernel-builder-cuda-kernels" in done.stdout
    assert "Hint: hubskills search kernel  # or no words: every skill (3)" in done.stderr
    assert "hubskills/kernel-builder-cuda-kernels" in hubskills(
        "search", "kernel", cwd=tmp_path).stdout  # the search the hint names finds it


def test_a_search_far_from_every_skill_says_so_and_how_to_list_them_all(tmp_path):
    done = hubskills("search", "pdff", cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout == "No skills match 'pdff', and none comes close.\n"
    assert done.stderr == "Hint: hubskills search  # with no words: every skill (3)\n"


def test_search_starts_with_its_table_piped(tmp_path):
    done = hubskills("search", cwd=tmp_path, COLUMNS="80")
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["skill", "version", "downloads", "description"], done.stdout
    assert len(lines) == 2 + 3 and not re.search(r"^\w+: ", done.stdout, re.M)


def test_search_starts_with_its_table_on_a_terminal(tmp_path):
    primary, secondary = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "registry.cli", "search"], cwd=tmp_path,
                               env=cli_env(COLUMNS="80", TERM="xterm"), stdout=secondary,
                               stderr=secondary, text=True)
    os.close(secondary)
    terminal = read_all(primary)
    os.close(primary)
    assert process.wait(timeout=120) == 0, terminal
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal).replace("\r", "")
    assert plain.lstrip("\n").splitlines()[0].split()[:2] == ["skill", "version"], plain


# --- the time left: the recent pace, steadied (a scripted clock) ------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def shown(times: list[float], total: int, monkeypatch: pytest.MonkeyPatch,
          silence: float = 0.0) -> list[tuple[int, float | None, float]]:
    """(answers done, seconds left as the line says it or None, the truth) for each line of a
    run started at 0 whose answers come at `times`; `silence` seconds after the last one, a
    heartbeat line."""
    buffer, clock = io.StringIO(), Clock()
    monkeypatch.setattr(_output, "err", _output.Console(file=buffer, width=200))
    row = ResultRow(run_id="r", skill_name="s", model="m", arm="skill", case_id="c", passed=True)
    progress = _progress.PlainProgress(clock=clock, seconds=float("inf"))
    with progress:
        progress.start(RunManifest(run_id="r", skill_name="s", content_hash="", suite_hash="",
                                   models=["m"]), total)
        for done, clock.now in enumerate(times, 1):
            progress.update(done, total, row)
        if silence:
            clock.now += silence
            progress.line()
    end = times[-1] if len(times) == total else None
    lines = []
    for line in buffer.getvalue().splitlines()[1:]:
        done = int(re.search(r": (\d+)/", line).group(1))
        left = re.search(r"~(?:(\d+):)?(\d+):(\d+) left", line)
        seconds = None if left is None else (
            int(left.group(1) or 0) * 3600 + int(left.group(2)) * 60 + int(left.group(3)))
        lines.append((done, seconds, end - times[done - 1] if end is not None else 0.0))
    return lines


def test_a_steady_run_after_a_slow_start_counts_down_and_is_right(monkeypatch):
    times = [20.0 + 2 * i for i in range(1, 101)]  # 20 s to connect, then an answer every 2 s
    lines = [(done, left, truth) for done, left, truth in shown(times, 100, monkeypatch)
             if done < 100]
    estimates = [left for _, left, _ in lines]
    assert None not in estimates[1:]
    assert estimates[1:] == sorted(estimates[1:], reverse=True)  # falls, never grows
    assert all(abs(left - truth) <= 1 for _, left, truth in lines[1:])  # the slow start not in it


def _waves(count: int, size: int, period: float, start: float) -> list[float]:
    """Answers of concurrent calls: `size` at a time (spread over a tenth of a second)."""
    return [start + period * wave + 0.1 * k / size for wave in range(count) for k in range(size)]


def test_answers_in_waves_never_make_it_grow(monkeypatch):
    times = _waves(30, 8, 3.0, 15.0)  # 8 concurrent calls, a wave every 3 s, 240 answers
    lines = [(d, left, truth) for d, left, truth in shown(times, 240, monkeypatch)
             if left is not None]
    estimates = [left for _, left, _ in lines]
    assert len(lines) >= 15 and estimates == sorted(estimates, reverse=True), estimates
    assert all(abs(left - truth) <= max(0.15 * truth, 3) for _, left, truth in lines), lines


def test_no_estimate_from_the_first_wave_alone(monkeypatch):
    lines = shown(_waves(2, 16, 5.0, 30.0), 160, monkeypatch)
    assert [left for _, left, _ in lines] == [None] * len(lines)


def test_a_run_that_speeds_up_is_seen_within_twice_its_slow_answers(monkeypatch):
    slow, fast = [5.0 * i for i in range(1, 21)], [100 + 0.5 * i for i in range(1, 81)]
    lines = shown(slow + fast, 100, monkeypatch)
    after = [(d, left, truth) for d, left, truth in lines if 40 <= d < 100]
    assert after and all(abs(left - truth) <= 0.1 * truth + 1 for _, left, truth in after)
    for done, left, _ in lines:  # never above the whole run's average pace, as it was shown
        if 20 < done < 100:
            assert left <= (slow + fast)[done - 1] / done * (100 - done)


def test_a_stalled_run_says_it_will_take_longer(monkeypatch):
    times = [float(i) for i in range(1, 51)]  # an answer a second, then nothing for 30 s
    before, stalled = shown(times, 100, monkeypatch, silence=30.0)[-2:]
    assert (before[0], stalled[0]) == (50, 50)
    assert stalled[1] > before[1] >= 45


def test_pull_of_a_missing_folder_names_a_search_that_runs(tmp_path):
    done = hubskills("pull", "./nope", cwd=tmp_path)
    assert done.returncode == 1 and "Error: ./nope: no such folder" in done.stderr, done.stderr
    hint = next(line for line in done.stderr.splitlines() if line.startswith("Hint: "))
    assert hint.endswith(": hubskills search nope"), hint  # a word of the path, no placeholder
    searched = hubskills("search", "nope", cwd=tmp_path)
    assert searched.returncode == 0, searched.stderr


@pytest.mark.parametrize(("args", "error", "hint"), [
    (["runs", "show"], "Missing argument 'RUN_ID'.", "hubskills runs  # the run ids"),
    (["runs", "compare"], "Missing argument 'RUN_A'.", "hubskills runs  # the run ids"),
    (["eval", ".", "--runs", "0"], "Invalid value for '--runs': 0 is not in the range x>=1.",
     "hubskills eval --help"),
    (["search", "--sort", "bogus"], "Invalid value for '--sort': 'bogus' is not one of",
     "hubskills search --help"),
    (["evl"], "No such command 'evl'. Did you mean 'eval'?", "hubskills --help"),
])
def test_a_usage_error_is_one_error_line_and_a_hint(tmp_path, monkeypatch, capsys, args, error,
                                                    hint):
    """A bad option value, a missing argument or an unknown command reads like every other
    error (a walk saw click's usage block): one line and a hint; exit code 2, as usage errors
    exit (a failure: 1)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"Error: {error}") and f"\nHint: {hint}\n" in err, err
    assert "Usage:" not in err and "Try '" not in err


def test_review_offline_says_it_needs_the_hub_not_an_option_it_lacks(tmp_path):
    """Its hint was the generic 'retry online, or add --registry local', and review has no
    --registry (pull requests exist only on the Hub): a walk followed it into a usage error."""
    done = hubskills("review", "pending", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    said = " ".join(done.stderr.split())
    assert "`review pending` reads the results dataset's pull requests, which only the Hub " \
           "has" in said, done.stderr
    assert "Hint: hubskills review pending # again online, with HF_TOKEN set" in said
    assert "--registry" not in said
