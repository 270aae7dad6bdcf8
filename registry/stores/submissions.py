"""What an open pull request on the results dataset would change: its files, as values.

A pull request's changes are read three ways, from file listings only (no file is read): the
pull request's head commit, the commit it branched from (`base`: the newest commit of its
history that `main` also has) and `main` now. A path counts as changed by the pull request only
where the head differs from the base and from `main` (a file `main` gained since the pull
request branched is not one it deletes; a file it holds exactly as `main` does changes
nothing). Storage only reports them: what a submission may change is decided in
`registry.verify` (the gate), never here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from registry.hub import PullRequest, RemoteFile

ChangeKind = Literal["adds", "changes", "deletes"]


@dataclass(frozen=True)
class Change:
    """One path a pull request changes: how, and (added or changed) its size and blob id."""

    path: str
    kind: ChangeKind
    size: int = 0
    blob_id: str | None = None


@dataclass(frozen=True)
class Submission:
    """An open pull request as it stands at commit `head`: what it changes relative to `main`
    (`changes`, by path), and the paths `main` holds. `branched` is False when the commit it
    branched from was not found in the history read (then `changes` is empty)."""

    pr: PullRequest
    head: str
    changes: list[Change] = field(default_factory=list)
    on_main: frozenset[str] = frozenset()
    branched: bool = True


def merge_base(head_history: list[str], main_history: list[str]) -> str | None:
    """The newest commit of the pull request's history (newest first) that `main`'s history
    also holds; None when none of those read is."""
    on_main = set(main_history)
    return next((commit for commit in head_history if commit in on_main), None)


def changes_of(head: list[RemoteFile], base: list[RemoteFile],
               main: list[RemoteFile]) -> list[Change]:
    """What the head commit changes relative to its base and to `main` (module docstring),
    sorted by path."""
    at_head = {f.path: f for f in head}
    at_base = {f.path: f.blob_id for f in base}
    on_main = {f.path: f.blob_id for f in main}
    found: list[Change] = []
    for path, entry in at_head.items():
        if on_main.get(path, "") == entry.blob_id:
            continue  # main holds exactly this file: nothing to change
        if path not in at_base:
            kind: ChangeKind = "changes" if path in on_main else "adds"
        elif at_base[path] != entry.blob_id:
            kind = "changes"
        else:
            continue  # as it branched; only main changed it since
        found.append(Change(path, kind, entry.size, entry.blob_id))
    found += [Change(path, "deletes") for path in at_base
              if path not in at_head and path in on_main]
    return sorted(found, key=lambda c: c.path)
