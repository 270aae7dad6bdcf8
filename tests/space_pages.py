"""The Space's two pages in tests: the leaderboard's (`build_demo`'s Blocks) and the
workbench's (`demo.hubskills_workbench`: Evaluate, Generate, Review), searched as one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradio as gr


def pages(demo: gr.Blocks) -> list[gr.Blocks]:
    """The leaderboard's page, then the workbench's when the demo has one."""
    work = getattr(demo, "hubskills_workbench", None)
    return [demo] if work is None else [demo, work]


def handler(demo: gr.Blocks, api_name: str) -> Callable[..., Any]:
    """An event's handler as the Space runs it (in its own secret scope, output scrubbed), on
    whichever page has it."""
    return next(f.fn for page in pages(demo) for f in page.fns.values()
                if f.api_name == api_name)


def private_handler(demo: gr.Blocks, *outputs: str | None) -> Callable[..., Any]:
    """The handler of the event whose outputs have these `elem_id`s (None: one without)."""
    return next(f.fn for page in pages(demo) for f in page.fns.values()
                if [o.elem_id for o in f.outputs] == list(outputs))


def blocks(demo: gr.Blocks) -> Iterator[Any]:
    """Every block of both pages."""
    for page in pages(demo):
        yield from page.blocks.values()
