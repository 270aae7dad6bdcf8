"""The owner's spot checks from the Space: a replayed run re-asked on the owner's own Jobs.

Only the owner of the results dataset sees the control: on a Space, the signed-in visitor whose
Hugging Face user is the dataset's namespace (`registry.owns_results`); off a Space, the local
user. The handler asks again, so a call to the API by anyone else is refused before anything
runs. The candidates are the merged runs badged `replayed` and the pending submissions whose
replay was `verified` (read at their pull request's revision). The Job runs under the visitor's
OAuth token with only the model keys they typed (`evaluate_jobs.jobs_settings`: the Space's own
keys are never lent to a Job); it records the verification in the results dataset, and the data
are reloaded when it ends, so the badge reads `spot-checked` (or `mismatch`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from registry import (
    HubskillsError,
    Settings,
    board_entries,
    follow_spot_job,
    get_store,
    holding,
    owns_results,
    start_spot_job,
)

from .evaluate_jobs import jobs_settings

if TYPE_CHECKING:
    from .state import SpaceState

DEFAULT_K = 10
POLL_S = 5.0  # seconds between looks at the Job's stage
NOT_OWNER = ("Spot checks from this Space are for the owner of its results dataset, signed in "
             "with Hugging Face; anyone may run one on their own machine: hubskills verify "
             "NS/NAME --run RUN_ID --resample K --on jobs")


@dataclass(frozen=True)
class SpotTarget:
    """A run the owner may spot-check: its skill repo, run id, and the revision to read it at
    (a pending submission's pull request; None for a merged run)."""

    skill: str
    run_id: str
    revision: str | None
    label: str

    @property
    def value(self) -> str:
        """The dropdown's value for this target."""
        return json.dumps([self.skill, self.run_id, self.revision])


def owner_token(state: SpaceState, token: str | None) -> str | None:
    """The token the owner's Jobs run under: the signed-in visitor's when they own the results
    dataset (on a Space), the local user's off a Space; None for anyone else."""
    if state.store.kind != "hub":
        return None
    if not state.on_space:
        return token or state.settings.hf_token
    if not token:
        return None
    try:
        return token if owns_results(state.store, state.settings, token) else None
    except HubskillsError:
        return None


def spot_targets(state: SpaceState, pending: list[Any]) -> list[SpotTarget]:
    """The merged entries badged `replayed` (one per run) and the ``pending`` submissions
    (`replay_pending`'s checks) whose replay was verified."""
    found: dict[str, SpotTarget] = {}
    for entry in board_entries(state.board().select(include_unverified=True)):
        if entry.verification == "replayed" and entry.repo and entry.run_id not in found:
            label = f"{entry.skill} · {entry.model} · run {entry.run_id}"
            found[entry.run_id] = SpotTarget(entry.repo, entry.run_id, None, label)
    for check in pending:
        if check.status == "verified" and check.skill_repo and check.run_id not in found:
            found[check.run_id] = SpotTarget(
                check.skill_repo, check.run_id, f"refs/pr/{check.num}",
                f"{check.skill_repo} · run {check.run_id} (pending, PR #{check.num})")
    return list(found.values())


def job_settings(state: SpaceState, settings: Settings, token: str) -> Settings:
    """The settings the owner's Job runs with: their token and typed keys, reading and writing
    the Space's results dataset."""
    if not state.on_space:
        return settings.with_(hf_token=token)
    return jobs_settings(settings, state.settings, token).with_(
        results_repo=state.store.results.source())


def run_spot_check(state: SpaceState, value: str | None, k: float | None,
                   max_cost: float | None, settings: Settings,
                   token: str | None) -> Iterator[str]:
    """Spot-check the chosen run on the owner's Jobs: markdown lines as it goes (the estimate,
    the Job's link and stage, then the verdict and the badge).

    Raises:
        HubskillsError: not the owner, no run chosen, over ``max_cost`` (before any Job), or
            the Job ended without a verdict.
    """
    owner = owner_token(state, token)
    if owner is None:
        raise HubskillsError(NOT_OWNER, hint="sign in with Hugging Face as the dataset's owner")
    if not value:
        raise HubskillsError("pick a replayed run to spot-check",
                             hint="press *Show pending submissions* to list them")
    skill, run_id, revision = json.loads(value)
    settings = job_settings(state, settings, owner)
    with holding(owner):  # whatever this says is scrubbed of the owner's token
        spot = start_spot_job(get_store(settings, "hub"), skill, run_id, settings,
                              k=int(k or DEFAULT_K), max_cost=float(max_cost) if max_cost
                              else None, revision=revision)
        cost = "unknown" if spot.plan.estimated_cost is None \
            else f"about ${spot.plan.estimated_cost:.4f}"
        head = (f"Spot check of run `{run_id}`: {spot.plan.k} samples per arm, estimated cost "
                f"{cost}, running as [Job {spot.job.id}]({spot.url}) on your account")
        yield f"{head}…"
        found = follow_spot_job(settings, spot, poll_s=POLL_S)
    state.invalidate()
    badge = "spot-checked" if found["consistent"] else "mismatch"
    yield (f"{head}: **{'consistent' if found['consistent'] else 'inconsistent'}**; the run is "
           f"now badged **{badge}** (recorded as `{found.get('record')}`).")
