"""The local review page that `hubskills review-outputs` serves: one run's blind review, as
the Space's *Review* tab shows it (`review_tab.panel`), under the local reviewer's name, its
answers kept in the run's folder."""

from __future__ import annotations

import os
from typing import Any

import gradio as gr

from registry import Review, code_span

from .review_tab import RateLimit, case_updates, panel, wire


def local_page(review: Review, reviewer: str) -> gr.Blocks:
    """A page reviewing `review` as `reviewer`."""
    from .theme import TITLE

    with gr.Blocks(title=f"Review run {review.run_id} · {TITLE}",
                   analytics_enabled=False) as demo:
        gr.Markdown(f"# Blind review of run {code_span(review.run_id)}\n\nWhich answer is "
                    "better? The sides are drawn per case and named once you answer. "
                    f"Your answers are kept in the run's folder under the reviewer name "
                    f"{code_span(reviewer)}.")
        run = gr.State(review.run_id)
        built = panel(run)

        def resolve(_run: str | None, _profile: Any = None
                    ) -> tuple[Review | None, str | None]:
            return review, reviewer

        wire(built, resolve, RateLimit(limit=10_000))
        demo.load(lambda: case_updates(review, reviewer), None,
                  [built.case, built.progress, built.prompt, *built.answers, built.comment,
                   *built.choices.values(), built.next, built.revealed, built.summary,
                   built.pair], api_name="review_load")
    return demo


def launch_local(review: Review, reviewer: str, *, server_name: str | None = None,
                 server_port: int | None = None, **kwargs: Any) -> Any:
    """Serve `local_page` (see `ui.launch` for the defaults)."""
    from .columns import floor_css
    from .theme import CSS, theme

    demo = local_page(review, reviewer)
    demo.queue(default_concurrency_limit=4)
    return demo.launch(
        server_name=server_name or os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1",
        server_port=server_port, theme=theme(), css=CSS + floor_css(), footer_links=["api"],
        run_history=False, **kwargs)
