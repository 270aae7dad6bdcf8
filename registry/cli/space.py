"""`hubskills space`: serve the Space (the leaderboard, skill pages, evaluate) from any install."""

from __future__ import annotations

import importlib.util

import click

from registry._install import add_extra
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

    launch(build_demo(), server_name=host, server_port=port)
