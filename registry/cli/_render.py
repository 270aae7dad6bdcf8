"""Rendering of evaluation summaries for the CLI (progress is in `_output`)."""

from __future__ import annotations

from rich.markup import escape

from registry.cli import _output as out
from registry.evaluation.report import ModelSummary
from registry.evaluation.results import RunManifest


def bar(rate: float, width: int = 10) -> str:
    """A text bar like upskill's: filled blocks for the share."""
    filled = round(max(0.0, min(1.0, rate)) * width)
    return "█" * filled + "░" * (width - filled)


def usd(value: float | None, *, free: bool = False) -> str:
    """Dollars, 'unknown' for an unknown price, never a fake $0."""
    if value is None:
        return "unknown"
    if free and value == 0:
        return "$0 (local)"
    return f"${value:.4f}" if value < 1 else f"${value:.2f}"


def pct(x: float) -> str:
    """A share as a whole percentage."""
    return f"{x * 100:.0f}%"


def signed_points(x: float) -> str:
    """A lift in percentage points with its sign."""
    return f"{x * 100:+.0f}"


def render_summaries(manifest: RunManifest, summaries: list[ModelSummary]) -> None:
    """The per-model table and the notes that keep the numbers honest."""
    n_cases = len(manifest.case_ids)
    out.result(
        f"[bold]{escape(manifest.skill_name)}[/] · {n_cases} cases × {manifest.runs} runs · "
        f"{manifest.mode}{' (' + manifest.placement + ')' if manifest.mode == 'inline' else ''}"
        f" · run {manifest.run_id} ({manifest.status})")
    rows = []
    for s in summaries:
        st = s.stats
        free = s.model.startswith(("embedded/", "local/"))
        rows.append((
            escape(s.model),
            f"{bar(st.baseline.pass_rate)} {pct(st.baseline.pass_rate)}",
            f"{bar(st.skill.pass_rate)} {pct(st.skill.pass_rate)}",
            f"{signed_points(st.lift)} [{signed_points(st.lo)}, {signed_points(st.hi)}]",
            st.verdict,
            f"{s.skill.mean_input():.0f} (+{s.skill_overhead_tokens:.0f})",
            usd(s.skill.cost_usd, free=free),
        ))
    out.table(["model", "baseline", "with skill", "lift pts [95% CI]", "verdict",
               "input tok/call (skill +)", "cost (skill arm)"], rows)
    for s in summaries:
        _notes(s)


def _notes(s: ModelSummary) -> None:
    st = s.stats
    notes = [
        f"McNemar exact p = {st.p_value:.3g} (b={st.b} cases pass only with the skill, "
        f"c={st.c} only without)",
        f"this suite can detect lifts of about {st.detectable * 100:.0f} points or more"
        if st.detectable != float("inf") else "this suite is too small to detect any lift",
    ]
    if st.normalized_gain is not None:
        notes.append(f"normalized gain {st.normalized_gain:.2f}")
    if s.baseline.errors or s.skill.errors:
        notes.append(f"{s.baseline.errors + s.skill.errors} errored samples left out of rates")
    if s.invocation_rate is not None:
        notes.append(f"skill loaded in {pct(s.invocation_rate)} of tool-mode answers")
    if s.cost_per_pass is not None and s.cost_per_pass > 0:
        notes.append(f"{usd(s.cost_per_pass)} per passing answer with the skill")
    out.result(f"  {escape(s.model)}: " + "; ".join(notes))
    if s.non_discriminating:
        shown = escape(", ".join(s.non_discriminating[:5]))
        more = f" (+{len(s.non_discriminating) - 5} more)" if len(s.non_discriminating) > 5 else ""
        out.result(f"  non-discriminating checks (pass in both arms every time): {shown}{more}")

