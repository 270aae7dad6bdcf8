"""People's answers to a blind review, as files of the results dataset beside the runs.

`feedback/<run_id>/<reviewer>.jsonl`: one file per run and reviewer (a reviewer's answers are
rewritten whole as they grow, so two reviewers never write the same file). They live outside
`data/evals/`, so the `evals` split, the leaderboard, the badges and every replay never read
them: feedback is people's preference, not a measured result. `registry.review` gives the
lines their meaning; here they are bytes.
"""

from __future__ import annotations

import re
from collections.abc import Set
from typing import TYPE_CHECKING, cast

from registry._io import atomic_write_bytes
from registry.errors import HubskillsError

if TYPE_CHECKING:
    from registry.stores.base import SkillStore
    from registry.stores.hub_results import HubResults
    from registry.stores.local_results import LocalResults

FEEDBACK_DIR = "feedback"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def feedback_path(run_id: str, reviewer: str) -> str:
    """`feedback/<run_id>/<reviewer>.jsonl`.

    Raises:
        HubskillsError: the run id or the reviewer's name could name another path.
    """
    for what, value in (("run id", run_id), ("reviewer name", reviewer)):
        if not _NAME.match(value) or ".." in value:
            raise HubskillsError(f"'{value}' is not a usable {what} for a feedback file",
                                 hint="hubskills runs")
    return f"{FEEDBACK_DIR}/{run_id}/{reviewer}.jsonl"


def put_feedback(store: SkillStore, run_id: str, reviewer: str, data: bytes) -> str:
    """Write `reviewer`'s answers on run `run_id` (the whole file) into `store`'s results
    dataset; returns its path. The store's own credentials write it.

    Raises:
        HubskillsError: an unusable name, or the store refused the write.
    """
    path = feedback_path(run_id, reviewer)
    results = store.results
    if store.kind == "hub":
        from registry.hub import user_errors, with_retry

        hub = cast("HubResults", results)  # a "hub" store's dataset (a fallback's: its primary's)
        client, repo = hub.client, hub.repo()
        with user_errors():
            client.create_repo(repo, repo_type="dataset")
            with_retry(lambda: client.commit(repo, {path: data}, repo_type="dataset",
                                             message=f"Feedback on run {run_id} by {reviewer}"))
        return path
    results.source()  # a local store seeds itself on first use
    atomic_write_bytes(cast("LocalResults", results).dataset_dir / path, data)  # not a hub's
    return path


def read_feedback(store: SkillStore, run_id: str | None = None, *,
                  runs: Set[str] | None = None) -> dict[str, bytes]:
    """The feedback files (path -> bytes) of run `run_id`, or of every run (of `runs` only,
    when given: the others are listed, not read); {} when none.

    Raises:
        HubskillsError: the dataset could not be read.
    """
    prefix = FEEDBACK_DIR if run_id is None else feedback_path(run_id, "x").rsplit("/", 1)[0]
    results = store.results
    if store.kind == "hub":
        from registry.hub import EntryNotFound, RepoNotFound, user_errors

        hub = cast("HubResults", results)  # a "hub" store's dataset (a fallback's: its primary's)
        client, repo = hub.client, hub.repo()
        with user_errors():
            try:
                head = client.repo_info(repo, repo_type="dataset").sha
                listed = client.tree(repo, prefix, head, repo_type="dataset")
            except (RepoNotFound, EntryNotFound):
                return {}
            return {e.path: client.download(repo, e.path, revision=head,
                                            repo_type="dataset").read_bytes()
                    for e in sorted(listed, key=lambda e: e.path)
                    if e.path.endswith(".jsonl") and _wanted(e.path, runs)}
    results.source()
    base = cast("LocalResults", results).dataset_dir  # not a hub store's
    return {path: p.read_bytes() for p in sorted((base / prefix).rglob("*.jsonl"))
            if _wanted(path := p.relative_to(base).as_posix(), runs)}


def _wanted(path: str, runs: Set[str] | None) -> bool:
    parts = path.split("/")
    return runs is None or (len(parts) == 3 and parts[1] in runs)
