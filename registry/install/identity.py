"""Which published skill version a folder is (`identify`), so its results belong to that version.

A folder is identified by, in order: the marker of a pulled folder (when its content is
unchanged), or a content hash equal to the latest published revision of a candidate repo
(`--repo`, else `<namespace>/<name>`, the example skills' `hubskills/<name>`, then any other
repo of that name a search lists), read from that repo's card.
A folder that matches nothing has no version: its results would be orphans.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from registry.errors import HubskillsError, SkillNotFound
from registry.format.skill import content_hash, load_skill
from registry.format.version_ref import SkillVersionRef
from registry.install.lockfile import read_marker

if TYPE_CHECKING:  # the stores are imported by `identify` once there is one to ask
    from registry.stores.base import SkillStore


def from_marker(folder: Path, repo: str | None = None) -> SkillVersionRef | None:
    """The version a pulled folder's marker records, if its content is unchanged."""
    marker = read_marker(folder)
    if marker is None or marker.content_hash != content_hash(folder):
        return None
    if repo is not None and repo != marker.repo:
        return None
    return SkillVersionRef(marker.repo, marker.sha, marker.version, "the pulled folder's marker")


def identify(folder: Path, store: SkillStore | None, *,
             repo: str | None = None) -> SkillVersionRef | None:
    """The published version ``folder`` is (see the module docstring); None when nothing matches.

    Without a ``store`` only the marker is read (no registry call).

    Raises:
        HubskillsError: ``repo`` is not a valid repo id, or the registry failed, or the
            folder is the latest version of several repos of its name (none is guessed).
    """
    if repo is not None:
        from registry.stores.refs import check_repo_id

        check_repo_id(repo)
    found = from_marker(folder, repo)
    if found is not None or store is None:
        return found
    from registry.stores.card import parse_card
    from registry.stores.seed import SEED_NAMESPACE

    digest, name = content_hash(folder), load_skill(folder).name
    candidates = [repo] if repo else list(dict.fromkeys(
        [f"{store.default_namespace()}/{name}", f"{SEED_NAMESPACE}/{name}"]))
    found = _matching(store, candidates, digest, parse_card)
    if found is not None or repo is not None:
        return found
    # published under another namespace (`publish --repo acme/NAME`): a walk's `eval --push`
    # then named no version, and its hint would have published a second skill
    others = [info.repo for info in store.search(name, limit=_SAME_NAME_LIMIT)
              if info.repo.rsplit("/", 1)[-1] == name and info.repo not in candidates]
    found_all = [ref for repo_id in sorted(others)
                 if (ref := _matching(store, [repo_id], digest, parse_card)) is not None]
    if len(found_all) > 1:  # a copy republished under another namespace: never guess (a review)
        listed = ", ".join(ref.repo for ref in found_all)
        raise HubskillsError(f"{folder} is the latest published version of {len(found_all)} "
                             f"skills: {listed}; hubskills does not guess which is yours",
                             hint=f"hubskills eval {folder} --push --repo REPO  # REPO: "
                                  "the one of those you publish")
    return found_all[0] if found_all else None


_SAME_NAME_LIMIT = 50  # skills of one name a search may list; each costs one `info`


def _matching(store: SkillStore, candidates: list[str], digest: str,
              parse_card: Callable[[str], dict[str, Any]]) -> SkillVersionRef | None:
    """The first of `candidates` whose latest published revision has content `digest`."""
    for candidate in candidates:
        try:
            info = store.info(candidate)
        except SkillNotFound:
            continue
        block = parse_card(info.card).get("hubskills")
        if isinstance(block, dict) and block.get("content_hash") == digest:
            version = str(block["version"]) if block.get("version") else None
            sha = store.resolve(candidate, version).sha
            return SkillVersionRef(candidate, sha, version,
                                   f"the content of {candidate} v{version}")
    return None


def unidentified_hint(folder: Path) -> str:
    """The next command for a folder that is no published version."""
    return (f"hubskills publish {folder}  # then eval the published version, or: "
            f"hubskills eval {folder} --push --repo NS/NAME")
