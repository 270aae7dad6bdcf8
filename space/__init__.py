"""The hubskills Space: a Gradio UI over `registry` (leaderboard, skill pages, evaluate, generate).

`build_demo()` returns the Blocks; `launch()` queues and serves them. Nothing here talks to the
Hub directly: every read and write goes through `registry`'s stores.
"""

from .ui import build_demo, launch

__all__ = ["build_demo", "launch"]
