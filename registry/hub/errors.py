"""The one Hub error translator: `huggingface_hub` errors in, typed `HubError`s out.

`translate(...)` wraps every Hub call (`HubClient` uses it for each one) and raises a typed
error carrying the repo id, its type, the revision and the HTTP status, chained with
`raise ... from err`. Code that cares about one condition catches its type (`RepoNotFound`,
`StaleParent`, `Unreachable`...). At the edge, `user_errors()` maps whatever is left to the
`HubskillsError` a user should see, with a hint naming the next command.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TypedDict

from registry._install import login_hint
from registry.errors import (
    HubskillsError,
    MissingCredentials,
    RegistryError,
    RegistryUnavailable,
    SkillNotFound,
    UnsafeSkill,
    VersionNotFound,
)

RETRY_HINT = "retry later (HUBSKILLS_DEBUG=1 shows details)"


class HubError(RegistryError):
    """A Hub call failed: which repo (`repo_id`, `repo_type`, `revision`) and how (`status`)."""

    def __init__(self, message: str, *, endpoint: str, repo_id: str | None = None,
                 repo_type: str = "model", revision: str | None = None,
                 status: int | None = None) -> None:
        super().__init__(message, hint=RETRY_HINT)
        self.endpoint, self.repo_id, self.repo_type = endpoint, repo_id, repo_type
        self.revision, self.status = revision, status


class RepoNotFound(HubError):
    """No such repository (or it is private and the token cannot see it)."""


class RevisionNotFound(HubError):
    """The repository has no such branch, tag or commit."""


class EntryNotFound(HubError):
    """The revision has no such file."""


class NotCached(HubError):
    """Offline (or unreachable), and what was asked for is not in the HF cache."""


class Unreachable(HubError):
    """The endpoint could not be reached (a transport error: DNS, connection, timeout)."""


class AuthFailed(HubError):
    """401 or 403: the token is missing, invalid, or may not do this."""


class Conflict(HubError):
    """409: the thing exists already (a tag), or another commit is in progress."""


class StaleParent(HubError):
    """412: the branch moved since the commit's `parent_commit` was read."""


class RefusedPath(HubError):
    """huggingface_hub refused a path that would leave its cache folder."""


class _Where(TypedDict):
    """Which repo a Hub call was about: the keyword arguments every `HubError` takes."""

    endpoint: str
    repo_id: str | None
    repo_type: str
    revision: str | None


@contextlib.contextmanager
def translate(endpoint: str, repo_id: str | None = None, *, repo_type: str = "model",
              revision: str | None = None) -> Iterator[None]:
    """Re-raise any `huggingface_hub` or transport error of the block as a typed `HubError`."""
    from huggingface_hub import errors as hf
    from huggingface_hub.utils import httpx

    where = _Where(endpoint=endpoint, repo_id=repo_id, repo_type=repo_type, revision=revision)
    try:
        yield
    except hf.RepositoryNotFoundError as err:
        raise RepoNotFound(f"no {repo_type} repo '{repo_id}' on {endpoint}", status=_status(err),
                           **where) from err
    except hf.RevisionNotFoundError as err:
        raise RevisionNotFound(f"{repo_id} has no revision '{revision}' on {endpoint}",
                               status=_status(err), **where) from err
    except hf.RemoteEntryNotFoundError as err:
        raise EntryNotFound(f"a file is missing from {repo_id} on {endpoint}",
                            status=_status(err), **where) from err
    except (hf.OfflineModeIsEnabled, hf.LocalEntryNotFoundError,
            hf.CachedRepoTreeNotFoundError) as err:
        raise NotCached(f"{repo_id}@{revision or 'main'} is not in the HF cache, and {endpoint} "
                        "cannot be asked (offline or unreachable)", **where) from err
    except hf.HfHubHTTPError as err:
        raise _http_error(err, where) from err
    except httpx.TransportError as err:
        raise Unreachable(f"cannot reach {endpoint}: the Hub is unreachable "
                          f"({type(err).__name__})", **where) from err


def _status(err: BaseException) -> int | None:
    return getattr(getattr(err, "response", None), "status_code", None)


def _http_error(err: BaseException, where: _Where) -> HubError:
    status = _status(err)
    first = (str(err) or type(err).__name__).splitlines()[0]
    kind = {401: AuthFailed, 403: AuthFailed, 409: Conflict, 412: StaleParent}.get(
        status or 0, HubError)
    return kind(f"{where['endpoint']} answered {status}: {first}", status=status, **where)


def user_error(err: HubError) -> HubskillsError:
    """The error a user sees for `err`, with a hint naming the next command."""
    repo, endpoint = err.repo_id or "NAME", err.endpoint
    if isinstance(err, RepoNotFound) and err.repo_type == "dataset":
        return RegistryError(f"no results dataset '{repo}' on {endpoint}",
                             hint="set HUBSKILLS_RESULTS_REPO=ns/name")
    if isinstance(err, RepoNotFound):
        return SkillNotFound(f"no skill '{repo}' on {endpoint}",
                             hint=f"hubskills search {repo.split('/')[-1]}  # find the exact id")
    if isinstance(err, RevisionNotFound):
        return VersionNotFound(err.message, hint=f"hubskills versions {repo}")
    if isinstance(err, EntryNotFound):
        return RegistryError(err.message, hint=f"hubskills versions {repo}")
    if isinstance(err, NotCached | Unreachable):
        return RegistryUnavailable(err.message, hint="retry online, or add --registry local")
    if isinstance(err, AuthFailed):
        return MissingCredentials(f"{err.message} (the token is missing, invalid, or cannot "
                                  f"write to {repo})", variable="HF_TOKEN", hint=login_hint())
    if isinstance(err, RefusedPath):
        return UnsafeSkill(err.message, hint="the repository is malformed or hostile")
    return RegistryError(err.message, hint=RETRY_HINT)


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    """The edge: any `HubError` of the block leaves as the `HubskillsError` for users."""
    try:
        yield
    except HubError as err:
        raise user_error(err) from err
