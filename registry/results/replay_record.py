"""What each result row records so that `hubskills verify` replays a run from its rows alone.

A pushed run is its rows and nothing else, so every row carries the run's settings a replay
needs (`replay_fields`: sampling temperature and max tokens, the judge, the plan's size, the
code-check policy, the agent harness and budget, the hubskills version), each model's first row
the summary the run closed with (`summary_json`), judge verdicts the judge's reply
(`CheckVerdict.answer`), and agent-mode rows the files the agent changed in its workspace
(`workspace_record`), within `MAX_FILE_BYTES` each and `MAX_RECORD_BYTES` a sample: a file over
them is listed with its size but no content, and workspace checks of that sample are then not
replayable. Rows are scrubbed of secrets like everything written (`results.to_json`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

MAX_FILE_BYTES = 64 * 1024  # a changed file's content kept on its row
MAX_RECORD_BYTES = 256 * 1024  # all of one sample's changed files together


class WorkspaceFile(BaseModel):
    """Agent mode: one file the agent added, modified or deleted, as the sample's final
    workspace held it (`content` None: not stored, too large or not a regular file)."""

    path: str
    status: str
    size: int = 0
    content: str | None = None
    base64: bool = False  # `content` is base64 (the file is not UTF-8 text)


def replay_fields(manifest: Any) -> dict[str, Any]:
    """The settings of ``manifest`` (a `RunManifest`) every row of its run carries."""
    budget = json.dumps(manifest.agent_budget, sort_keys=True) if manifest.agent_budget \
        else None
    return {"temperature": manifest.temperature, "max_tokens": manifest.max_tokens,
            "judge": manifest.judge, "samples_planned": manifest.samples_planned or None,
            "code_checks": manifest.code_checks, "harness": manifest.harness,
            "agent_budget": budget, "hubskills_version": manifest.versions.get("hubskills"),
            "design": design_json(manifest), "dependencies": dependencies_json(manifest)}


def dependencies_json(manifest: Any) -> str | None:
    """The skills the run's skill arm loaded besides the skill (`RunManifest.dependencies`) as
    its rows carry them (JSON), so a pushed run says so and is re-asked with them; None when
    there were none."""
    found = getattr(manifest, "dependencies", None)
    if not found:
        return None
    return json.dumps([d.model_dump() for d in found], sort_keys=True, ensure_ascii=False)


def design_json(manifest: Any) -> str | None:
    """An adaptive run's design as its rows carry it (JSON: the parameters, each model's stop
    as `stops`, the cases planned as `cases`), so a pushed run's every stop is recomputed from
    its rows alone; None for a fixed run."""
    design = manifest.design or {}
    if design.get("kind") != "adaptive":
        return None
    return json.dumps({**design, "stops": manifest.design_stops or {},
                       "cases": list(manifest.case_ids)}, sort_keys=True)


def summary_json(manifest: Any, model: str) -> str | None:
    """``model``'s summary as the run closed, as JSON (None when the run stores none)."""
    import pydantic_core

    found = next((s for s in manifest.summaries or [] if s.get("model") == model), None)
    return None if found is None else \
        pydantic_core.to_json(found, inf_nan_mode="null").decode("utf-8")


def workspace_record(changes: Iterable[Any],
                     files: Mapping[str, bytes | None]) -> list[WorkspaceFile]:
    """The record of a final workspace: each change (`FileChange`: path, status, size) with
    the file's bytes from ``files`` (`Workspace.files()`: None for a file too large to read or
    not a regular file) while they fit the caps."""
    record, room = [], MAX_RECORD_BYTES
    for change in changes:
        data = files.get(change.path) if change.status != "deleted" else None
        entry = WorkspaceFile(path=change.path, status=change.status, size=change.size)
        if data is not None and len(data) <= min(MAX_FILE_BYTES, room):
            room -= len(data)
            try:
                entry.content = data.decode("utf-8")
            except UnicodeDecodeError:
                entry.content, entry.base64 = base64.b64encode(data).decode("ascii"), True
        record.append(entry)
    return record


def is_complete(record: list[WorkspaceFile]) -> bool:
    """Whether every added or modified file's content is in ``record``."""
    return all(f.content is not None for f in record if f.status != "deleted")


def file_bytes(entry: WorkspaceFile) -> bytes:
    """The stored content of ``entry`` as bytes."""
    text = entry.content or ""
    return base64.b64decode(text) if entry.base64 else text.encode("utf-8")
