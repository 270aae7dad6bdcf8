"""Verification, in one room: everything that decides whether a published number holds.

- `replay` (with `regrade`, `summary`): rebuild a run from its stored rows, regrade every check
  without calling a model, recompute the summary; `pushed`: the same for a run as a registry's
  results dataset holds it.
- `resample`, `spot`, `spot_job`: spot checks, a sample of cases re-asked of the model.
- `admission` and `pending`: the one gate for submissions (pull requests on the results dataset).
- `records`: the only writer of verification records; `seed`: the seeded example runs' replays.

Storage (`registry.stores`) only keeps bytes and reads records; nothing below this package writes
a record or decides what a submission may change (docs/verify.md holds the trust model). The
names below load on first use, so opening a store does not load the evaluation engine.
"""

from __future__ import annotations

from registry._lazy import lazy_names

_EXPORTS = {
    "Verification": "registry.verify.replay",
    "verify_run": "registry.verify.replay",
    "replay_run": "registry.verify.replay",
    "verify_published": "registry.verify.pushed",
    "replay_pending": "registry.verify.admission",
    "merge_submission": "registry.verify.admission",
    "pending_frame": "registry.verify.pending",
    "forged_claims": "registry.verify.pending",
    "verify_and_record": "registry.verify.records",
    "append_record": "registry.verify.records",
    "seed_and_replay": "registry.verify.seed",
    "seed_hook": "registry.verify.seed",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, globals())
