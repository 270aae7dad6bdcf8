"""Replaying the seeded example runs, so that they rank as `replayed` on a fresh registry.

Each seeded run is replayed here, from the rows exactly as the results dataset holds them and
against the skill revision it was linked to (`verify.verify_run`: no model is called; text
checks in-process, code checks in the sandbox when one works). Its record names this machine's
registry as the verifier ("local"), like any other local replay: nothing is imported that
claims someone else checked it. A run whose replay does not hold stays unverified (or
mismatch), with the reason, and is left out of the default board.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from registry.config import Settings
from registry.errors import HubskillsError
from registry.results.runs import ResultRow, RunManifest, read_manifest
from registry.stores.local import LocalStore
from registry.stores.seed import SeedReport, seed_store
from registry.stores.verifications import run_files
from registry.verify.records import verify_and_record

if TYPE_CHECKING:
    from registry.verify.replay import Verification

log = logging.getLogger(__name__)


def seed_hook(seed_dir: Path | None,
              settings: Settings) -> Callable[[LocalStore], SeedReport]:
    """A first-use hook for `LocalStore(seed=...)`: seed from `seed_dir`, then replay the
    seeded runs with `settings`' sandbox choice and record each verification."""
    return partial(seed_and_replay, seed_dir=seed_dir, settings=settings)


def seed_and_replay(store: LocalStore, seed_dir: Path | None, *, settings: Settings,
                    force: bool = False) -> SeedReport:
    """`stores.seed.seed_store`, with every seeded run replayed here and recorded."""
    return seed_store(store, seed_dir, force=force,
                      replay=partial(replay_seeded, settings=settings))


def replay_seeded(store: LocalStore, runs_root: Path, run_ids: list[str], *,
                  settings: Settings) -> dict[str, str]:
    """Replay the seeded runs ``run_ids`` (recorded under ``runs_root``) of ``store`` and record
    each verification; returns run id -> the replay's status (`verified`, `mismatch`, `not
    replayable`)."""
    found = run_files(store)
    statuses = {}
    for run_id in run_ids:
        run = found.get(run_id)
        if run is None:
            continue
        try:
            manifest = read_manifest(runs_root, run_id)
            rows = store.dataset_dir / run.path
            first = ResultRow.model_validate_json(rows.read_text(encoding="utf-8")
                                                  .split("\n", 1)[0])
            placed = manifest.model_copy(update={"skill_repo": first.skill_repo,
                                                 "skill_revision": first.skill_revision,
                                                 "skill_version": first.skill_version})
            record, _ = verify_and_record(
                store, run, partial(_replay, store, placed, rows, settings, runs_root.parent),
                skill_repo=first.skill_repo, skill_revision=first.skill_revision)
        except (HubskillsError, ValueError) as err:  # seeding goes on without this record
            log.info("seeded run %s not replayed: %s", run_id, err)
            continue
        statuses[run_id] = str(record["status"])
    return statuses


def _replay(store: LocalStore, placed: RunManifest, rows: Path, settings: Settings,
            seed_dir: Path) -> Verification:
    """`verify_run` on a run folder rebuilt in a temporary home from the dataset's file (the
    rows as pushed) and the manifest as seeding placed it: against the revision it was linked
    to, else the example skill's folder (its content hash is checked either way)."""
    from registry.verify.replay import verify_run  # the engine loads only when seeding

    folder_skill = None if placed.skill_revision else seed_dir / placed.skill_name
    with tempfile.TemporaryDirectory(prefix="hubskills-seed-replay-") as tmp:
        home = Path(tmp)
        folder = home / "runs" / placed.run_id
        folder.mkdir(parents=True)
        shutil.copyfile(rows, folder / "rows.jsonl")
        (folder / "manifest.json").write_text(placed.model_dump_json(), encoding="utf-8")
        return verify_run(placed.run_id, settings.with_(home=home), skill_dir=folder_skill,
                          open_store=lambda: store)
