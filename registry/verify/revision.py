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
    from registry.verify.replay import Verification


def fetch_revision(stack: ExitStack, manifest: RunManifest, report: Verification,
                   open_store: Callable[[], Any] | None) -> Path | None:
    """The run's revision read into a temp folder `stack` holds (None, with the reason in
    `report`: no registry, not the published version it names, or not readable)."""
    repo, sha = str(manifest.skill_repo), str(manifest.skill_revision)
    if open_store is None:
        report.cannot(f"the run names revision {sha[:12]} of {repo}, and no registry was given "
                      "to read it from")
        return None
    dest = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hubskills-verify-")))
    try:
        store = open_store()
        if not _a_published_version(store.versions(repo), manifest, report):
            return None
        store.fetch(repo, sha, dest / "skill", count=False)
    except HubskillsError as err:
        report.cannot(f"revision {sha[:12]} of {repo} cannot be read from the registry: "
                      f"{err.message}")
        return None
    report.skill_source = f"{repo}@{sha[:12]} ({store.kind} registry)"
    return dest / "skill"


def _a_published_version(versions: list[VersionInfo], manifest: RunManifest,
                         report: Verification) -> bool:
    """Whether the revision a run names is a published version's, the one it names: any
    commit of a repo can be fetched by its sha, an open pull request's on someone else's skill
    too, so a run at one would be checked against files its owner never published and filed
    under their version (`versions`: the repo's `VersionInfo`s)."""
    sha, named = str(manifest.skill_revision), manifest.skill_version
    tags = [v.version for v in versions if v.sha == sha]
    if named is not None and named not in tags:
        at = next((v.sha[:12] for v in versions if v.version == named), None)
        report.problems.append(
            f"the run files itself under {manifest.skill_repo} v{named}, but names revision "
            f"{sha[:12]}, " + (f"and v{named} is revision {at}" if at else
                               f"and {manifest.skill_repo} has no v{named}")
            + ": results are checked against the files a published version holds")
        return False
    if not tags:
        report.cannot(f"revision {sha[:12]} of {manifest.skill_repo} is no published version "
                      "of it: results are checked against the files a published version holds")
        return False
    return True
