"""A hostile suite: checks that try every escape issue 12 measured, each of which must be
contained by the bwrap sandbox (skipped without bubblewrap; failed under
HUBSKILLS_REQUIRE_SANDBOX=1, as CI runs it).

Each hostile check reports what it managed as its verdict: `passed` True means it escaped.
The host side then checks what it can see for itself: files, the listener, processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from conftest import REPO_ROOT
from sandbox_required import bwrap_sandbox

from registry.evaluation.checks import run_checks
from registry.format.suite import Case
from registry.results.runs import CheckVerdict
from registry.sandbox import BwrapSandbox, Limits


@pytest.fixture
def sandbox() -> BwrapSandbox:
    return bwrap_sandbox()


def hostile(body: str, timeout: float = 20) -> dict:
    """A python check whose body returns (escaped, what it saw)."""
    code = "def check(output, files):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    return {"type": "python", "code": code, "timeout": timeout}


def grade(sandbox: BwrapSandbox, *checks: dict) -> list[CheckVerdict]:
    case = Case.model_validate({"id": "evil", "prompt": "p", "checks": list(checks)})
    return asyncio.run(run_checks(case, "output", sandbox=sandbox))


def survivors(marker: str) -> list[str]:
    """Host processes whose command line holds `marker`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if marker.encode() in cmdline and int(pid) != os.getpid():
            found.append(cmdline.decode(errors="replace"))
    return found


def test_home_secrets_are_out_of_reach(sandbox, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN FAKE PRIVATE KEY-----")
    (home / ".cache" / "huggingface").mkdir(parents=True)
    (home / ".cache" / "huggingface" / "token").write_text("hf_fake_token_for_the_escape")
    monkeypatch.setenv("HOME", str(home))
    targets = [str(home / ".ssh" / "id_rsa"), str(home / ".cache/huggingface/token"),
               str(Path.home()), "/root/.ssh/id_rsa", "/etc/shadow"]
    python = hostile(f"""
    import os
    seen = []
    for path in {targets!r}:
        try:
            seen.append(os.listdir(path) if os.path.isdir(path) else open(path).read())
        except OSError:
            pass
    return bool(seen), repr(seen)[:300]
    """)
    shell = {"type": "exec", "command": ["/bin/sh", "-c", f"cat {' '.join(targets[:2])}"]}
    first, second = grade(sandbox, python, shell)
    assert first.passed is False and first.reason == "[]"
    assert second.passed is False and "No such file" in second.reason


RUN_IN_A_CHILD = """
import asyncio, json, sys
from registry.evaluation.checks import run_checks
from registry.format.suite import Case
from registry.sandbox import BwrapSandbox
case = Case.model_validate({"id": "evil", "prompt": "p", "checks": [json.loads(sys.argv[1])]})
[verdict] = asyncio.run(run_checks(case, "output", sandbox=BwrapSandbox()))
print(verdict.model_dump_json())
"""


def test_the_parents_environment_is_out_of_reach(sandbox):
    # hubskills' own process holds the keys: run the checks from a child that has them at
    # start-up, so its /proc/<pid>/environ really holds them (as the CLI's does)
    secret = "hubskills-escape-" + uuid.uuid4().hex
    check = hostile("""
    import glob, os
    wanted = ("HUBSKILLS_ESCAPE_SECRET", "HF_TOKEN", "ANTHROPIC_API_KEY")
    paths = {"/proc/1/environ", f"/proc/{os.getppid()}/environ", *glob.glob("/proc/*/environ")}
    readable, leaked = [], []
    for path in sorted(paths):
        try:
            text = open(path, "rb").read().decode(errors="replace")
        except OSError:
            continue
        readable.append(path)
        leaked += [w for w in wanted if w + "=" in text]
    return bool(leaked), f"read {readable}, found {leaked}"
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HUBSKILLS_ESCAPE_SECRET": secret,
           "HF_TOKEN": secret, "ANTHROPIC_API_KEY": secret}
    done = subprocess.run([sys.executable, "-c", RUN_IN_A_CHILD, json.dumps(check)], env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    verdict = CheckVerdict.model_validate_json(done.stdout.strip().splitlines()[-1])
    assert verdict.passed is False, verdict.reason
    assert "found []" in verdict.reason and secret not in done.stdout + done.stderr


def test_nothing_outside_the_workspace_changes(sandbox, tmp_path):
    marker = f"hubskills-escape-{uuid.uuid4().hex}"
    targets = [f"/tmp/{marker}", str(tmp_path / marker), f"/usr/{marker}", f"/{marker}",
               str(REPO_ROOT / marker)]
    check = hostile(f"""
    import os
    written = []
    for path in {targets!r}:
        try:
            with open(path, "w") as handle:
                handle.write("escaped")
            written.append(path)
        except OSError:
            pass
    return False, "wrote " + repr(written)
    """)
    [result] = grade(sandbox, check)
    assert result.reason.startswith("wrote [") and f"/usr/{marker}" not in result.reason
    assert [p for p in targets if os.path.exists(p)] == []


def test_no_network_not_even_the_hosts_loopback(sandbox):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    check = hostile(f"""
    import _socket, subprocess, sys
    outcomes = []
    try:
        raw = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        raw.settimeout(3)
        raw.connect(("127.0.0.1", {port}))
        outcomes.append("connected")
    except OSError as exc:
        outcomes.append(type(exc).__name__)
    child = subprocess.run([sys.executable, "-c", "import socket; "
                            "socket.create_connection(('127.0.0.1', {port}), timeout=3)"],
                           capture_output=True, text=True)
    outcomes.append("child exit %d" % child.returncode)
    return "connected" in outcomes or child.returncode == 0, repr(outcomes)
    """)
    try:
        [result] = grade(sandbox, check)
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    assert result.passed is False and "ConnectionRefusedError" in result.reason
    assert "child exit 1" in result.reason


def test_a_setsid_double_forked_child_does_not_outlive_the_command(sandbox, tmp_path):
    marker = f"hubskills-escape-{uuid.uuid4().hex}"
    code = textwrap.dedent(f"""
    import os, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sh", ["sh", "-c", "sleep 1.5; echo late > late.txt # {marker}"])
        os._exit(0)
    print("parent leaves")
    """)
    result = asyncio.run(sandbox.run(["python3", "-c", code], tmp_path, timeout=20))
    assert (result.exit_code, result.stdout.strip()) == (0, "parent leaves")
    assert survivors(marker) == []
    time.sleep(2)
    assert not (tmp_path / "late.txt").exists() and survivors(marker) == []


def test_a_fork_bomb_is_bounded_and_leaves_nothing(sandbox):
    marker = f"hubskills-escape-{uuid.uuid4().hex}"
    check = hostile(f"""
    import os, time
    children = 0
    for _ in range(1000):  # a bomb that stops itself, so a broken limit cannot hang the host
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.execv("/bin/sleep", ["sleep", "30", "{marker}"])
        children += 1
    return children >= 1000, f"forked {{children}}"
    """)
    [result] = grade(sandbox, check)
    forked = int(result.reason.split()[-1])
    assert result.passed is False and 0 < forked < Limits().processes
    assert survivors(marker) == []


def test_memory_and_time_are_capped(sandbox):
    greedy = hostile("data = bytearray(4 * 1024 ** 3)\nreturn True, 'allocated 4 GiB'")
    endless = hostile("while True:\n    pass", timeout=1)
    memory, time_out = grade(sandbox, greedy, endless)
    assert memory.passed is False and memory.reason.startswith("MemoryError")
    assert (time_out.passed, time_out.reason) == (False, "timed out after 1s")
