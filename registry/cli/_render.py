"""Rendering of evaluation runs for the CLI: the report of a run, its per-model notes, agent
mode and transcripts (progress is in `_output`)."""

from __future__ import annotations

import shlex
from pathlib import Path

from rich.markup import escape

from registry.agent.outcome import call_arguments
from registry.cli import _output as out
from registry.install.transaction import STAGING_PREFIX
from registry.results import display
from registry.results.report import ModelSummary, per_case_table, summarize
from registry.results.runs import ResultRow, RunManifest
from registry.secrets import scrub


def report_run(manifest: RunManifest, rows: list[ResultRow], *, as_json: bool,
               verbose: bool) -> list[ModelSummary]:
    """A run's report (JSON, or the table and its notes); its summaries, for the caller to act
    on (a run where no model answered fails)."""
    summaries = summarize(rows, manifest)
    if as_json:
        out.as_json({"manifest": manifest_json(manifest),
                     "summaries": [s.to_dict() for s in summaries]})
        return summaries
    render_summaries(manifest, summaries)
    if manifest.mode == "agent":
        render_agent(summaries)
    answered = [r for r in rows if r.error_kind != "transport"]  # a failed call is no hit
    cached = sum(r.cached for r in answered)
    if cached:  # a rerun of the same requests costs nothing and says so
        share = "all" if cached == len(rows) else f"{cached} of {len(rows)}"
        out.result(f"  {share} answers came from the cache (same model, prompt and settings); "
                   "--no-cache asks the models again")
    if (manifest.code_checks or "").startswith("skipped"):
        out.warn(f"code checks (python, exec) {manifest.code_checks}: they were left out "
                 "of every score above")
    if verbose:
        for summary in summaries:
            _case_table(rows, summary.model)
    return summaries


def manifest_json(manifest: RunManifest) -> dict:
    """A manifest as JSON, with whether it is partial or a subset and its label."""
    return {**manifest.model_dump(), "partial": manifest.is_partial, "subset": manifest.subset,
            "label": manifest.label}


def _case_table(rows: list[ResultRow], model: str) -> None:
    def marks(values: list) -> str:
        return "".join("✓" if v else ("E" if v is None else "✗") for v in values)

    out.table(["case", "baseline", "with skill", "status (skill)", "why it failed"],
              [(escape(e["case"]), marks(e["baseline"]), marks(e["skill"]), e["skill_status"],
                escape((e["why"] or _error_text(rows, model, e["case"]))[:80]))
               for e in per_case_table(rows, model)],
              title=escape(model))


def _error_text(rows: list[ResultRow], model: str, case_id: str) -> str:
    """Why a case's row is an error (an `E` cell), when no failing check says why."""
    errors = sorted((r for r in rows if r.model == model and r.case_id == case_id and r.is_error),
                    key=lambda r: (r.arm != "skill", r.repeat))
    for row in errors:
        reason = row.error or next((c.reason for c in row.checks if c.passed is None), "")
        if reason:
            return reason if row.arm == "skill" else f"{row.arm}: {reason}"
    return ""


def bar(rate: float, width: int = 5) -> str:
    """A text bar like upskill's: filled blocks for the share."""
    filled = round(max(0.0, min(1.0, rate)) * width)
    return "█" * filled + "░" * (width - filled)


