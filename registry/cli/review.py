"""`hubskills review`: the results dataset's owner replays and merges pending submissions."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from registry.cli import _output as out

if TYPE_CHECKING:
    from registry.verify.admission import SubmissionCheck


@click.group("review")
def review_group() -> None:
    """Review, comment on and admit the runs submitted as pull requests.

    A pull request on the results dataset is admitted whole or not at all: it may only add
    new run files, each replayed without calling any model (within HUBSKILLS_REPLAY_* and
    HUBSKILLS_REVIEW_* bounds), the result recorded and said once on the pull request.
    Anything else (a record, an edited or deleted file, another path) refuses all of it.

    \b
    Examples:
      hubskills review pending              # review, record, comment on each PR
      hubskills review merge 3              # admit PR #3 if all runs replay
    """


@review_group.command("pending")
@click.option("--comment/--no-comment", default=True, show_default=True,
              help="Post each result on its pull request (once per version of its rows).")
@click.option("--json", "as_json", is_flag=True, help="The results as JSON.")
def review_pending(comment: bool, as_json: bool) -> None:
    """Review the open pull requests (at most HUBSKILLS_REVIEW_MAX_PRS not yet reviewed)."""
    from registry.config import Settings
    from registry.registries import get_store
    from registry.verify.admission import replay_pending

    settings = Settings.from_env()
    with _on_the_hub("review pending"):
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
    """Admit pull request PR_NUMBER after reviewing it again: its replayed run files are
    committed to the results dataset as replayed, and the pull request closed."""
    from registry.config import Settings
    from registry.registries import get_store
    from registry.verify.admission import merge_submission

    settings = Settings.from_env()
    with _on_the_hub(f"review merge {number}"):
        checks = merge_submission(get_store(settings, "hub"), settings, number)
    for check in checks:
        _render(check)
    out.result(f"Merged pull request #{number}: its run files are on main as replayed, and "
               "the pull request is closed.")


@contextlib.contextmanager
def _on_the_hub(command: str) -> Iterator[None]:
    """Pull requests live on the Hub only: the Hub out of reach says so, not the generic
    `--registry local` way on (review has no such option; the local registry has no PRs)."""
    from registry.errors import RegistryUnavailable

    try:
        yield
    except RegistryUnavailable as err:
        raise RegistryUnavailable(f"{err.message}: `{command}` reads the results dataset's "
                                  "pull requests, which only the Hub has",
                                  hint=f"hubskills {command}  # again online, with HF_TOKEN "
                                       "set (hubskills doctor checks both)") from err


def _as_dict(check: SubmissionCheck) -> dict[str, object]:
    from dataclasses import asdict

    return asdict(check)


def _render(check: SubmissionCheck) -> None:
    why = f": {escape(_plain(check.first_problem))}" if check.first_problem else ""
    told = " (commented)" if check.commented else ""
    run = f" {escape(check.run_id)}" if check.run_id else ""
    out.result(f"#{check.num} {escape(_plain(check.author))}{run}: {check.status}{why}{told}")


def _plain(text: str) -> str:
    """A submitter's text on one line, its control characters escaped."""
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")
