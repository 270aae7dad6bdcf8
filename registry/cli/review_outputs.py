"""`hubskills review-outputs RUN_ID`: review a saved run's answers blind, in a local page."""

from __future__ import annotations

import importlib.util
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from registry._install import add_extra
from registry.cli import _output as out
from registry.errors import HubskillsError
from registry.results.display import count

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.review import Review


@click.command("review-outputs")
@click.argument("run_id")
@click.option("--summary", "summary_only", is_flag=True,
              help="Print what the answers so far tell (preference for the skill with its "
                   "interval, disagreements with the checks) instead of opening the page.")
@click.option("--json", "as_json", is_flag=True, help="With --summary: the summary as JSON.")
@click.option("--push", is_flag=True,
              help="Push the answers to the configured registry's results dataset, beside "
                   "the run (pushed before).")
@click.option("--reviewer", default="local", show_default=True, metavar="NAME",
              help="The name each answer records.")
@click.option("--skill", "skill_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="The skill folder whose suite gives the prompts (default: "
                                 "the folder the run evaluated).")
@click.option("--host", default=None, metavar="HOST",
              help="Interface to listen on (default: GRADIO_SERVER_NAME or 127.0.0.1).")
@click.option("--port", type=click.IntRange(1, 65535), default=None, metavar="PORT",
              help="Port (default: GRADIO_SERVER_PORT or 7860).")
def review_outputs_command(run_id: str, summary_only: bool, as_json: bool, push: bool,
                           reviewer: str, skill_dir: Path | None, host: str | None,
                           port: int | None) -> None:
    """Review a saved run's answers blind, side by side: A, B, tie or both bad.

    Per case the prompt and the two arms' answers side by side, the sides drawn per case and
    the arms named only once you have answered (and a comment, if you like). Answers are kept
    in the run's folder (feedback.jsonl), so a review resumes where it stopped.

    People's preference is not a measured result: it is shown beside the lift, never in it,
    and no badge reads it.

    \b
    Examples:
      hubskills review-outputs RUN_ID            # the page, http://127.0.0.1:7860
      hubskills review-outputs RUN_ID --summary  # what the answers tell
      hubskills review-outputs RUN_ID --push     # beside the pushed run
    """
    from registry.config import Settings
    from registry.review import open_local_review

    _check_reviewer(reviewer, run_id)
    settings = Settings.from_env()
    review = open_local_review(settings.runs_dir, run_id, skill_dir=skill_dir)
    if push:
        _push(settings, run_id)
    elif summary_only:
        _summary(review, as_json)
    else:
        _page(review, reviewer, host, port)


def _check_reviewer(reviewer: str, run_id: str) -> None:
    import re

    from registry.review.feedback import REVIEWER

    if not re.match(REVIEWER, reviewer) or ".." in reviewer:
        raise HubskillsError(f"--reviewer {reviewer!r} is not a name: letters, digits, '.', "
                             "'_' and '-', as a Hub user name",
                             hint=f"hubskills review-outputs {run_id} --reviewer local")


def _push(settings: Settings, run_id: str) -> None:
    from registry.registries import get_store
    from registry.review import push_feedback

    paths = push_feedback(get_store(settings), settings.runs_dir, run_id)
    out.result(f"Pushed {count(len(paths), 'feedback file')}: {', '.join(paths)}" if paths else
               f"No answers to push yet: review run {run_id} first.")


def _summary(review: Review, as_json: bool) -> None:
    summary = review.summary()
    if as_json:
        out.as_json(asdict(summary) | {"headline": summary.headline})
        return
    for line in summary.lines():
        out.result(escape(line))


def _page(review: Review, reviewer: str, host: str | None, port: int | None) -> None:
    if importlib.util.find_spec("gradio") is None:
        raise HubskillsError("the review page needs Gradio, which this install does not have",
                             hint=add_extra("space"))
    from registry.cli.space import serve
    from space.review_local import launch_local

    done, total = review.progress(reviewer)
    out.info(f"Run {review.run_id}: {done} of {count(total, 'case')} answered by "
             f"{escape(reviewer)}.")
    serve(lambda **kw: launch_local(review, reviewer, server_name=host, server_port=port, **kw),
          "The review page", again=f"hubskills review-outputs {review.run_id} --port {{port}}",
          port=port)
