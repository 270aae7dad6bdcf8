"""`hubskills space` as a user runs it (issue 38): piped (a log file, `| cat`), it says at once
where it serves, and nothing about `share=True` in `launch()`; a port in use is an error whose
hint names a free port, not a traceback."""

from __future__ import annotations

import signal
import socket
import urllib.request

import pytest

from tests.cli_process import hubskills, start

pytest.importorskip("gradio")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.timeout(300)
def test_piped_it_says_where_it_serves_at_once_and_ctrl_c_stops_it():
    port = _free_port()
    process = start("space", "--port", str(port), PYTHONUNBUFFERED=None)  # a pipe buffers
    try:
        first = process.stdout.readline()  # waits for the line: no sleep, no short timeout
        assert first.strip() == f"The Space: http://127.0.0.1:{port}/  (Ctrl-C stops it)"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=120) as page:
            assert page.status == 200 and b"hubskills" in page.read()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        process.kill() if process.poll() is None else None
    assert process.returncode == 0, err
    assert "share=True" not in first + out + err and "Traceback" not in err


@pytest.mark.timeout(300)
def test_a_port_in_use_is_an_error_whose_hint_names_a_free_port():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = hubskills("space", "--port", str(port))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"Error: port {port} is in use" in done.stderr
    hint = next(line for line in done.stderr.splitlines() if line.startswith("Hint: "))
    suggested = int(hint.removeprefix("Hint: hubskills space --port "))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", suggested))  # free: binding it succeeds
