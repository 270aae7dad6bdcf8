"""Rendering of evaluation summaries for the CLI (progress is in `_output`)."""

from __future__ import annotations

from rich.markup import escape

from registry.cli import _output as out
from registry.evaluation import display
from registry.evaluation.report import ModelSummary
from registry.evaluation.results import RunManifest


def bar(rate: float, width: int = 5) -> str:
    """A text bar like upskill's: filled blocks for the share."""
    filled = round(max(0.0, min(1.0, rate)) * width)
    return "█" * filled + "░" * (width - filled)


def render_summaries(manifest: RunManifest, summaries: list[ModelSummary]) -> None:
    """The per-model table and the notes that keep the numbers honest."""
    n_cases = len(manifest.case_ids)
    subset = f" of {manifest.suite_cases}" if manifest.subset else ""
    out.result(
        f"[bold]{escape(manifest.skill_name)}[/] · {n_cases}{subset} cases × {manifest.runs} "
        f"run{'s' if manifest.runs != 1 else ''} · "
        f"{display.mode(manifest.mode, manifest.placement)} · run {manifest.run_id} "
        f"({escape(manifest.label)})")
    rows = []
    for s in summaries:
        st = s.stats
        rows.append((
            escape(s.model),
            f"{bar(st.baseline.pass_rate)} {display.pct(st.baseline.pass_rate)}",
            f"{bar(st.skill.pass_rate)} {display.pct(st.skill.pass_rate)}",
            display.lift_interval(st.lift, st.lo, st.hi), display.p_value(st.p_value),
            escape(st.verdict),
            f"{s.skill.mean_input():.0f} (+{s.skill_overhead_tokens:.0f})",
            display.usd(s.skill.cost_usd, s.model),
        ))
    out.table(["model", "baseline", "with skill", "lift pts [95% CI]", "p (exact)", "verdict",
               "input tok/call (skill +)", "cost (skill arm)"], rows,
              drop=("input tok/call (skill +)", "cost (skill arm)", "p (exact)", "verdict"))
    for s in summaries:
        _notes(s)
    if manifest.is_partial or manifest.subset:
        out.result(f"  This run is {escape(manifest.label)}: it cannot be pushed or ranked"
                   + (f" until it finishes (hubskills eval SKILL --resume {manifest.run_id})."
                      if manifest.is_partial else " (a subset of the suite is never ranked)."))


def _notes(s: ModelSummary) -> None:
    st = s.stats
    notes = [
        f"{escape(st.verdict)}; exact test p = {display.p_value(st.p_value)} ({st.b} cases "
        f"score higher with the skill, {st.c} lower)",
        display.detectable(st.detectable),
    ]
    if st.normalized_gain is not None:
        notes.append(f"normalized gain {st.normalized_gain:.2f}")
    if s.baseline.errors or s.skill.errors:
        notes.append(f"{s.baseline.errors + s.skill.errors} samples failed in transport and "
                     "are left out of rates")
    if s.invocation_rate is not None:
        notes.append(f"skill loaded in {display.pct(s.invocation_rate)} of tool-mode answers")
    if s.cost_per_pass is not None and s.cost_per_pass > 0:
        notes.append(f"{display.usd(s.cost_per_pass, s.model)} per passing answer with the "
                     "skill")
    out.result(f"  {escape(s.model)}: " + "; ".join(notes))
    if st.note:
        out.result(f"  {escape(st.note)}")
    if s.non_discriminating:
        shown = escape(", ".join(s.non_discriminating[:5]))
        more = f" (+{len(s.non_discriminating) - 5} more)" if len(s.non_discriminating) > 5 else ""
        out.result(f"  non-discriminating checks (pass in both arms every time): {shown}{more}")

