"""The `hubskills` group: commands load lazily, help stays complete, exit codes stay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from fakes.openai_server import FakeOpenAIServer

from registry.cli import COMMANDS, HIDDEN, cli, main

ROOT = Path(__file__).resolve().parent.parent
COMMAND_MODULES = {target.partition(":")[0] for target, _ in COMMANDS.values()}
HEAVY = ("gradio", "datasets", "pandas", "huggingface_hub", "anthropic", "pyarrow")


def _loaded_after(code: str, tmp_path: Path) -> dict:
    """Run `code` in a fresh interpreter; returns what it printed as JSON on its last line."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HUBSKILLS_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _modules_after(argv: list[str]) -> str:
    return (
        "import contextlib, io, json, sys\n"
        "from registry.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({argv!r})\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_lazy_command_resolves_and_its_stored_help_is_its_own(name):
    command = cli.get_command(click.Context(cli), name)
    assert isinstance(command, click.Command) and command.name == name
    stored = COMMANDS[name][1]
    for limit in (45, 1000):
        assert click.Command(name, help=stored).get_short_help_str(limit) == \
            command.get_short_help_str(limit)


def test_help_lists_every_command_without_importing_one(tmp_path):
    modules = _loaded_after(_modules_after(["--help"]), tmp_path)
    assert sorted(COMMAND_MODULES & set(modules)) == []
    assert not any(m.split(".")[0] in HEAVY for m in modules)
    listed = CliRunner().invoke(cli, ["--help"], env={"COLUMNS": "200"}).output
    sections = listed.split(" commands:\n")[1:]  # "Author commands:", "Evaluate commands:"…
    assert [line.split(" commands:")[0] for line in listed.splitlines()
            if line.endswith(" commands:")] == ["Author", "Evaluate", "Share", "Install", "Other"]
    rows = [line.split(None, 1) for section in sections for line in section.splitlines()
            if line.startswith("  ")]
    assert sorted(name for name, _ in rows) == sorted(set(COMMANDS) - HIDDEN)
    assert "tests" in HIDDEN and "suite" in dict(rows)  # `tests` still works, unlisted
    assert all(len(short) > 20 for _, short in rows)  # each with its short help


def test_eval_imports_only_its_own_command_and_no_heavy_library(tmp_path):
    skill = tmp_path / "tiny"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text('---\nname: tiny\ndescription: "A tiny skill. Use when '
                                    'testing."\n---\n\nSay 42.\n')
    (skill / "evals" / "evals.json").write_text(json.dumps({"cases": [
        {"id": "a", "prompt": "Say it.", "checks": [{"type": "contains", "value": ["42"]}]}]}))
    with FakeOpenAIServer(responder=lambda body: "42") as server:
        argv = ["eval", str(skill), "-m", "local/fake", "--base-url", server.url, "--runs", "1"]
        modules = _loaded_after(_modules_after(argv), tmp_path)
        assert len(server.bodies) == 2  # the eval really ran: one case, two arms
    assert COMMAND_MODULES & set(modules) == {"registry.cli.eval"}
    # pandas (and the pyarrow it pulls in) loads only once the run is summarized: the one
    # statistics engine groups rows with it. Nothing else heavy is loaded by an eval.
    eval_heavy = set(HEAVY) - {"pandas", "pyarrow"}
    assert sorted({m.split(".")[0] for m in modules} & eval_heavy) == []


def test_exit_codes_unknown_command_usage_error_and_hubskills_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as unknown:
        main(["no-such-command"])
    assert unknown.value.code == 2 and "No such command" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["eval"])
    assert usage.value.code == 2 and "Missing argument" in capsys.readouterr().err
    with pytest.raises(SystemExit) as failed:
        main(["eval", str(tmp_path / "missing")])
    err = capsys.readouterr().err
    assert failed.value.code == 1 and "Error:" in err and "Traceback" not in err


def test_python_dash_m_runs_the_same_command(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HUBSKILLS_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "registry.cli", "--version"], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.startswith("hubskills, version ")


#: Command modules named otherwise, and modules without a `_` that hold no command: none (a
#: helper module's name starts with `_`, like cli/_trigger_eval.py and cli/_verify_spot.py).
KNOWN_ELSEWHERE: dict[str, str] = {}
KNOWN_NOT_COMMANDS: set[str] = set()
#: Hidden old spellings live with the command they spell: `tests generate` is `suite generate`.
ALIAS_OF = {"tests": "suite"}


def test_each_command_lives_in_the_module_named_after_it():
    """`hubskills X` (or `hubskills X sub`) is written in registry/cli/X.py (`x-y` in x_y.py,
    a module name cannot hold a hyphen); every module there
    without a leading `_` is a command's."""
    placed = {name: target.partition(":")[0] for name, (target, _) in COMMANDS.items()}
    expected = {name: KNOWN_ELSEWHERE.get(
        name, f"registry.cli.{ALIAS_OF.get(name, name).replace('-', '_')}") for name in COMMANDS}
    assert placed == expected
    modules = {f"registry.cli.{path.stem}" for path in (ROOT / "registry" / "cli").glob("*.py")
               if not path.stem.startswith("_")}
    assert modules - set(placed.values()) == KNOWN_NOT_COMMANDS


@pytest.mark.parametrize("path", [[], ["eval"], ["runs", "compare"], ["help"]])
def test_help_command_prints_what_help_option_prints(path, capsys):
    """A newcomer's `hubskills help` said "No such command 'help'" (git, npm and most CLIs
    answer it): `hubskills help [COMMAND]...` prints the same as `[COMMAND]... --help`."""
    main([*path, "--help"])
    expected = capsys.readouterr().out
    main(["help", *path])
    printed = capsys.readouterr()
    assert printed.out == expected and printed.err == ""
    assert printed.out.startswith(f"Usage: {' '.join(['hubskills', *path])} [OPTIONS]")


@pytest.mark.parametrize(("path", "said", "hint"), [
    (["evl"], "No such command 'evl'. Did you mean 'eval'?", "hubskills --help"),
    (["runs", "comapre"], "No such command 'comapre'. Did you mean 'compare'?",
     "hubskills runs --help"),
    (["doctor", "x"], "'hubskills doctor' has no subcommands.", "hubskills doctor --help")])
def test_help_for_an_unknown_command_says_so_as_the_command_would(path, said, hint, capsys):
    with pytest.raises(SystemExit) as done:
        main(["help", *path])
    err = capsys.readouterr().err
    assert done.value.code == 2 and f"Error: {said}" in err and f"Hint: {hint}" in err, err
