"""A spot check of a registry run and its record, here or inside a Hugging Face Job.

`spot_check_and_record` re-asks K samples per arm of a run (`publishing.resample.resample_run`)
and, for a run of the registry's results, appends the `spot-check` verification record to that
dataset as the token's user (`stores.verifications`). `hubskills verify ... --resample K` calls
it on this machine; with `--on jobs` a Job runs `main` (this module, from the client's own
wheel: `spot_remote`), which does the same under the caller's token and ends its log with one
`RESULT` line, the check as JSON, that the client reads back. The keys came as Job secrets; the
line is scrubbed like every other.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from registry.errors import HubskillsError
from registry.secrets import scrub

if TYPE_CHECKING:
    from registry.config import Settings
    from registry.evaluation.dependencies import DependencyLoader
    from registry.results.runs import RunManifest
    from registry.stores import SkillStore
    from registry.verify.resample import SpotCheck

RESULT = "hubskills-spot-result"  # the Job's last word: `hubskills-spot-result {json}`
FAILED = "hubskills-spot-error"  # or: `hubskills-spot-error {"error": ..., "hint": ...}`
MAX_CALLS = "--max-calls="  # an optional last argument: `--max-calls=N`


def spot_check_and_record(target: str, run_id: str | None, revision: str | None,
                          skill_dir: Path | None, settings: Settings,
                          open_store: Callable[[], SkillStore], *, k: int, seed: int,
                          max_cost: float | None, max_calls: int | None = None,
                          announce: Callable[[SpotCheck], None] | None = None,
                          dependencies: DependencyLoader | None = None,
                          ) -> tuple[SpotCheck, str | None]:
    """Spot-check the run (see `publishing.resample.resample_run`); the check and, for a registry
    run, the path of the record written to its results dataset.

    Raises:
        HubskillsError: over ``max_cost`` or ``max_calls`` (before any call), no skill to
            re-ask with, what the evaluation refuses, or a store that keeps no records.
    """
    from registry.verify.spot import resample_run

    check, manifest, data = resample_run(target, run_id, revision, skill_dir, settings,
                                         open_store, k=k, seed=seed, max_cost=max_cost,
                                         max_calls=max_calls, announce=announce,
                                         dependencies=dependencies)
    if data is None:
        return check, None
    return check, record_spot_check(check, manifest, data, open_store())


def record_spot_check(check: SpotCheck, manifest: RunManifest, data: bytes,
                      store: SkillStore) -> str:
    """Append the record of ``check`` of the rows ``data`` to ``store``'s results dataset, as
    the token's user; its path.

    Raises:
        HubskillsError: the record could not be written.
    """
    from registry.stores.verifications import rows_hash
    from registry.verify.records import append_record
    from registry.verify.resample import spot_record

    record = spot_record(check, manifest.run_id, rows_hash(data),
                         skill_repo=manifest.skill_repo, skill_revision=manifest.skill_revision,
                         verified_by=store.results.producer())
    return append_record(store, record)


def say(line: str) -> None:
    """A log line (scrubbed, flushed: the client follows the log)."""
    print(scrub(line), flush=True)


def run_in_job(settings: Settings, repo: str, target: str, run_id: str, k: int, seed: int,
               max_cost: float | None, revision: str | None,
               max_calls: int | None = None) -> int:
    """Inside the Job: spot-check run ``run_id`` of ``target`` in the results dataset ``repo``
    and record it; the process's exit code (0: a verdict was reached and recorded)."""
    from registry._version import __version__
    from registry.stores.hub import HubStore

    say(f"hubskills {__version__}: spot check of run {run_id} of {target}, K={k} per arm")
    settings = settings.with_(results_repo=repo)
    open_store = cache(lambda: HubStore(settings))

    def announce(check: SpotCheck) -> None:
        cost = "unknown" if check.estimated_cost is None \
            else f"at most ${check.estimated_cost:.4f}"
        say(f"re-asking {check.k} samples per arm over {len(check.cases)} case(s), "
            f"estimated cost {cost} (catalogue prices)")

    try:
        check, record = spot_check_and_record(target, run_id, revision, None, settings,
                                              open_store, k=k, seed=seed, max_cost=max_cost,
                                              max_calls=max_calls, announce=announce)
    except HubskillsError as err:
        say(f"{FAILED} {json.dumps({'error': str(err), 'hint': err.hint})}")
        return 1
    say(f"spot check {'consistent' if check.consistent else 'inconsistent'}, recorded as "
        f"{record}")
    say(f"{RESULT} {json.dumps({**check.to_dict(), 'record': record})}")
    return 0


def main(argv: list[str] | None = None) -> None:
    """`python -m registry.verify.spot_job REPO NS/NAME RUN_ID K SEED MAX_COST [REVISION]
    [--max-calls=N]` (what the Job's command runs; MAX_COST `-` for none)."""
    from registry.config import Settings

    repo, target, run_id, k, seed, max_cost, *rest = argv if argv is not None else sys.argv[1:]
    calls = [int(a.partition("=")[2]) for a in rest if a.startswith(MAX_CALLS)]
    rest = [a for a in rest if not a.startswith(MAX_CALLS)]
    sys.exit(run_in_job(Settings.from_env(), repo, target, run_id, int(k), int(seed),
                        None if max_cost == "-" else float(max_cost), rest[0] if rest else None,
                        max_calls=calls[0] if calls else None))


if __name__ == "__main__":
    main()