def render_summaries(manifest: RunManifest, summaries: list[ModelSummary]) -> None:
    """The per-model table and the notes that keep the numbers honest."""
    n_cases = len(manifest.case_ids)
    cases = f"{n_cases} of {display.count(manifest.suite_cases, 'case')}" \
        if manifest.subset and manifest.suite_cases is not None else display.count(n_cases, "case")
    out.joined([scrub(part) for part in (  # a part is never cut (`run ID (its status)`)
        f"[bold]{escape(manifest.skill_name)}[/]",
        f"{cases} × {manifest.runs_text}",
        display.mode(manifest.mode, manifest.placement),
        f"run {manifest.run_id} ({escape(manifest.label)})")])
    if manifest.dependencies:  # loaded in the skill arm only
        from registry.evaluation.dependencies import dependency_lines

        out.result("  the skill arm also loaded the skills it requires: "
                   + "; ".join(escape(line) for line in dependency_lines(manifest.dependencies)))
    rows = []
    for s in summaries:
        st = s.stats
        if s.failed:  # nothing was measured: no rate, least of all 0%
            rows.append((escape(s.model), "-", "-", "-", "-", "failed: no sample graded", "-",
                         "-"))
            continue
        rows.append((
            escape(s.model),
            f"{bar(st.baseline.pass_rate)} {display.pct(st.baseline.pass_rate)}",
            f"{bar(st.skill.pass_rate)} {display.pct(st.skill.pass_rate)}",
            display.lift_interval(st.lift, st.lo, st.hi), display.p_value(st.p_value),
            escape(st.verdict),
            f"{s.skill.mean_input():.0f} (+{s.skill_overhead_tokens:.0f})",
            display.usd(s.skill.cost_usd, s.model),
        ))
    if rows:  # a run that never got an answer has none: no empty table, no columns left out
        out.table(["model", "baseline", "with skill", "lift pts [95% CI]", "p (exact)",
                   "verdict", "input tok/call (skill +)", "cost (skill arm)"], rows,
                  drop=("input tok/call (skill +)", "cost (skill arm)", "baseline",
                        "with skill"))
    for s in summaries:
        _notes(s)
    if manifest.is_partial:
        if (failure := manifest.start_failure) is not None:
            out.result(f"  This run failed to start ({escape(failure)}): nothing to push or "
                       "rank; once that is fixed, run it with:")
        else:
            out.result(f"  This run is {escape(manifest.label)}: it cannot be pushed or ranked "
                       "until it finishes; finish it with:")
        out.command("", f"hubskills eval {_resumable(manifest)} --resume {manifest.run_id}",
                    indent="    ")
    elif manifest.subset:
        out.result(f"  This run asked {len(manifest.case_ids)} of the suite's "
                   f"{manifest.suite_cases} cases: a subset of the suite is never ranked; "
                   "pushed, its rows say so and are listed unranked.")


def _resumable(manifest: RunManifest) -> str:
    """What `eval --resume` takes for this run: the folder it evaluated while it is there (a
    registry skill's was a temporary copy, gone), else its registry reference."""
    folder = manifest.skill_path
    fetched = folder and any(part.startswith(STAGING_PREFIX) for part in Path(folder).parts)
    if folder and not fetched and Path(folder).is_dir():
        return shlex.quote(folder)
    return manifest.skill_repo or (shlex.quote(folder) if folder else "SKILL")


def _errors(s: ModelSummary) -> list[str]:
    """What was lost to errors, by cause, each with its first reason."""
    e, notes = s.errors, []
    if e.transport:
        notes.append(f"{display.count(e.transport, 'sample')} failed in transport (first: "
                     f"{escape(_clip(e.first_transport))})")
    if e.check:
        notes.append(f"{display.count(e.check, 'sample')} whose checks could not run (first: "
                     f"{escape(_clip(e.first_check))})")
    if e.ungraded:
        notes.append(f"{display.count(e.ungraded, 'sample')} had every check skipped")
    return notes


