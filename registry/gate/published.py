"""Which published version the CI gate compares a changed skill with (`find_published`).

A skill is looked up by the name it had at the base commit, and only the registry is asked
(no model call), in this order:

- with `--namespace NS`, only `NS/<name>`: the team said where its skills are published;
- else `<namespace>/<name>` (`HUBSKILLS_NAMESPACE`, or the token's user on the Hub), the example
  skills' `hubskills/<name>`, then a search for any other skill of that name (a team publishing
  as `acme/csv-clean`): the one found is compared with, and said, so the reviewer sees which;
  two or more are not guessed between (each is some team's skill of that name), and said.

Unlike `install.identity.identify`, which names the version a folder *is*, the content need not
match: what differs from the published version is the change under review. Whatever the look
finds or not is said (`Lookup.said`), never a silent "-".
"""

from __future__ import annotations

from dataclasses import dataclass

from registry.errors import HubskillsError, MissingCredentials, SkillNotFound
from registry.format.version_ref import SkillVersionRef
from registry.stores.base import SkillStore
from registry.stores.refs import check_repo_id
from registry.stores.seed import SEED_NAMESPACE

NONE_FOUND = "none found"
NOT_GUESSED = "not guessed"
_SAME_NAME_LIMIT = 50  # skills a search may list for a name; each of that name costs an `info`
NAMESPACE_HINT = "hubskills ci --namespace NS  # where your skills are published: acme for " \
                 "acme/csv-clean"


@dataclass(frozen=True)
class Lookup:
    """The published version found (None: none is compared with), and what to tell the
    reviewer about the look: how it was found, or why none is compared with (None: found where
    it is expected, nothing to say). ``short`` is the table's cell when none was found."""

    ref: SkillVersionRef | None
    said: str | None = None
    short: str = "-"


def check_namespace(namespace: str) -> str:
    """``namespace`` when it can be the namespace of a skill id (`NS` of `NS/name`).

    Raises:
        HubskillsError: it cannot (a slash, `..`, nothing at all).
    """
    try:
        check_repo_id(f"{namespace}/name")
    except HubskillsError:
        raise HubskillsError(f"--namespace '{namespace}' is not a namespace (the NS of a skill "
                             "id NS/NAME: letters, digits, '.', '_' and '-')",
                             hint=NAMESPACE_HINT) from None
    return namespace


def find_published(store: SkillStore, name: str, *, namespace: str | None = None) -> Lookup:
    """The newest published version of the skill named ``name`` (see the module docstring).

    Raises:
        HubskillsError: the registry failed.
    """
    if namespace is not None:
        candidates = [f"{namespace}/{name}"]
    else:
        try:
            mine = [f"{store.default_namespace()}/{name}"]
        except MissingCredentials:  # reading needs no token: the examples' namespace is known
            mine = []
        candidates = list(dict.fromkeys([*mine, f"{SEED_NAMESPACE}/{name}"]))
    for repo in candidates:
        if (found := _newest(store, repo)) is not None:
            return Lookup(found)
    looked = ", ".join(candidates)
    if namespace is not None:
        return Lookup(None, f"no published version found (looked for {looked})", NONE_FOUND)
    listed = sorted({info.repo for info in store.search(name, limit=_SAME_NAME_LIMIT)
                     if info.repo.rsplit("/", 1)[-1] == name and info.repo not in candidates})
    others = {repo: ref for repo in listed if (ref := _newest(store, repo)) is not None}
    if len(others) == 1:
        [(repo, ref)] = others.items()
        return Lookup(ref, f"compared with {repo}, the one published skill named {name} (found "
                           f"by a search; --namespace {repo.split('/')[0]} names it)")
    if others:
        return Lookup(None, f"{len(others)} published skills are named {name} "
                            f"({', '.join(others)}): the gate does not guess which one this "
                            "is; name its namespace: hubskills ci --namespace NS", NOT_GUESSED)
    return Lookup(None, f"no published version found (looked for {looked} and any other skill "
                        f"named {name})", NONE_FOUND)


def _newest(store: SkillStore, repo: str) -> SkillVersionRef | None:
    """``repo``'s newest version (None: no such skill, or no version of it)."""
    try:
        info = store.info(repo)
    except SkillNotFound:
        return None
    if not info.versions:
        return None
    newest = info.versions[0]
    return SkillVersionRef(repo, newest.sha, newest.version)
