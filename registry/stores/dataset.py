"""The results dataset's layout, shared by both stores: one immutable JSONL file per run.

`data/evals/YYYY-MM/<run_id>.jsonl` (month of the run's start, so re-appending a run always
names the same file and can never duplicate it; month folders keep each folder far below the
Hub's 10k-files guidance). The dataset card declares the `evals` split over those files, so
`datasets.load_dataset(repo, split="evals")` returns every row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from registry.errors import HubskillsError
from registry.format.skill import dump_frontmatter
from registry.results.replay_record import summary_json
from registry.results.runs import ResultRow, RunManifest, rows_to_jsonl
from registry.stores.card import parse_card

DEFAULT_RESULTS_NAME = "hubskills-evals"
RESULTS_DIR = "data/evals"
IDENTITY_FIELDS = ("run_id", "skill_name", "skill_version", "skill_repo", "skill_revision",
                   "content_hash")
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_MONTH = re.compile(r"^\d{4}-\d{2}")

_DTYPES = {"string": "string", "integer": "int64", "number": "float64", "boolean": "bool"}

DATASET_BODY = """
# hubskills evaluation results

One row per case x arm (baseline / skill) x repeat x model, appended by `hubskills eval --push`
and `hubskills publish --with-run`. Each run is one immutable file,
`data/evals/YYYY-MM/<run_id>.jsonl`; rows carry the run id, skill repo, revision and content
hash, so every row stands on its own.

```python
from datasets import load_dataset
rows = load_dataset("REPO", split="evals")
```

The features below are declared because a run's file can hold only nulls in a column that
another run fills (`error`, `cost_usd`): inferred per file, they would not match.
"""


def _feature(name: str, prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """One `datasets` feature (its YAML form) from a JSON-schema property."""
    prop = next((p for p in prop.get("anyOf", []) if p.get("type") != "null"), prop)
    if prop.get("type") == "array":
        items = prop.get("items", {})
        if "$ref" in items:
            struct = defs[items["$ref"].rsplit("/", 1)[-1]]["properties"]
            return {"name": name, "list": [_feature(k, v, defs) for k, v in struct.items()]}
        return {"name": name, "list": _DTYPES.get(items.get("type", ""), "string")}
    return {"name": name, "dtype": _DTYPES.get(prop.get("type", ""), "string")}


def results_features() -> list[dict[str, Any]]:
    """The `evals` split's features in the card's YAML form, derived from `ResultRow`.

    `datasets.Features._from_yaml_list(results_features())` gives the `Features` to pass to
    `load_dataset("json", data_files=..., features=...)` for the local layout.
    """
    schema = ResultRow.model_json_schema()
    defs = schema.get("$defs", {})
    return [_feature(name, prop, defs) for name, prop in schema["properties"].items()]


def dataset_card(repo: str) -> str:
    """The dataset card for the results repo `repo`: the `evals` split and its features."""
    meta = {
        "tags": ["hubskills", "agent-skill", "evaluation"],
        "configs": [{"config_name": "default",
                     "data_files": [{"split": "evals", "path": f"{RESULTS_DIR}/**/*.jsonl"}]}],
        "dataset_info": {"features": results_features()},
    }
    return f"---\n{dump_frontmatter(meta)}---\n{DATASET_BODY.replace('REPO', repo)}"


def card_is_current(card: str) -> bool:
    """Whether a dataset card declares the `evals` split with today's row features."""
    meta = parse_card(card)
    info = meta.get("dataset_info")
    if not isinstance(info, dict):
        info = {}
    return bool(meta.get("configs")) and info.get("features") == results_features()


def card_update(repo: str, card: str | None) -> bytes | None:
    """The card to write to the results dataset `repo`, whose card is `card` (None: it has
    none): a fresh one when it is missing or declares other row features, else None."""
    if card is not None and card_is_current(card):
        return None
    return dataset_card(repo).encode("utf-8")


def results_path(manifest: RunManifest) -> str:
    """`data/evals/YYYY-MM/<run_id>.jsonl` for a run (month of `started_at`).

    Raises:
        HubskillsError: the run id could name another path, or the start time is unreadable.
    """
    if not _RUN_ID.match(manifest.run_id) or ".." in manifest.run_id:
        raise HubskillsError(f"'{manifest.run_id}' is not a usable run id", hint="hubskills runs")
    if not _MONTH.match(manifest.started_at or ""):
        raise HubskillsError(f"run {manifest.run_id} has no readable start time")
    return f"{RESULTS_DIR}/{manifest.started_at[:7]}/{manifest.run_id}.jsonl"


def run_file(manifest: RunManifest, rows: Iterable[ResultRow]) -> tuple[str, bytes]:
    """A run's path in the dataset (`results_path`) and its file's bytes: its rows stamped
    (`stamp_rows`), as JSONL.

    Raises:
        HubskillsError: an unusable run id or start time, or a row of another run.
    """
    return results_path(manifest), rows_to_jsonl(stamp_rows(manifest, rows)).encode("utf-8")


def stamp_rows(manifest: RunManifest, rows: Iterable[ResultRow]) -> list[ResultRow]:
    """Rows with the manifest's identity fields copied on, so each row stands on its own.

    Raises:
        HubskillsError: a row belongs to another run.
    """
    identity = {name: getattr(manifest, name) for name in IDENTITY_FIELDS}
    identity |= manifest.row_fields()  # suite, planned counts, who and how: for the leaderboard
    stamped, summarized = [], set()
    for row in rows:
        if row.run_id != manifest.run_id:
            raise HubskillsError(f"a row of run {row.run_id} was given with run "
                                 f"{manifest.run_id}")
        first = row.model not in summarized  # its model's summary, once: `hubskills verify`
        summarized.add(row.model)
        stamped.append(row.model_copy(update=identity | (
            {"run_summary": summary_json(manifest, row.model)} if first else {})))
    return stamped


def matches_skill(row: ResultRow, skill: str | None) -> bool:
    """Whether `row` belongs to `skill` (a repo id or a bare skill name; None matches all)."""
    return skill is None or row.skill_repo == skill or (
        "/" not in skill and row.skill_name == skill)
