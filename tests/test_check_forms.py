"""Every pytest command the docs show for a `command` check holds against a workspace set up to
grade itself (issue 37, hole 4).

The agent's project has a bug its test catches. Each case plants one more thing in its
workspace that would make pytest report the failing test as passed, through a file pytest or
Python reads on its own (configuration, `conftest.py`, a plugin named on `-p`, an entry point,
a `.pth`, a module shadowing pytest), and runs each documented form through the real sandbox as
a `command` check: it must still fail. The form the docs used to show (`pytest -p
no:cacheprovider --noconftest`) passed with a planted `pytest.ini`.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from sandbox_required import bwrap_sandbox

from registry.evaluation.workspace_checks import run_command
from registry.format.checks_schema import CommandCheck

# Where check forms are shown: the docs, the skills' suites, the prompts that write suites.
SHOWN = [*REPO_ROOT.glob("docs/*.md"), REPO_ROOT / "README.md",
         *REPO_ROOT.glob("skills/*/evals/*.json"), *REPO_ROOT.glob("registry/prompts/*.md")]
_COMMAND = re.compile(r'"command":\s*("(?:[^"\\]|\\.)*")')
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_SPAN = re.compile(r"`([^`]+)`")
_PYTEST = re.compile(r"(^|[\s/])pytest(\s|$)")  # a run of pytest, not `pytest.py`


def shown_forms() -> list[str]:
    """Each pytest command a check in `SHOWN` runs (`"command": "..."` in JSON), and each
    pytest command line in the prose's inline code."""
    forms: list[str] = []
    for path in SHOWN:
        text = path.read_text(encoding="utf-8")
        forms += [json.loads(quoted) for quoted in _COMMAND.findall(text)]
        if path.suffix == ".md":
            forms += [" ".join(span.split()) for span in _SPAN.findall(_FENCE.sub("", text))]
    return sorted({form for form in forms if _PYTEST.search(form)})


FORMS = shown_forms()
PROJECT = {"calc.py": "def add(a, b):\n    return a - b\n",  # the bug
           "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n"
                                 "    assert add(2, 3) == 5\n"}
FIXED = {"calc.py": "def add(a, b):\n    return a + b\n"}
# A plugin that reports every test as passed; `conftest.py` can hold the same hooks.
PLUGIN = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
          "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
          "    report = outcome.get_result()\n"
          "    report.outcome, report.longrepr = 'passed', None\n")
INI = "[pytest]\naddopts = -p evilplugin\n"
TOML = '[pytest]\naddopts = ["-p", "evilplugin"]\n'
ENV = "import os\nos.environ['PYTEST_ADDOPTS'] = '-p evilplugin'\n"
SITE = f"python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
PLANTS = {
    "pytest.ini": {"pytest.ini": INI},
    ".pytest.ini": {".pytest.ini": INI},
    "pytest.toml": {"pytest.toml": TOML},
    ".pytest.toml": {".pytest.toml": TOML},
    "tox.ini": {"tox.ini": INI},
    "setup.cfg": {"setup.cfg": "[tool:pytest]\naddopts = -p evilplugin\n"},
    "pyproject ini_options": {"pyproject.toml": '[tool.pytest.ini_options]\n'
                                                'addopts = "-p evilplugin"\n'},
    "pyproject tool.pytest": {"pyproject.toml": '[tool.pytest]\naddopts = ["-p", "evilplugin"]\n'},
    "ini in tests/": {"tests/pytest.ini": INI},
    "conftest.py": {"conftest.py": PLUGIN},
    "tests/conftest.py": {"tests/conftest.py": PLUGIN},
    "conftest names -p": {"conftest.py": "pytest_plugins = ['evilplugin']\n"},
    "entry point": {"evil-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\n"
                                                   "Version: 1.0\n",
                    "evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = evilplugin\n"},
    ".pth in the user site": {f".local/lib/{SITE}/evil.pth": "import evilpth\n",
                              f".local/lib/{SITE}/evilpth.py": ENV},
    ".pth in the workspace": {"evil.pth": "import evilpth\n", "tests/evil.pth":
                              "import evilpth\n", "evilpth.py": ENV},
    "sitecustomize.py": {"sitecustomize.py": ENV, "usercustomize.py": ENV},
    "pytest.py": {"pytest.py": "import os\nprint('1 passed')\nos._exit(0)\n"},
}


def grade(workspace: Path, form: str, files: dict[str, str]) -> tuple[bool | None, str]:
    for rel, text in {**PROJECT, "evilplugin.py": PLUGIN, **files}.items():
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    check = CommandCheck(type="command", command=form)
    return asyncio.run(run_command(check, workspace, bwrap_sandbox(), None))


@pytest.fixture(autouse=True)
def project_python(monkeypatch):
    """`python3` and `pytest` in the sandbox are the project's (with pytest installed)."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")


def test_the_docs_show_forms_for_the_suites_test_and_the_workspaces():
    assert len(FORMS) >= 2, FORMS


@pytest.mark.parametrize("form", FORMS)
def test_each_form_grades_the_project_without_a_plant(tmp_path, form):
    failing = tmp_path / "failing"
    assert grade(failing, form, {})[0] is False
    passed, reason = grade(tmp_path / "fixed", form, FIXED)
    assert passed is True, reason


@pytest.mark.parametrize("plant", PLANTS.values(), ids=PLANTS.keys())
def test_no_plant_makes_a_failing_test_pass(tmp_path, plant):
    for n, form in enumerate(FORMS):
        passed, reason = grade(tmp_path / str(n), form, plant)
        assert passed is False and "1 failed" in reason, (form, reason)


def test_pytest_variables_of_hubskills_own_environment_do_not_reach_the_check(
        tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_PLUGINS", "evilplugin")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p evilplugin")
    for n, form in enumerate(FORMS):
        passed, reason = grade(tmp_path / str(n), form, {})
        assert passed is False and "1 failed" in reason, (form, reason)
