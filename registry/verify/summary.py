"""The third step of `verify`: the summaries a run stored, against those the one statistics
engine computes from the regraded rows (`verify_regrade.py` regrades them)."""

from __future__ import annotations

import copy
import math
from typing import Any

from registry.evaluation.run_manifest import stored_summaries
from registry.results.runs import ResultRow, RunManifest
from registry.verify.regrade import TOLERANCE, Difference


def compare_summaries(stored: list[dict[str, Any]], rows: list[ResultRow],
                      manifest: RunManifest | None = None) -> list[Difference]:
    """Where the summaries the run stored differ from those recomputed from `rows` (an
    adaptive run's at its design's stopping level, from ``manifest``)."""
    by_model = {s.get("model"): s for s in stored if isinstance(s, dict)}
    differences: list[Difference] = []
    for summary in stored_summaries(rows, manifest):
        model = summary["model"]
        if model not in by_model:
            differences.append(Difference(f"summary ({model})", "model", None, model))
            continue
        kept = by_model.pop(model)
        # Equal as computed, so equal as read back (`_plain` only makes unequal things equal:
        # a tuple and a list, NaN and null): nothing to walk (most replays).
        if kept != summary and kept != (summary := _plain(summary)):
            kept, summary = _by_their_methods(kept, summary)
            _walk(f"summary ({model})", "", kept, summary, differences)
    differences += [Difference(f"summary ({m})", "model", m, None) for m in by_model]
    return differences


#: Methods earlier hubskills stored, by key (`methods` of a summary; None: not named yet).
EARLIER_METHODS: dict[str, tuple[str | None, ...]] = {
    "lift_interval": ("paired t 95% interval over per-case differences (df = cases - 1)",),
    "verdict": (None,)}
#: The figures each method alone decides (`EARLIER_METHODS`): left out of the comparison
#: when the run closed with an earlier method (the board shows them recomputed from the rows).
_DECIDED_BY = {"lift_interval": (("stats", "lo"), ("stats", "hi")),
               "verdict": (("stats", "verdict"), ("stats", "note"))}


def _by_their_methods(stored: Any, fresh: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """`stored` and `fresh` without the figures of a method the run closed with that this
    hubskills replaced; only methods hubskills once used count (any other name differs)."""
    methods = stored.get("methods") if isinstance(stored, dict) else None
    if not isinstance(methods, dict):
        return stored, fresh
    stored, fresh = copy.deepcopy(stored), copy.deepcopy(fresh)
    for key, figures in _DECIDED_BY.items():
        if methods.get(key) in EARLIER_METHODS[key]:
            for section, name in (("methods", key), *figures):
                for summary in (stored, fresh):
                    if isinstance(summary.get(section), dict):
                        summary[section].pop(name, None)
    return stored, fresh


def _walk(sample: str, path: str, stored: Any, fresh: Any, out: list[Difference]) -> None:
    if isinstance(stored, dict) and isinstance(fresh, dict):
        for key in sorted(set(stored) | set(fresh), key=str):
            _walk(sample, f"{path}.{key}" if path else str(key), stored.get(key),
                  fresh.get(key), out)
    elif isinstance(stored, list) and isinstance(fresh, list) and len(stored) == len(fresh):
        for index, (a, b) in enumerate(zip(stored, fresh, strict=True)):
            _walk(sample, f"{path}[{index}]", a, b, out)
    elif not _same(stored, fresh):
        out.append(Difference(sample, path, stored, fresh))


def _same(a: Any, b: Any) -> bool:
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=1e-12)
    return bool(a == b)


def _plain(value: Any) -> Any:
    """`value` as it reads back from JSON: tuples as lists, non-finite floats as null."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # a numpy scalar
        return _plain(value.item())
    return value
