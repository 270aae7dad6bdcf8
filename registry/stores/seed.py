"""Seed a local registry from a folder of skills (the project's `skills/`) and its recorded runs.

Every skill folder whose name follows the skill-name rule (dot-folders skipped) and that
validates is published as `hubskills/<name>` at its `metadata.version`; every recorded run in
`<folder>/.runs/<run_id>/{manifest.json,rows.jsonl}` is appended to the results dataset, linked
to the seeded revision when its content hash matches, then handed to the verifier's replay
(no model is called; `registry.verify.seed`) and its verification recorded, so the example runs
rank as `replayed` when their replay holds. Idempotent: existing versions and runs are
skipped; a marker file records that seeding happened.

Where the example skills come from (`default_seed_dir`): the source checkout's `skills/` (a
clone, an editable install, a Space), else `registry/examples/`: the copy of `skills/` (its
recorded runs included) that `setup.py` puts in every built wheel, so an installed wheel seeds
the same examples offline. `hubskills registry seed --from FOLDER` seeds from any other folder.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from registry._io import atomic_write_text
from registry.errors import HubskillsError
from registry.format.skill import NAME_RE, load_skill
from registry.format.validate import has_errors, validate_skill
from registry.results.runs import read_manifest, read_rows, utc_now
from registry.stores.dataset import results_path
from registry.stores.local import LocalStore
from registry.stores.refs import is_version, normalize_version, tag_for

log = logging.getLogger(__name__)
SEED_NAMESPACE = "hubskills"


@dataclass
class SeedReport:
    """What a seed did: `published` (repo@version), `skipped` (with reasons), `runs`."""

    published: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    already_seeded: bool = False
    verified: dict[str, str] = field(default_factory=dict)  # run id -> its replay's status


def default_seed_dir() -> Path | None:
    """The example skills: the checkout's `skills/`, else `registry/examples/`, else None."""
    package = Path(__file__).resolve().parent.parent  # the `registry` package folder
    for candidate in (package.parent / "skills", package / "examples"):
        if candidate.is_dir() and any((p / "SKILL.md").is_file() for p in candidate.iterdir()):
            return candidate
    return None


#: Replays the seeded runs (store, the runs' folder, their ids) -> run id -> replay status.
Replay = Callable[[LocalStore, Path, list[str]], dict[str, str]]


def seed_store(store: LocalStore, seed_dir: Path | None, *, force: bool = False,
               replay: Replay | None = None) -> SeedReport:
    """Seed `store` from `seed_dir` unless it was seeded already (or with `force`); with
    `replay` (the verifier's, `registry.verify.seed`), each seeded run is replayed and its
    verification recorded."""
    with store.seeding():
        marker = store.seed_marker
        if marker.exists() and not force:
            return SeedReport(already_seeded=True)
        report, repos = _seed(store, seed_dir)
        if replay is not None and seed_dir is not None:
            report.verified = replay(store, seed_dir / ".runs", report.runs)
        for repo in sorted(repos):  # after the replays: a card says the badge they earned
            try:
                store.refresh_card(repo)
            except HubskillsError as err:  # a run of a skill that is not in the store
                log.info("no card to refresh for %s: %s", repo, err.message)
        atomic_write_text(marker, json.dumps({"date": utc_now(), **asdict(report)}, indent=2))
        return report


def _seed(store: LocalStore, seed_dir: Path | None) -> tuple[SeedReport, set[str]]:
    """What was seeded, and the repos of the runs seeded (their cards to refresh)."""
    report = SeedReport()
    repos: set[str] = set()
    if seed_dir is None or not seed_dir.is_dir():
        report.skipped.append(f"no example skills found ({seed_dir or 'none shipped'}); "
                              "hubskills registry seed --from FOLDER")
        return report, repos
    for folder in sorted(seed_dir.iterdir()):
        if folder.is_dir() and not folder.name.startswith(".") and NAME_RE.match(folder.name):
            _seed_skill(store, folder, report)
    runs_root = seed_dir / ".runs"
    for run in sorted(runs_root.iterdir()) if runs_root.is_dir() else []:
        if (run / "manifest.json").is_file():
            repo = _seed_run(store, runs_root, run.name, report)
            if repo:
                repos.add(repo)
    return report, repos


def _seed_skill(store: LocalStore, folder: Path, report: SeedReport) -> None:
    repo = f"{SEED_NAMESPACE}/{folder.name}"
    if has_errors(validate_skill(folder)):
        report.skipped.append(f"{folder.name}: does not validate")
        return
    version = load_skill(folder).version or ""
    if not is_version(version):
        report.skipped.append(f"{folder.name}: no metadata.version")
        return
    try:
        existing = {v.tag for v in store.versions(repo)}
    except HubskillsError:
        existing = set()
    if tag_for(version) in existing:
        report.skipped.append(f"{repo}@{normalize_version(version)}: already published")
        return
    published = store.publish(folder, repo=repo, version=version,
                              message=f"Seed {folder.name} from the project's skills/")
    report.published.append(f"{repo}@{published.version}")


def _seed_run(store: LocalStore, runs_root: Path, run_id: str,
              report: SeedReport) -> str | None:
    try:
        manifest = read_manifest(runs_root, run_id)
        rows = read_rows(runs_root, run_id)
    except (HubskillsError, ValueError) as err:
        report.skipped.append(f"run {run_id}: unreadable ({err})")
        return None
    repo = manifest.skill_repo or f"{SEED_NAMESPACE}/{manifest.skill_name}"
    update: dict[str, str | None] = {"skill_repo": repo}
    if not manifest.skill_revision:
        update.update(_matching_revision(store, repo, manifest.content_hash))
    placed = manifest.model_copy(update=update)
    if (store.dataset_dir / results_path(placed)).exists():  # `--force` counts only what it adds
        report.skipped.append(f"run {run_id}: already seeded")
        return repo
    store.append_results(placed, rows)
    report.runs.append(run_id)
    return repo


def _matching_revision(store: LocalStore, repo: str, wanted_hash: str) -> dict[str, str]:
    """The revision and version of `repo` whose content hash is `wanted_hash`, if any."""
    try:
        versions = store.versions(repo)
    except HubskillsError:
        return {}
    for info in versions:
        if store.revision_content_hash(repo, info.sha) == wanted_hash:
            return {"skill_revision": info.sha, "skill_version": info.version}
    return {}