def _clip(text: str | None, limit: int = 300) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _notes(s: ModelSummary) -> None:
    st = s.stats
    if s.failed:
        out.result(f"  {escape(s.model)}: failed: every sample was lost to an error; "
                   + "; ".join(_errors(s)))
        return
    notes = [
        f"{escape(st.verdict)}; exact test {display.p_equals(st.p_value)} "
        f"({display.count(st.b, 'case')} score{'s' if st.b == 1 else ''} higher with the skill, "
        f"{st.c} lower)",
        display.detectable(st.detectable),
    ]
    if st.normalized_gain is not None:
        notes.append(f"normalized gain {st.normalized_gain:.2f}")
    if errors := _errors(s):
        notes.append(", ".join(errors) + ": left out of both arms' rates")
    if s.invocation_rate is not None:
        notes.append(f"skill loaded in {display.pct(s.invocation_rate)} of tool-mode answers")
    if s.cost_per_pass is not None and s.cost_per_pass > 0:
        notes.append(f"{display.usd(s.cost_per_pass, s.model)} per passing answer with the "
                     "skill")
    out.result(f"  {escape(s.model)}: " + "; ".join(notes))
    if st.note:
        out.result(f"  {escape(st.note)}")
    if (pw := s.pairwise) is not None:
        decided = pw.pairs - pw.no_verdict
        out.result(f"  pairwise judge: skill preferred in {pw.skill_wins}, baseline in "
                   f"{pw.baseline_wins}, tie in {pw.ties} of {display.count(pw.pairs, 'pair')}; "
                   f"position bias {display.pct(pw.bias_rate)} (the two orders disagreed in "
                   f"{pw.disagreed} of {decided})")
    if s.non_discriminating:
        shown = escape(", ".join(s.non_discriminating[:5]))
        more = f" (+{len(s.non_discriminating) - 5} more)" if len(s.non_discriminating) > 5 else ""
        out.result(f"  non-discriminating checks (pass in both arms every time): {shown}{more}")


def render_agent(summaries: list[ModelSummary]) -> None:
    """Agent mode: how each arm worked on each model, and the skill's activation."""
    rows = []
    for s in summaries:
        for arm, a in (s.agent or {}).items():
            rate = getattr(s.stats, arm).pass_rate
            calls = ", ".join(f"{tool} {n}" for tool, n in a.tool_calls.items()) or "none"
            rows.append((escape(s.model), arm, ", ".join(a.protocols), display.pct(rate),
                         f"{a.mean_turns:.1f}", escape(calls),
                         f"{a.input_tokens:,} / {a.output_tokens:,}",
                         display.usd(a.cost_usd, s.model), f"{a.wall_s:.1f} s",
                         "—" if a.tokens_per_pass is None else f"{a.tokens_per_pass:,.0f}"))
    out.table(["model", "arm", "protocol", "pass", "turns/sample", "tool calls", "tokens in/out",
               "cost", "wall", "tokens/pass"], rows, title="Agent mode")
    for s in summaries:
        act = s.activation
        if act is None:
            continue
        recall = "—" if act.recall is None else display.pct(act.recall)
        false = "no expect_skill: false cases" if act.false_rate is None else (
            f"false activations {act.false_activations} of {act.unexpected} "
            f"({display.pct(act.false_rate)})")
        out.result(f"  {escape(s.model)}: activation recall {recall} ({act.activated} of "
                   f"{display.count(act.expected, 'sample')} read SKILL.md); {false}")


def render_transcript(record: dict) -> None:
    """One sample's trajectory: messages, tool calls and results, then the workspace diff."""
    out.result(f"[bold]{escape(str(record.get('model')))}[/] · {record.get('arm')} · case "
               f"{escape(str(record.get('case_id')))} · repeat {record.get('repeat')} · "
               f"{record.get('protocol')} · stopped: {record.get('stop_reason')}")
    for entry in record.get("transcript", []):
        kind, text = entry.get("kind"), str(entry.get("text", ""))
        if kind == "tool_call":
            args = call_arguments(entry.get("arguments"))
            out.result(f"→ {escape(str(entry.get('tool')))}({escape(args)})")
        elif kind == "tool_result":
            mark = "✗" if entry.get("is_error") else "←"
            out.result(escape(f"{mark} {_indent(text)}"))
        else:
            out.result(escape(f"[{kind}] {_indent(text)}"))
    changes = record.get("diff", [])
    out.result(f"workspace diff: {display.count(len(changes), 'file')} changed")
    for change in changes:
        out.result(escape(f"  {change['status']} {change['path']} ({change['size']} bytes)"
                          + (f": {change['note']}" if change.get("note") else "")))
        if change.get("diff"):
            out.result(escape(change["diff"].rstrip()))


def _indent(text: str, limit: int = 2000) -> str:
    text = text if len(text) <= limit else text[:limit] + " …"
    return text.replace("\n", "\n  ")
