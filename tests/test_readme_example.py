"""The README's examples run as written: "Use from Python" against the fake OpenAI server, and
the command-line block from a folder outside the checkout. The docs site shows these same
blocks, included from the README (`docs/api.md`, `docs/getting-started.md`)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from cli_process import hubskills
from fakes.openai_server import FakeOpenAIServer
from fakes.trigger_model import TriggerModel

import registry
from registry.format.markdown import fenced_blocks

ROOT = Path(__file__).resolve().parent.parent
VERDICT = r"(helps|hurts|no detectable effect)"


def _example() -> str:
    """The first python block of the README's `## Use from Python` section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Use from Python\n", 1)[1].split("\n## ", 1)[0]
    return next(b.body for b in fenced_blocks(section) if b.info == "python")


def _answer(body: dict) -> str:
    """One answer with the skill in the prompt, another without."""
    prompt = json.dumps(body["messages"])
    return "The name must match the folder." if "<skill" in prompt else "I am not sure."


def test_the_use_from_python_example_runs_against_a_local_server(
        tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    code = _example()
    assert "import registry" in code and "registry.run_evaluation" in code
    suite = json.loads((ROOT / "skills/agent-skill-md/evals/evals.json").read_text())
    with FakeOpenAIServer(responder=_answer) as server:
        monkeypatch.setenv("HUBSKILLS_BASE_URL", server.url)
        monkeypatch.chdir(tmp_path)  # any folder: the example pulls its skill
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
        assert len(server.bodies) == 2 * len(suite["cases"])  # every case, both arms, once
        assert {body["model"] for body in server.bodies} == {"my-model"}
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "agent-skill-md valid"
    assert re.fullmatch(rf"local/my-model: lift [+-]\d+% \[[+-]\d+%, [+-]\d+%\], {VERDICT}",
                        lines[1])
    board, dataset = lines[2:-1], lines[-1]
    seeded = registry.get_store(registry.Settings.from_env()).read_results()
    assert dataset == f"{len(seeded)} results, {len({r.run_id for r in seeded})} runs"
    # The seeded registry holds the three example skills, each with one recorded run on the
    # embedded model: one line each, ranked by the lift's lower bound, highest first.
    examples = sorted(p.name for p in (ROOT / "skills").iterdir() if (p / "SKILL.md").is_file())
    assert len(board) == len(examples) == 3
    parsed = [re.fullmatch(rf"(\S+) on (\S+): lift at least ([+-]\d+)%, ({VERDICT})", line)
              for line in board]
    assert all(parsed), board
    assert sorted(next(e for e in examples if e in m[1]) for m in parsed) == examples
    bounds = [int(m[3]) for m in parsed]
    assert bounds == sorted(bounds, reverse=True)
    assert (tmp_path / ".agents" / "skills" / "agent-skill-md" / "SKILL.md").is_file()
    runs = list((tmp_path / "hubskills-home" / "runs").iterdir())
    assert len(runs) == 1 and (runs[0] / "rows.jsonl").is_file()  # the run was saved


def _command_lines(title: str = "The command line, from any folder") -> list[list[str]]:
    """The bash block of the README's section `## title`: each command as its words."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    block = next(b.body for b in fenced_blocks(section) if b.info == "bash")
    return [shlex.split(part) for line in block.splitlines()
            for part in " ".join(shlex.split(line, comments=True)).split(" && ") if part]


def test_the_readme_commands_run_from_a_folder_outside_the_checkout(tmp_path):
    """Each command, in order, from a temporary folder, piped at 80 columns; `eval` against the
    fake model server (the embedded model gives the same output, slower)."""
    commands = _command_lines()
    assert [c[:2] for c in commands if c[0] != "hubskills"] == []
    assert {c[1] for c in commands} >= {"leaderboard", "info", "suite", "scan", "eval", "pull"}
    project = tmp_path / "project"
    project.mkdir()
    with FakeOpenAIServer(responder=lambda body: "I am not sure.") as server:
        for words in commands:
            extra = ["-m", "local/fake", "--base-url", server.url] if words[1] == "eval" else []
            done = hubskills(*words[1:], *extra, cwd=project, COLUMNS="80")
            assert done.returncode == 0, (words, done.stdout, done.stderr)
            assert "Traceback" not in done.stderr
    assert (project / ".agents/skills/agent-skill-md/SKILL.md").is_file()
    assert (project / "my-skill/evals/evals.json").is_file()


def test_the_readme_verifies_a_seeded_run_as_written(tmp_path):
    """`## Can you trust a number?`: the badges and a replay of a seeded run, whose id must be
    one of the recorded runs in `skills/.runs` (re-recording them without the README fails)."""
    commands = _command_lines("Can you trust a number?")
    assert [c[1] for c in commands] == ["leaderboard", "verify"]
    # `verify` first: on a fresh HUBSKILLS_HOME it seeds the registry like any other command
    done = hubskills(*commands[1][1:], cwd=tmp_path, COLUMNS="80")
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert done.stdout.startswith(f"verified: run {commands[1][-1]} ")
    board = hubskills(*commands[0][1:], "--json", cwd=tmp_path)
    assert board.returncode == 0, board.stderr
    assert {e["verification"] for e in json.loads(board.stdout)} == {"replayed"}


def _with_fakes(words: list[str], url: str) -> list[str]:
    """The command with its real models swapped for the fake server's."""
    fake = {"-m": "local/fake-trigger", "--teacher": "local/fake-teacher"}
    swapped = [fake.get(before, word)
               for before, word in zip(["", *words[:-1]], words, strict=True)]
    return [*swapped, "--base-url", url]


def test_the_readme_trigger_eval_and_tune_run_as_written(tmp_path):
    """`## Does the agent open the skill?`, each command with its models swapped for a
    scripted tool-calling model and teacher: an example skill pulled, measured, tuned, and its
    `SKILL.md` left as it was (no `--write`)."""
    commands = _command_lines("Does the agent open the skill?")
    assert [c[1] for c in commands] == ["eval", "tune"] and "--write" not in commands[1]
    project = tmp_path / "project"
    project.mkdir()
    assert hubskills("pull", "hubskills/agent-skill-md", cwd=project).returncode == 0
    skill_md = project / ".agents/skills/agent-skill-md/SKILL.md"
    before = skill_md.read_bytes()
    teacher = lambda prompt: "<description>Write and validate SKILL.md files.</description>"  # noqa: E731
    with FakeOpenAIServer(responder=TriggerModel(threshold=2, teacher=teacher)) as server:
        for words in commands:
            done = hubskills(*_with_fakes(words, server.url)[1:], cwd=project, COLUMNS="80")
            assert done.returncode == 0, (words, done.stdout, done.stderr)
            assert "Traceback" not in done.stderr
            assert "recall" in done.stdout.lower(), done.stdout
    assert skill_md.read_bytes() == before
