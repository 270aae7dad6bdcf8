"""`hubskills review`: the results dataset's owner replays and merges pending submissions."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from rich.markup import escape

from registry.cli import _output as out

if TYPE_CHECKING:
    from registry.verify.admission import SubmissionCheck


@click.group("review")
def review_group() -> None:
    """Replay, comment on and merge the runs submitted as pull requests.

    Each run waiting in a pull request on the results dataset is replayed without calling
    any model, the result recorded and commented on the pull request; a mismatch is never
    merged.

    \b
    Examples:
      hubskills review pending              # replay, record, comment on each PR
      hubskills review merge 3              # merge PR #3 unless a run is a mismatch
    """


@review_group.command("pending")
@click.option("--comment/--no-comment", default=True, show_default=True,
              help="Post each result on its pull request (once per version of its rows).")
@click.option("--json", "as_json", is_flag=True, help="The results as JSON.")
def review_pending(comment: bool, as_json: bool) -> None:
    """Replay every pending submission without calling any model and record the result."""
    from registry.config import Settings
    from registry.registries import get_store
    from registry.verify.admission import replay_pending

    settings = Settings.from_env()
    checks = replay_pending(get_store(settings, "hub"), settings, comment=comment)
    if as_json:
        out.as_json([_as_dict(c) for c in checks])
    elif not checks:
        out.result("No pending submissions: nothing awaits review.")
    for check in [] if as_json else checks:
        _render(check)


@review_group.command("merge")
@click.argument("number", type=click.IntRange(min=1), metavar="PR_NUMBER")
def review_merge(number: int) -> None:
    """Merge pull request PR_NUMBER into the results dataset, after replaying its runs; a
    mismatch is never merged."""
    from registry.config import Settings
    from registry.registries import get_store
    from registry.verify.admission import merge_submission

    settings = Settings.from_env()
    checks = merge_submission(get_store(settings, "hub"), settings, number)
    for check in checks:
        _render(check)
    out.result(f"Merged pull request #{number}.")


def _as_dict(check: SubmissionCheck) -> dict[str, object]:
    from dataclasses import asdict

    return asdict(check)


def _render(check: SubmissionCheck) -> None:
    why = f": {escape(check.first_problem)}" if check.first_problem else ""
    told = " (commented)" if check.commented else ""
    out.result(f"#{check.num} {escape(check.author)} {escape(check.run_id)}: "
               f"{check.status}{why}{told}")
