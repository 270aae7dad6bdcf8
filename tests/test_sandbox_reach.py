"""The sandbox works wherever hubskills is installed, says when it cannot run what checks run,
reports a command it never started as its own failure, and keeps samples apart.

Broken sandboxes are real bwrap calls changed by a wrapper named in HUBSKILLS_BWRAP, as a user's
wrapper would be: one hides the Python prefix from the sandbox (as a venv under `/tmp` once
was), one breaks once the probe has passed.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer
from sandbox_required import bwrap_sandbox
from test_evaluate import knows_fact_if_told, make_skill
from test_sandbox import add_code_check, completions, invoke, refused

from registry.sandbox import BwrapSandbox, Limits
from registry.sandbox.bwrap_probe import probe
from registry.sandbox.namespace import as_root, give_to_sandbox_user

CHECK = [sys.executable, "-I", "-c", "print('checked')"]


def wrapper(folder: Path, body: str) -> str:
    """A bwrap wrapper script: Python code with `args` (bwrap's arguments) and `real`."""
    path = folder / "bwrap-wrapper"
    path.write_text(f"#!{sys.executable}\nimport os, sys\nreal = {shutil.which('bwrap')!r}\n"
                    f"args = sys.argv[1:]\n{textwrap.dedent(body)}\n"
                    "os.execv(real, [real, *args])\n")
    path.chmod(0o755)
    return str(path)


HIDE_PYTHON = f"""
# mount an empty folder over the interpreter's prefix, just before the command starts
at = next(i for i, a in enumerate(args) if a.endswith("/sh") and args[i + 1] == "-c")
args[at:at] = ["--tmpfs", {os.path.realpath(sys.base_prefix)!r}]
"""


def test_a_venv_under_tmp_runs_python_checks(tmp_path):
    bwrap_sandbox()
    folder = Path(tempfile.mkdtemp(prefix="hubskills-venv-", dir="/tmp"))
    try:
        venv = folder / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        python = venv / "bin" / "python"
        site = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        here = [p for p in sys.path if p.endswith("site-packages")]
        Path(site, "hubskills-test.pth").write_text(
            "\n".join([str(Path(__file__).parents[1]), *here]) + "\n")
        script = (f"import asyncio, pathlib, sys\nfrom registry.sandbox import BwrapSandbox\n"
                  "box = BwrapSandbox()\nprint(box.probe())\n"
                  "assert sys.prefix.startswith('/tmp/')\n"
                  f"r = asyncio.run(box.run([sys.executable, '-I', '-c', 'print(6*7)'], "
                  f"pathlib.Path({str(tmp_path)!r})))\nprint(r.exit_code, r.stdout.strip(), "
                  f"r.launch_error)\n")
        done = subprocess.run([str(python), "-c", script], capture_output=True, text=True,
                              check=False, cwd=tmp_path)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode == 0, done.stderr
    assert "(True, 'bubblewrap" in done.stdout and "0 42 None" in done.stdout


def test_a_sandbox_that_cannot_run_python_fails_the_probe_with_the_reason(tmp_path):
    bwrap_sandbox()
    works, why = probe(wrapper(tmp_path, HIDE_PYTHON), as_root(), BwrapSandbox)
    assert not works
    assert why.startswith(f"Python checks cannot run in the sandbox: {sys.executable} did "
                          "not start there (")


def test_doctor_and_eval_say_so_before_any_model_call(tmp_path, capsys, monkeypatch):
    bwrap_sandbox()
    env = {"HUBSKILLS_BWRAP": wrapper(tmp_path, HIDE_PYTHON)}
    report = json.loads(invoke("doctor", "--json", **env).stdout)["sandbox"]
    assert report["selected"] is None
    assert "Python checks cannot run in the sandbox" in report["backends"][0]["why"]
    skill, marker = make_skill(tmp_path, 2), tmp_path / "ran"
    add_code_check(skill, marker)
    with FakeOpenAIServer(responder=knows_fact_if_told) as server:
        err = refused(capsys, monkeypatch, "eval", str(skill), "-m", "local/fake",
                      "--base-url", server.url, "--runs", "1", **env)
        assert completions(server) == []
    assert "Python checks cannot run in the sandbox" in " ".join(err.split())
    assert "Traceback" not in err and not marker.exists()


def test_a_sandbox_that_breaks_after_its_probe_reports_a_launch_error(tmp_path):
    bwrap_sandbox()
    broken = tmp_path / "broken"
    binary = wrapper(tmp_path, f"""
if os.path.exists({str(broken)!r}):  # bwrap reports its pid 1, then cannot build the mounts
    args[:0] = ["--ro-bind", "/nonexistent/hubskills", "/mnt"]
""")
    sandbox = BwrapSandbox(binary)
    assert sandbox.probe()[0]
    workspace = tmp_path / "ws"
    workspace.mkdir()
    ok = asyncio.run(sandbox.run(CHECK, workspace))
    assert (ok.exit_code, ok.stdout.strip(), ok.launch_error) == (0, "checked", None)
    broken.touch()
    failed = asyncio.run(sandbox.run(CHECK, workspace))
    assert failed.exit_code != 0 and failed.launch_error is not None
    assert "/nonexistent/hubskills" in failed.launch_error


def test_a_command_cannot_pass_itself_off_as_a_launch_error(tmp_path):
    sandbox = bwrap_sandbox()
    fake = ["sh", "-c", "echo \"bwrap: Can't bind mount\" >&2; exit 1"]
    result = asyncio.run(sandbox.run(fake, tmp_path))
    assert result.exit_code == 1 and result.launch_error is None


@pytest.mark.skipif(not as_root(), reason="as a normal user each sandbox has its own user "
                    "namespace, whose processes the kernel counts apart already")
def test_processes_one_sandbox_leaves_do_not_starve_another(tmp_path):
    sandbox = bwrap_sandbox()
    limits = Limits(wall_s=60, processes=16)
    hog, other = tmp_path / "hog", tmp_path / "other"
    hog.mkdir()
    other.mkdir()

    async def scenario() -> tuple[str, object]:
        async with sandbox.session(hog, limits=limits) as session:
            filled = await session.run(
                ["sh", "-c", "i=0; while [ $i -lt 40 ]; do sleep 600 & i=$((i+1)); done"])
            fork = await sandbox.run(["sh", "-c", "sleep 0 & wait && echo forked"], other,
                                     limits=limits)
            return filled.stderr, fork

    filled, fork = asyncio.run(scenario())
    assert "Cannot fork" in filled  # the hog reached its own limit
    assert (fork.exit_code, fork.stdout.strip()) == (0, "forked"), fork.stderr


def test_each_sandbox_runs_as_a_uid_of_its_own_that_can_look_itself_up(tmp_path):
    sandbox = bwrap_sandbox()
    show = ["sh", "-c", "id -u; id -un"]
    first, second = (asyncio.run(sandbox.run(show, tmp_path)) for _ in range(2))
    uid1, name1 = first.stdout.split()
    uid2, _ = second.stdout.split()
    assert name1 == "sandbox" if as_root() else name1
    if as_root():
        assert uid1 != uid2 and int(uid1) >= 2_000_000_000


def test_handing_a_deep_workspace_over_does_not_recurse(tmp_path):
    deep = tmp_path / "ws"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY)
    for _ in range(1500):  # os.makedirs itself recurses
        os.mkdir("d", dir_fd=fd)
        fd, parent = os.open("d", os.O_RDONLY, dir_fd=fd), fd
        os.close(parent)
    os.close(fd)
    try:
        if as_root():
            give_to_sandbox_user(deep, 4242)
            assert (deep / "d" / "d").stat().st_uid == 4242
        else:
            pytest.skip("hand-over happens as root")
    finally:  # pytest's own clean-up (shutil.rmtree) recurses: rm walks without recursing
        subprocess.run(["rm", "-rf", str(deep)], check=True)
