"""`HubStore`: skills as Hugging Face model repos, eval results as a dataset repo.

The only library module that imports `huggingface_hub`; every Hub error is translated into
ours here (`_errors`). A skill is the model repo `ns/name`: publish is one `upload_folder`
commit guarded by `parent_commit` (retried on a stale parent) of the skill's files plus the
generated card, then a `v<version>` tag on that commit. Results go to one dataset repo
(`settings.results_repo`, else `<namespace or your user>/hubskills-evals`) as one immutable
file per run, added by `create_commit` without a parent (appends never conflict), with bounded
retries on 409/429/5xx and transport errors. `HfApi` gets the endpoint and token explicitly.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from huggingface_hub import CommitOperationAdd, HfApi, get_token
from huggingface_hub.errors import (
    HfHubHTTPError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.hf_api import ModelInfo, RepoFile
from huggingface_hub.utils import httpx

from registry.config import Settings
from registry.errors import (
    MissingCredentials,
    RegistryError,
    SkillNotFound,
    VersionExists,
    VersionNotFound,
)
from registry.evaluation.results import ResultRow, RunManifest, iter_rows, rows_to_jsonl
from registry.format.skill import content_hash, load_skill
from registry.stores.base import (
    CARD_FILE,
    SORTS,
    LiftKey,
    Published,
    Resolved,
    SizeBudget,
    SkillInfo,
    VersionInfo,
    check_relpath,
    check_repo_id,
    is_card_path,
    normalize_version,
    resolve_ref,
    skill_files,
    sort_infos,
    tag_for,
    version_tags,
    write_file,
)
from registry.stores.card import SKILL_TAG, card_fields, parse_card, render_card, with_evals
from registry.stores.dataset import (
    DEFAULT_RESULTS_NAME,
    RESULTS_DIR,
    card_is_current,
    dataset_card,
    matches_skill,
    results_path,
    stamp_rows,
)
from registry.stores.summary import latest_summary, mean_lift

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)
T = TypeVar("T")
RETRY_STATUSES = frozenset({409, 429, 500, 502, 503, 504})
ATTEMPTS = 5
MAX_LISTED = 1000
LOGIN_HINT = "hf auth login  or  export HF_TOKEN=..."


def _status(err: HfHubHTTPError) -> int | None:
    response = getattr(err, "response", None)
    return getattr(response, "status_code", None)


def _backoff(attempt: int) -> None:
    time.sleep(min(0.25 * 2**attempt, 4.0))


def with_retry(call: Callable[[], T], *, statuses: frozenset[int] = RETRY_STATUSES,
               attempts: int = ATTEMPTS) -> T:
    """Call `call`, retrying with backoff on the given HTTP statuses and transport errors."""
    for attempt in range(attempts):
        try:
            return call()
        except HfHubHTTPError as err:
            if _status(err) not in statuses or attempt == attempts - 1:
                raise
            log.info("Hub answered %s; retrying (%d/%d)", _status(err), attempt + 1, attempts)
        except httpx.TransportError:
            if attempt == attempts - 1:
                raise
        _backoff(attempt)
    raise AssertionError("unreachable")


class HubStore:
    """A `SkillStore` on the Hugging Face Hub (see the module docstring)."""

    kind = "hub"

    def __init__(self, settings: Settings, api: HfApi | None = None) -> None:
        self.settings = settings
        self.api = api or HfApi(endpoint=settings.hf_endpoint, token=settings.hf_token)
        self.cache_dir = settings.home / "hub-cache"
        self._results_repo = settings.results_repo
        self._dataset_ready = False

    # -- plumbing ---------------------------------------------------------------------------

    def _online(self) -> None:
        if self.settings.offline:
            raise RegistryError("the Hub registry is not available offline (HF_HUB_OFFLINE=1)",
                                hint="add --registry local, or unset HF_HUB_OFFLINE")

    def _write_token(self) -> None:
        self._online()
        if not (self.settings.hf_token or self.api.token or get_token()):
            raise MissingCredentials("writing to the Hub needs a Hugging Face token",
                                     variable="HF_TOKEN", hint=LOGIN_HINT)

    @contextlib.contextmanager
    def _errors(self, repo: str | None, what: str = "skill") -> Iterator[None]:
        """Translate Hub and transport errors into hubskills errors with hints."""
        endpoint = self.settings.hf_endpoint
        try:
            yield
        except RepositoryNotFoundError as err:
            if what == "dataset":
                raise RegistryError(f"no results dataset '{repo}' on {endpoint}",
                                    hint="set HUBSKILLS_RESULTS_REPO=ns/name") from err
            name = (repo or "NAME").split("/")[-1]
            raise SkillNotFound(f"no skill '{repo}' on {endpoint}",
                                hint=f"hubskills search {name}") from err
        except RevisionNotFoundError as err:
            raise VersionNotFound(f"{repo} has no such revision on {endpoint}",
                                  hint=f"hubskills versions {repo}") from err
        except RemoteEntryNotFoundError as err:
            raise RegistryError(f"a file is missing from {repo} on {endpoint}",
                                hint=f"hubskills versions {repo}") from err
        except (OfflineModeIsEnabled, LocalEntryNotFoundError) as err:
            raise RegistryError(f"cannot reach {endpoint}: offline mode, or not cached",
                                hint="retry online, or add --registry local") from err
        except HfHubHTTPError as err:
            status = _status(err)
            if status in (401, 403):
                raise MissingCredentials(
                    f"{endpoint} answered {status}: the token is missing, invalid, or cannot "
                    f"write to {repo or 'the repository'}", variable="HF_TOKEN",
                    hint=LOGIN_HINT) from err
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise RegistryError(f"{endpoint} answered {status}: {first}",
                                hint="retry later (HUBSKILLS_DEBUG=1 shows details)") from err
        except httpx.TransportError as err:
            raise RegistryError(f"cannot reach {endpoint} ({type(err).__name__})",
                                hint="check the network, or add --registry local") from err

    def check_writable(self) -> None:
        """Raise `MissingCredentials` without a token, `RegistryError` offline (no call)."""
        self._write_token()

    def default_namespace(self) -> str:
        """`settings.namespace`, else the token's user name."""
        if self.settings.namespace:
            return self.settings.namespace
        self._write_token()
        with self._errors(None):
            return str(self.api.whoami()["name"])

    # -- skills -----------------------------------------------------------------------------

    def publish(self, skill_dir: Path, *, repo: str, version: str, private: bool = False,
                message: str | None = None) -> Published:
        """Commit the skill plus its card (guarded by `parent_commit`), then tag the commit.

        Raises:
            MissingCredentials: no token.
            VersionExists: the tag exists already (checked first, and again on a lost race).
        """
        self._write_token()
        check_repo_id(repo)
        skill = load_skill(skill_dir)
        files = skill_files(skill)
        budget = SizeBudget()
        for rel, full in files:
            budget.take(rel, full.stat().st_size)
        version, tag = normalize_version(version), tag_for(version)
        with self._errors(repo), tempfile.TemporaryDirectory(prefix="hubskills-") as tmp:
            self._refuse_tag(repo, tag, skill_dir)
            self.api.create_repo(repo, private=private, exist_ok=True)
            staging = Path(tmp)
            for rel, full in files:
                write_file(staging, rel, full.read_bytes())
            card = render_card(skill, repo=repo, version=version,
                               content_hash=content_hash(staging),
                               summary=latest_summary(self.results_frame(), repo))
            (staging / CARD_FILE).write_text(card, encoding="utf-8")
            sha = self._commit_folder(repo, staging, message or f"Publish {tag}", tag, skill_dir)
            self._create_tag(repo, tag, sha, skill_dir)
        return Published(repo, version, tag, sha, f"{self.settings.hf_endpoint}/{repo}")

    def _refuse_tag(self, repo: str, tag: str, skill_dir: Path) -> None:
        try:
            tags = {t.name for t in self.api.list_repo_refs(repo).tags}
        except RepositoryNotFoundError:
            return
        if tag in tags:
            raise VersionExists(f"{repo} {tag} already exists; versions are immutable",
                                hint=f"hubskills publish {skill_dir} --bump patch")

    def _commit_folder(self, repo: str, staging: Path, message: str, tag: str,
                       skill_dir: Path) -> str:
        """One commit replacing the repo's files with `staging`; a stale parent is retried."""
        for attempt in range(ATTEMPTS):
            head = self.api.model_info(repo).sha
            try:
                info = self.api.upload_folder(
                    repo_id=repo, folder_path=staging, commit_message=message,
                    parent_commit=head, delete_patterns="*")
                return info.oid
            except HfHubHTTPError as err:
                if _status(err) not in RETRY_STATUSES | {412} or attempt == ATTEMPTS - 1:
                    raise
                log.info("commit to %s answered %s; retrying", repo, _status(err))
            _backoff(attempt)
            self._refuse_tag(repo, tag, skill_dir)  # someone may have published meanwhile
        raise AssertionError("unreachable")

    def _create_tag(self, repo: str, tag: str, sha: str, skill_dir: Path) -> None:
        try:
            self.api.create_tag(repo, tag=tag, revision=sha)
        except HfHubHTTPError as err:
            if _status(err) == 409:
                raise VersionExists(f"{repo} {tag} was created concurrently; versions are "
                                    "immutable", hint=f"hubskills publish {skill_dir} "
                                    "--bump patch") from err
            raise

    def _refs(self, repo: str) -> tuple[dict[str, str], str | None]:
        refs = self.api.list_repo_refs(repo)
        main = next((b.target_commit for b in refs.branches if b.name == "main"), None)
        return {t.name: t.target_commit for t in refs.tags}, main

    def versions(self, repo: str) -> list[VersionInfo]:
        """Published versions, newest first, dated by their commits."""
        self._online()
        with self._errors(repo):
            tags, _ = self._refs(repo)
            tagged = version_tags(tags)
            dates = {c.commit_id: c.created_at.isoformat()
                     for c in self.api.list_repo_commits(repo)} if tagged else {}
        return [VersionInfo(v, tag, sha, dates.get(sha)) for v, tag, sha in tagged]

    def resolve(self, repo: str, ref: str | None = None) -> Resolved:
        """Resolve latest / version / `main` / sha / sha prefix (see `base.resolve_ref`)."""
        self._online()
        check_repo_id(repo)
        with self._errors(repo):
            tags, main = self._refs(repo)
            return resolve_ref(repo, ref, tags=tags, main=main, commits=lambda: [
                c.commit_id for c in self.api.list_repo_commits(repo)])

    def fetch(self, repo: str, sha: str, dest: Path) -> Path:
        """Download the skill's files at `sha` into the empty folder `dest`, each path checked.

        Raises:
            UnsafeSkill: an unsafe path, or files over the size limits (before any download).
        """
        self._online()
        with self._errors(repo):
            tree = [e for e in self.api.list_repo_tree(repo, revision=sha, recursive=True)
                    if isinstance(e, RepoFile)]
            wanted = [e for e in tree if not is_card_path(check_relpath(e.path))]
            budget = SizeBudget()
            for entry in wanted:
                budget.take(entry.path, entry.size)
            dest.mkdir(parents=True, exist_ok=True)
            if any(dest.iterdir()):
                raise RegistryError(f"{dest} is not empty; fetch needs an empty staging folder")
            for entry in wanted:
                local = self.api.hf_hub_download(repo, entry.path, revision=sha,
                                                 cache_dir=self.cache_dir)
                write_file(dest, entry.path, Path(local).read_bytes())
        return dest

    def search(self, query: str = "", *, sort: str = "downloads", limit: int = 50,
               lift_key: LiftKey | None = None) -> list[SkillInfo]:
        """`list_models(filter="agent-skill")`, after a cheap reachability probe."""
        self._online()
        if sort not in SORTS:
            raise RegistryError(f"unknown sort '{sort}'", hint="--sort downloads|likes|lift")
        with self._errors(None):
            self._probe()
            models = self.api.list_models(
                filter=SKILL_TAG, search=query or None,
                sort="likes" if sort == "likes" else "downloads",
                limit=None if sort == "lift" else limit, cardData=True)
            infos = [_model_info(m) for m in itertools.islice(models, MAX_LISTED)]
        return sort_infos(infos, sort, limit,
                          lambda: (lift_key or mean_lift)(self.results_frame()))

    def _probe(self) -> None:
        """Fail fast when the endpoint is unreachable (`list_models` retries for ~23 s)."""
        with contextlib.suppress(RepositoryNotFoundError):
            self.api.model_info("hubskills/reachability-probe")

    def info(self, repo: str) -> SkillInfo:
        """The skill's card, metadata, counters and versions."""
        self._online()
        check_repo_id(repo)
        with self._errors(repo):
            model = self.api.model_info(repo)
            card = self._read_card(repo)
        versions = self.versions(repo)
        info = _model_info(model, card)
        latest = versions[0].version if versions else info.version
        return replace(info, version=latest, versions=versions)

    def _read_card(self, repo: str) -> str:
        try:
            path = self.api.hf_hub_download(repo, CARD_FILE, cache_dir=self.cache_dir)
        except RemoteEntryNotFoundError:
            return ""
        return Path(path).read_text(encoding="utf-8")

    def refresh_card(self, repo: str) -> None:
        """Rewrite the card's evaluation section from the results dataset (one commit)."""
        self._write_token()
        with self._errors(repo):
            card = self._read_card(repo)
            updated = with_evals(card, latest_summary(self.results_frame(), repo))
            if updated != card:
                with_retry(lambda: self.api.create_commit(
                    repo, [CommitOperationAdd(CARD_FILE, updated.encode("utf-8"))],
                    commit_message="Update the evaluation summary"))

    # -- results ----------------------------------------------------------------------------

    def results_repo(self) -> str:
        """The results dataset id: configured, else `<namespace or user>/hubskills-evals`.

        Without a namespace or a token, the public `hubskills/hubskills-evals`.
        """
        if not self._results_repo:
            namespace = self.settings.namespace
            if not namespace:
                has_token = self.settings.hf_token or self.api.token or get_token()
                namespace = self.default_namespace() if has_token else "hubskills"
            self._results_repo = f"{namespace}/{DEFAULT_RESULTS_NAME}"
        return self._results_repo

    def append_results(self, manifest: RunManifest, rows: list[ResultRow]) -> str:
        """Add `data/evals/YYYY-MM/<run_id>.jsonl` in one commit; an existing run is a no-op."""
        self._write_token()
        path = results_path(manifest)
        data = rows_to_jsonl(stamp_rows(manifest, rows)).encode("utf-8")
        repo = self.results_repo()
        with self._errors(repo, "dataset"):
            self._ensure_dataset(repo)
            if self.api.file_exists(repo, path, repo_type="dataset"):
                log.info("run %s is already in %s", manifest.run_id, repo)
                return path
            with_retry(lambda: self.api.create_commit(
                repo, [CommitOperationAdd(path, data)], repo_type="dataset",
                commit_message=f"Add eval run {manifest.run_id}"))
        return path

    def _ensure_dataset(self, repo: str) -> None:
        if self._dataset_ready:
            return
        self.api.create_repo(repo, repo_type="dataset", exist_ok=True)
        try:
            current = Path(self.api.hf_hub_download(repo, CARD_FILE, repo_type="dataset",
                                                    cache_dir=self.cache_dir)).read_text("utf-8")
        except RemoteEntryNotFoundError:
            current = ""
        if not card_is_current(current):  # missing, or declares other row features
            with_retry(lambda: self.api.create_commit(
                repo, [CommitOperationAdd(CARD_FILE, dataset_card(repo).encode("utf-8"))],
                repo_type="dataset", commit_message="Create the hubskills results dataset"))
        self._dataset_ready = True

    def _result_files(self, repo: str) -> tuple[list[RepoFile], str | None]:
        """The dataset's result files and the head they were listed at ([] if none)."""
        try:
            head = self.api.dataset_info(repo).sha
            entries = list(self.api.list_repo_tree(repo, path_in_repo=RESULTS_DIR,
                                                   recursive=True, repo_type="dataset",
                                                   revision=head))
        except (RepositoryNotFoundError, RemoteEntryNotFoundError):
            return [], None
        files = [e for e in entries if isinstance(e, RepoFile) and e.path.endswith(".jsonl")]
        return sorted(files, key=lambda e: e.path), head

    def _download(self, repo: str, path: str, revision: str | None) -> Path:
        check_relpath(path)
        return Path(self.api.hf_hub_download(repo, path, repo_type="dataset",
                                             revision=revision, cache_dir=self.cache_dir))

    def read_results(self, *, skill: str | None = None) -> list[ResultRow]:
        """Every row of the results dataset (files downloaded once into the cache)."""
        self._online()
        repo = self.results_repo()
        with self._errors(repo, "dataset"):
            files, head = self._result_files(repo)
            return [row for e in files for row in iter_rows(self._download(repo, e.path, head))
                    if matches_skill(row, skill)]

    def results_frame(self) -> pd.DataFrame:
        """Every row as a DataFrame; only files not seen before are downloaded and parsed."""
        from registry.stores.frame import load_frame  # pyarrow is loaded only when results are read

        self._online()
        repo = self.results_repo()
        with self._errors(repo, "dataset"):
            files, head = self._result_files(repo)
            sources = {f"{e.path}:{e.blob_id}": partial(self._download, repo, e.path, head)
                       for e in files}
            return load_frame(sources, self.cache_dir / "frame" / repo.replace("/", "--"))


def _model_info(model: ModelInfo, card: str = "") -> SkillInfo:
    data: dict[str, Any] = model.card_data.to_dict() if model.card_data else {}
    if not data and card:
        data = parse_card(card)
    fields = card_fields(data, model.id)
    fields["tags"] = fields["tags"] or list(model.tags or [])
    updated = model.last_modified.isoformat() if model.last_modified else None
    return SkillInfo(repo=model.id, downloads=model.downloads or 0, likes=model.likes or 0,
                     updated=updated, card=card, **fields)
