"""Checks that cost nothing run before anything that costs money, as users meet them.

Each test runs the CLI as a process against the fake model server and asserts the server
received no request at all: a bad option, a missing token, an unknown registry, an unwritable
destination, a broken suite or a mode the model cannot do is found before the first call.
`validate` finds the suite errors `eval` would stop with, in the same words.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from cli_process import hubskills, runs
from fakes.openai_server import FakeOpenAIServer
from test_evaluate import knows_fact_if_told, make_skill
from test_generate import Scripted

from registry.providers import embedded_availability


@pytest.fixture
def server():
    with FakeOpenAIServer(responder=knows_fact_if_told) as srv:
        yield srv


@pytest.fixture
def home() -> Path:
    return Path(os.environ["HUBSKILLS_HOME"])


def eval_args(skill: Path, server: FakeOpenAIServer, *extra: str) -> list[str]:
    return ["eval", str(skill), "-m", "local/fake", "--base-url", server.url, "--runs", "1",
            *extra]


def refused(done, *, code: int = 1) -> str:
    """stderr of a command that failed cleanly with `code`."""
    assert done.returncode == code, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return " ".join(done.stderr.split())  # rich may wrap long lines


# --- eval: options, credentials and destinations ------------------------------------------


def test_push_to_the_hub_without_a_token_fails_before_any_call(server, tmp_path, home):
    skill = make_skill(tmp_path, 2)
    done = hubskills(*eval_args(skill, server, "--push", "--registry", "hub"),
                     HF_HUB_OFFLINE=None, HF_HOME=str(tmp_path / "hf-home"))
    err = refused(done)
    assert "Error: writing to the Hub needs a Hugging Face token" in err
    assert "Hint:" in err
    assert server.requests == [] and runs(home) == []


def test_push_to_the_hub_offline_fails_before_any_call(server, tmp_path, home):
    done = hubskills(*eval_args(make_skill(tmp_path, 2), server, "--push", "--registry", "hub"),
                     HF_TOKEN="hf_not_a_real_token_but_long_enough")
    err = refused(done)
    assert "not available offline (HF_HUB_OFFLINE=1)" in err and "--registry local" in err
    assert server.requests == [] and runs(home) == []


def test_an_unknown_registry_fails_before_any_call(server, tmp_path, home):
    for extra in (["--push", "--registry", "foo"], ["--registry", "foo"]):
        err = refused(hubskills(*eval_args(make_skill(tmp_path / extra[0], 2), server, *extra)))
        assert "Error: unknown registry 'foo'" in err
        assert "Hint: use --registry local or --registry hub" in err
    assert server.requests == [] and runs(home) == []


def test_registry_without_push_is_said_to_do_nothing(server, tmp_path):
    done = hubskills(*eval_args(make_skill(tmp_path, 1), server, "--registry", "local"))
    assert done.returncode == 0, done.stderr
    assert "Warning: --registry local is used only with --push: nothing will be pushed" in \
        " ".join(done.stderr.split())
    head = done.stderr.index("nothing will be pushed")
    assert head < done.stderr.index(" answers to get")  # said before the run started


def test_an_unwritable_home_fails_before_any_call(server, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    done = hubskills(*eval_args(make_skill(tmp_path, 2), server),
                     HUBSKILLS_HOME=str(blocker / "home"))
    err = refused(done)
    assert f"Error: cannot save the run in {blocker / 'home' / 'runs'}" in err
    assert "Hint: set HUBSKILLS_HOME to a folder you can write to" in err
    assert server.requests == []


def test_an_unwritable_local_registry_fails_before_any_call(server, tmp_path, home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "registry").write_text("a file where the registry folder should be")
    err = refused(hubskills(*eval_args(make_skill(tmp_path, 2), server, "--push")))
    assert f"Error: cannot write to the local registry {home / 'registry'}" in err
    assert server.requests == [] and runs(home) == []


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--runs", "0", "Invalid value for '--runs': 0 is not in the range x>=1"),
    ("--max-tokens", "0", "Invalid value for '--max-tokens'"),
    ("--concurrency", "0", "Invalid value for '--concurrency'"),
    ("--temperature", "7", "Invalid value for '--temperature'"),
    ("--max-cost", "0", "Invalid value for '--max-cost'"),
])
def test_bad_option_values_are_usage_errors_before_any_call(server, tmp_path, option, value,
                                                            message):
    done = hubskills(*eval_args(make_skill(tmp_path, 2), server, option, value))
    assert refused(done, code=2).count(message) == 1
    assert server.requests == []


def test_a_judge_without_its_key_and_an_unknown_case_fail_before_any_call(server, tmp_path):
    skill = make_skill(tmp_path, 2)
    err = refused(hubskills(*eval_args(skill, server, "--judge", "sonnet")))
    assert "ANTHROPIC_API_KEY" in err
    err = refused(hubskills(*eval_args(skill, server, "--cases", "q0,nope")))
    assert "no case with id nope in the suite" in err
    assert server.requests == []


# --- validate finds what eval would stop with -----------------------------------------------


def _break(suite: Path, how: str) -> None:
    text = suite.read_text()
    if how == "trailing comma":
        text = re.sub(r"\]\s*\}\s*$", "],\n}\n", text)
    elif how == "unknown check type":
        text = text.replace('"type": "contains"', '"type": "contain"', 1)
    else:  # a regex check given `value` instead of `pattern`
        text = text.replace('"type": "contains"', '"type": "regex"', 1)
    suite.write_text(text)


@pytest.mark.parametrize(("how", "line", "where"), [
    ("trailing comma", None, ""),  # where this Python's decoder puts it (3.13: the comma)
    ("unknown check type", 4, "case 1 ('q0'): field checks[0].type"),
    ("regex without pattern", 4,
     "case 1 ('q0'): field checks[0].pattern: missing (it is required)"),
])
def test_validate_reports_the_suite_error_eval_would_raise(server, tmp_path, how, line, where):
    skill = make_skill(tmp_path, 2)
    suite = skill / "evals" / "evals.json"
    suite.write_text(json.dumps(json.loads(suite.read_text()), indent=2))
    _break(suite, how)
    if line is None:
        try:
            json.loads(suite.read_text())
        except json.JSONDecodeError as error:
            line = error.lineno

    evaluated = refused(hubskills(*eval_args(skill, server)))
    assert server.requests == []
    eval_message = evaluated.split(f"Error: {suite}", 1)[1].split(" Hint:")[0]
    if how == "trailing comma":
        assert eval_message.startswith(f":{line}: invalid JSON")
        eval_message = eval_message.removeprefix(f":{line}:")
    else:
        eval_message = eval_message.removeprefix(":")
    assert where in eval_message

    validated = hubskills("validate", skill)
    assert validated.returncode == 1
    found = " ".join(validated.stdout.split())
    assert f"{skill}: invalid (1 error, 0 warnings)" in found
    assert f"{suite}:{line}: error invalid-suite:{eval_message}" in found


def test_an_untouched_scaffold_validates_with_placeholder_warnings(tmp_path):
    assert hubskills("new", "csv-clean", "--dir", tmp_path).returncode == 0
    folder = tmp_path / "csv-clean"
    done = hubskills("validate", folder)
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert lines[0] == f"{folder}: valid (0 errors, 4 warnings)"
    assert any(f"{folder}/SKILL.md:3: warning placeholder-description" in x for x in lines)
    assert any(f"{folder}/SKILL.md:13: warning placeholder-body" in x for x in lines)
    assert any(f"{folder}/evals/evals.json:4: warning placeholder-check: case 1 ('example'): "
               "field checks[0]" in x for x in lines)

    skill_md = folder / "SKILL.md"
    skill_md.write_text(skill_md.read_text()
                        .replace("Describe what csv-clean does", "Cleans CSV files")
                        .replace("State the one fact", "Say the one fact"))
    suite = folder / "evals" / "evals.json"
    suite.write_text(suite.read_text().replace("replace me", "pandas"))
    edited = hubskills("validate", folder)
    assert edited.stdout.splitlines()[0] == f"{folder}: valid (0 errors, 1 warning)"
    assert "warning small-suite: 1 case, under 10" in edited.stdout


# --- modes a model cannot do -----------------------------------------------------------------

needs_embedded = pytest.mark.skipif(not embedded_availability()[0],
                                    reason="the embedded model is not installed")


@needs_embedded
def test_tool_mode_on_a_model_that_cannot_call_tools_is_refused_up_front(server, tmp_path, home):
    skill = make_skill(tmp_path, 2)
    err = refused(hubskills("eval", skill, "-m", "embedded/smollm2-135m", "--mode", "tool"))
    assert "Error: --mode tool needs a model that can call tools, and embedded/smollm2-135m " \
           "cannot" in err
    assert f"Hint: hubskills eval {skill} --mode inline" in err
    assert runs(home) == []


@needs_embedded
def test_tool_mode_warns_before_the_run_about_the_model_that_cannot(server, tmp_path):
    done = hubskills(*eval_args(make_skill(tmp_path, 1), server, "-m", "embedded/smollm2-135m",
                                "--mode", "tool", "--max-tokens", "2"))
    assert done.returncode == 0, done.stderr
    err = " ".join(done.stderr.split())
    warning = ("Warning: embedded/smollm2-135m cannot call tools: in --mode tool it never loads "
               "the skill, so its lift measures only the skill's name and description")
    assert warning in err
    assert err.index(warning) < err.index("answers to get")  # before the first call
    assert len(server.requests) >= 2  # the model that can call tools was evaluated


# --- generate: the destination before the teacher -----------------------------------------


def generate_args(server: FakeOpenAIServer, out: Path, *extra: str) -> list[str]:
    return ["generate", "Configure the zorblax daemon", "--teacher", "local/teacher",
            "--student", "local/student", "--base-url", server.url, "--out", str(out), *extra]


def test_generate_checks_the_destination_before_calling_the_teacher(server, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    err = refused(hubskills(*generate_args(server, tmp_path, "--name", "taken")))
    assert f"Error: {tmp_path / 'taken'} already exists" in err
    assert "Hint: add --force to replace it, or choose --out DIR" in err

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    err = refused(hubskills(*generate_args(server, blocker / "out")))
    assert f"Error: cannot save the skill in {blocker / 'out'}: {blocker} is not a folder" in err

    err = refused(hubskills(*generate_args(server, tmp_path, "--name", "Bad_Name")))
    assert "Error: --name 'Bad_Name' is not a valid skill name" in err
    err = refused(hubskills(*generate_args(server, tmp_path, "--student", "sonnet")))
    assert "ANTHROPIC_API_KEY" in err
    assert server.requests == []
    assert (tmp_path / "taken" / "keep.txt").read_text() == "mine"


@needs_embedded
def test_generate_refuses_tool_mode_when_no_student_can_call_tools(server, tmp_path):
    args = ["generate", "Configure zorblax", "--teacher", "local/teacher", "--base-url",
            server.url, "--student", "embedded/smollm2-135m", "--mode", "tool", "--out",
            str(tmp_path)]
    err = refused(hubskills(*args))
    assert "--mode tool needs a model that can call tools" in err
    assert 'Hint: hubskills generate "TASK" --mode inline' in err
    assert server.requests == []


def test_generate_name_fixes_the_skill_name_the_teacher_would_pick(tmp_path):
    with FakeOpenAIServer(responder=Scripted()) as teacher:
        done = hubskills("generate", "Operate the zorblax daemon", "--teacher", "local/teacher",
                         "--base-url", teacher.url, "--no-eval", "--name", "zx-ops",
                         "--out", tmp_path / "out")
        asked = len(teacher.requests)
    assert done.returncode == 0, done.stderr
    assert asked >= 1 and [p.name for p in (tmp_path / "out").iterdir()] == ["zx-ops"]
    assert "name: zx-ops" in (tmp_path / "out" / "zx-ops" / "SKILL.md").read_text()
