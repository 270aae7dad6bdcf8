"""Result rows as a results frame for tests, without going through a store."""

from __future__ import annotations

import pandas as pd

from registry.results.runs import ResultRow


def rows_frame(rows: list[ResultRow]) -> pd.DataFrame:
    """Rows as a results frame (no `output`, `checks`, tool calls or skill files), with the
    columns the stores' frames have."""
    return pd.DataFrame([r.model_dump(exclude={"output", "checks", "tool_calls", "skill_files"})
                         for r in rows])
