"""Small aggregations over the results frame: the default lift sort key and a card summary.

These are deliberately simple (means of pass verdicts, error rows excluded); the statistics
with intervals live in `registry.evaluation.stats` and the leaderboard.
`search(sort="lift")` accepts any `lift_key` with the signature of `mean_lift`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def _graded(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows with a verdict and no error; a repo column falls back to the skill name."""
    rows = frame[frame["passed"].notna() & frame["error"].isna()]
    repo = rows["skill_repo"].astype("string").fillna(rows["skill_name"].astype("string"))
    return rows.assign(repo=repo, passed=rows["passed"].astype("float64"))


def mean_lift(frame: pd.DataFrame) -> dict[str, float]:
    """Per skill repo: mean pass rate with the skill minus mean pass rate without it."""
    rows = _graded(frame)
    if rows.empty:
        return {}
    rates = rows.groupby(["repo", "arm"], observed=True)["passed"].mean().unstack("arm")
    if "skill" not in rates or "baseline" not in rates:
        return {}
    lift = (rates["skill"] - rates["baseline"]).dropna()
    return {str(repo): float(value) for repo, value in lift.items()}


def latest_summary(frame: pd.DataFrame, repo: str) -> list[dict[str, Any]]:
    """Per model, the most recent run of `repo`: baseline and skill pass rates and the lift."""
    if frame.empty:  # no results yet: skip the grouping work entirely
        return []
    rows = _graded(frame)
    rows = rows[rows["repo"] == repo]
    if rows.empty:
        return []
    summary = []
    for model, by_model in rows.groupby("model", observed=True):
        run_order = by_model.groupby("run_id", observed=True)["created_at"].max()
        run_id = str(run_order.sort_values(na_position="first").index[-1])
        run = by_model[by_model["run_id"] == run_id]
        rates = run.groupby("arm", observed=True)["passed"].mean()
        baseline, skill = rates.get("baseline"), rates.get("skill")
        summary.append({
            "model": str(model), "run_id": run_id,
            "version": _first(run["skill_version"]), "cases": int(run["case_id"].nunique()),
            "baseline": None if baseline is None else float(baseline),
            "skill": None if skill is None else float(skill),
            "lift": None if baseline is None or skill is None else float(skill - baseline),
        })
    return sorted(summary, key=lambda s: s["model"])


def _first(column: pd.Series) -> str | None:
    values = column.dropna()
    return None if values.empty else str(values.iloc[0])


def summary_markdown(summary: list[dict[str, Any]]) -> str:
    """A markdown table of `latest_summary` output (empty string when there is nothing)."""
    if not summary:
        return ""
    lines = ["| model | version | cases | baseline | with skill | lift | run |",
             "|---|---|---|---|---|---|---|"]
    for s in summary:
        lines.append(f"| {s['model']} | {s['version'] or '-'} | {s['cases']} | "
                     f"{_pct(s['baseline'])} | {_pct(s['skill'])} | {_pp(s['lift'])} | "
                     f"{s['run_id']} |")
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _pp(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.0f} pp"
