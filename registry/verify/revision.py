"""The published revision a run names, read for its replay (`replay.skill_folder`).

Any commit of a repo can be fetched by its sha: an open pull request's on someone else's
skill repo too. So the revision must be a published version's, the one the run files itself
under, before its files are read; else a run made against files the owner never published
would be checked against them, pass, and be filed under the owner's version.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry.errors import HubskillsError
from registry.results.runs import RunManifest

if TYPE_CHECKING:
    from registry.stores.base import VersionInfo

_WHY = "results are checked against the files a published version holds"


class Unusable(Exception):
    """The revision cannot be replayed against: `mismatch` when the run's own fields disagree
    with the registry (a `mismatch`), else it could not be read (`not replayable`)."""

    def __init__(self, why: str, *, mismatch: bool = False) -> None:
        super().__init__(why)
        self.why, self.mismatch = why, mismatch


def fetch_revision(stack: ExitStack, manifest: RunManifest,
                   open_store: Callable[[], Any] | None) -> tuple[Path, str]:
    """The run's revision read into a temp folder `stack` holds, and how to name where it came
    from (`acme/x@1a2b3c4d5e6f (hub registry)`).

    Raises:
        Unusable: no registry, not the published version the run names, or not readable.
    """
    repo, sha = str(manifest.skill_repo), str(manifest.skill_revision)
    if open_store is None:
        raise Unusable(f"the run names revision {sha[:12]} of {repo}, and no registry was given "
                       "to read it from")
    dest = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hubskills-verify-")))
    try:
        store = open_store()
        _check_published(store.versions(repo), manifest)
        store.fetch(repo, sha, dest / "skill", count=False)
    except HubskillsError as err:
        raise Unusable(f"revision {sha[:12]} of {repo} cannot be read from the registry: "
                       f"{err.message}") from err
    return dest / "skill", f"{repo}@{sha[:12]} ({store.kind} registry)"


def _check_published(versions: list[VersionInfo], manifest: RunManifest) -> None:
    """The revision a run names must be a published version's, the one it names (`versions`:
    the repo's).

    Raises:
        Unusable: another version's revision (a mismatch), or no version's at all.
    """
    sha, named = str(manifest.skill_revision), manifest.skill_version
    tags = [v.version for v in versions if v.sha == sha]
    if named is not None and named not in tags:
        at = next((v.sha[:12] for v in versions if v.version == named), None)
        raise Unusable(
            f"the run files itself under {manifest.skill_repo} v{named}, but names revision "
            f"{sha[:12]}, " + (f"and v{named} is revision {at}" if at else
                               f"and {manifest.skill_repo} has no v{named}") + f": {_WHY}",
            mismatch=True)
    if not tags:
        raise Unusable(f"revision {sha[:12]} of {manifest.skill_repo} is no published version "
                       f"of it: {_WHY}")
