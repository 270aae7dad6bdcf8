"""The arrivals bench's floor: the smallest Gradio app a visitor can arrive at (issue 38).

    GRADIO_SERVER_PORT=7861 python bench/peers/gradio_floor.py

One `gr.Dataframe` filled by one `demo.load(..., api_name="page_load")` from a table held in
memory (the seeded leaderboard's shape: 3 rows), the queue with no concurrency limit, the
Gradio this checkout installs. `bench/space_load.py` sends it the same 100 arrivals as the
Space (`space_arrivals.arrivals`) in the same run: what is left is Gradio's own cost of a new
visitor (the page, a new session, a queue join, the event stream) on this machine.
"""

from __future__ import annotations

import os

import gradio as gr
import pandas as pd

TABLE = pd.DataFrame({"rank": [1, 2, 3],
                      "skill": ["hubskills/agent-skill-md", "hubskills/csv-report",
                                "hubskills/commit-message"],
                      "model": ["embedded/smollm2-135m"] * 3,
                      "lift": ["+12", "+4", "-1"]})


def page_load() -> pd.DataFrame:
    """The table, as the Space's page load returns its leaderboard."""
    return TABLE


def build() -> gr.Blocks:
    """The floor's Blocks: one table, one load event."""
    with gr.Blocks(analytics_enabled=False) as demo:
        table = gr.Dataframe(elem_id="leaderboard-table")
        demo.load(page_load, None, table, api_name="page_load")
    return demo


if __name__ == "__main__":
    demo = build()
    demo.queue(default_concurrency_limit=None)
    demo.launch(server_name="127.0.0.1",
                server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7860")))
