"""`hubskills space`: serve the Space (the leaderboard, skill pages, evaluate) from any install."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import click

from registry._install import add_extra
from registry.cli import _output as out
from registry.errors import HubskillsError


@click.command("space")
@click.option("--host", default=None, metavar="HOST",
              help="Interface to listen on (default: GRADIO_SERVER_NAME or 127.0.0.1).")
@click.option("--port", type=click.IntRange(1, 65535), default=None, metavar="PORT",
              help="Port (default: GRADIO_SERVER_PORT or 7860).")
def space_command(host: str | None, port: int | None) -> None:
    """Serve the hubskills Space on this machine, on the configured registry.

    Needs the `space` extra (Gradio); `hubskills doctor` says whether it is installed.

    \b
    Examples:
      hubskills space                      # http://127.0.0.1:7860
      hubskills space --port 8080
      HUBSKILLS_REGISTRY=hub hubskills space
    """
    if importlib.util.find_spec("gradio") is None:
        raise HubskillsError("the Space needs Gradio, which this install does not have",
                             hint=add_extra("space"))
    from space import build_demo, launch

    demo = build_demo()
    serve(lambda **kw: launch(demo, server_name=host, server_port=port, **kw), "The Space",
          again="hubskills space --port {port}", port=port)


def serve(launch: Callable[..., Any], what: str, *, again: str, port: int | None) -> None:
    """Start a Gradio page with `launch`, say where on stdout at once, serve it until Ctrl-C.

    Gradio's own banner is left out: piped (a log file, `| cat`) it stayed in a buffer, and
    it says "set `share=True` in `launch()`", which a user of the command cannot. A port in
    use is an error whose hint (`again`, `{port}` filled in) names a free one.
    """
    try:
        app, url, _ = launch(prevent_thread_lock=True, quiet=True)
    except OSError as err:
        if "Cannot find empty port" not in str(err):
            raise
        wanted = port or os.environ.get("GRADIO_SERVER_PORT")
        raise HubskillsError(f"port {wanted} is in use (another server listens there)"
                             if wanted else "ports 7860 to 7959 are all in use",
                             hint=again.format(port=_free_port())) from err
    blocks = app.get_blocks()
    try:  # from the line on, Ctrl-C is the way to stop: wherever it lands, a clean stop
        out.result(f"{what}: {url}  (Ctrl-C stops it)")
        sys.stdout.flush()
        while blocks.is_running:
            time.sleep(0.2)
    except KeyboardInterrupt:
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C while it closes
            blocks.close()


def _free_port() -> int:
    """A port nothing listens on now (the system's choice)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
