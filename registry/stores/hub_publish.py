"""Publishing to the Hub: the repo's `main` as it is, and one commit replacing its files.

The commit is guarded by `parent_commit`: when `main` moved meanwhile (412), or the Hub is busy
(409, 429, 5xx), `main` is read again (someone may have published this version meanwhile) and
the commit retried, `ATTEMPTS` times at most.
"""

from __future__ import annotations

import logging
from pathlib import Path

from registry.errors import VersionExists
from registry.hub import HubClient, HubError, RepoInfo, RepoNotFound, StaleParent
from registry.hub.client import ATTEMPTS, RETRY_STATUSES, backoff
from registry.stores.files import RESERVED_ROOT_FILES

log = logging.getLogger(__name__)


def main_head(client: HubClient, repo: str, tag: str, skill_dir: Path) -> RepoInfo | None:
    """`main` and its files (None for a new repo or an empty one).

    Raises:
        VersionExists: `tag` exists already (versions are immutable).
    """
    try:
        refs = client.refs(repo)
    except RepoNotFound:
        return None
    if tag in refs.tags:
        raise VersionExists(f"{repo} {tag} already exists; versions are immutable",
                            hint=f"hubskills publish {skill_dir} --bump patch")
    if refs.main is None:
        return None
    return RepoInfo(repo, refs.main, client.tree(repo, None, refs.main))


def commit_files(client: HubClient, repo: str, files: dict[str, bytes], head: RepoInfo | None,
                 message: str, *, tag: str, skill_dir: Path, private: bool) -> str:
    """One commit replacing the repo's files with `files` (creating the repo when `head` is
    None); returns its sha. A moved or busy `main` is read again and the commit retried."""
    for attempt in range(ATTEMPTS):
        if head is None:
            client.create_repo(repo, private=private)
        gone = [f.path for f in head.files if f.path not in files
                and f.path not in RESERVED_ROOT_FILES] if head else []
        try:
            return client.commit(repo, files, deletes=gone, message=message,
                                 parent=head.sha if head else None)
        except HubError as err:  # main moved (412), or busy (409, 429, 5xx): try again
            retryable = isinstance(err, StaleParent) or err.status in RETRY_STATUSES
            if not retryable or attempt == ATTEMPTS - 1:
                raise
            log.info("commit to %s answered %s; retrying", repo, err.status)
        backoff(attempt)
        head = main_head(client, repo, tag, skill_dir)
    raise AssertionError("unreachable")
