"""Compare two runs: each run's summary per model (the one engine's), and which cases the
skill arm improved or regressed on from A to B."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from registry.results.display import case_order, mode
from registry.results.report import summarize
from registry.results.runs import (
    ResultRow,
    RunManifest,
    latest_rows,
    read_manifest,
    read_rows,
)

#: The settings that make two runs' numbers differ besides the skill: (label, how to read it).
SETTINGS = (("mode", lambda m: mode(m.mode, m.placement)),
            ("models", lambda m: ", ".join(m.models)), ("suite", lambda m: m.suite_hash[:19]),
            ("cases", lambda m: len(m.case_ids)),
            ("runs", lambda m: f"up to {m.runs} (adaptive)" if m.adaptive else m.runs),
            ("judge", lambda m: m.judge or "-"),
            ("temperature", lambda m: m.temperature), ("max tokens", lambda m: m.max_tokens),
            ("harness", lambda m: m.harness or "-"), ("sandbox", lambda m: m.sandbox or "-"),
            ("dependencies", lambda m: ", ".join(  # what the skill arm loaded with the skill
                f"{d.skill} {d.version or d.revision[:12]}" for d in m.dependencies) or "-"))


def _skill_passes(rows: list[ResultRow]) -> dict[tuple[str, str], list[bool]]:
    """Per (model, case), the graded with-skill answers."""
    passes: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for row in rows:
        if row.arm == "skill" and not row.is_error:
            passes[(row.model, row.case_id)].append(bool(row.passed))
    return passes


def compare_runs(runs_root: Path, run_a: str, run_b: str, *,
                 same_skill: bool = False) -> dict[str, Any]:
    """Both runs' summaries, and per (model, case) the with-skill pass rates in A and B,
    labelled improved/regressed/same. Runs of two skills pair no cases: two runs are of one
    skill when they name it alike, or the same repo, or with `same_skill` (the caller knows:
    the CI gate's renamed skill against its published version)."""
    manifests = read_manifest(runs_root, run_a), read_manifest(runs_root, run_b)
    rows_a = latest_rows(read_rows(runs_root, run_a))
    rows_b = latest_rows(read_rows(runs_root, run_b))
    answers_a, answers_b = _skill_passes(rows_a), _skill_passes(rows_b)
    a = {key: sum(v) / len(v) for key, v in answers_a.items()}
    b = {key: sum(v) / len(v) for key, v in answers_b.items()}
    first, second = manifests
    other_skill = not same_skill and first.skill_name != second.skill_name \
        and not (first.skill_repo and first.skill_repo == second.skill_repo)
    if other_skill:  # case ids of two suites only look alike: "c1" is not the same question
        a, b = {}, {}
    cases = []
    for key in sorted(set(a) & set(b), key=lambda k: (k[0], case_order(k[1]))):
        delta = b[key] - a[key]
        change = "improved" if delta > 0 else "regressed" if delta < 0 else "same"
        cases.append({"model": key[0], "case": key[1], "a": a[key], "b": b[key],
                      "change": change})
    counts = {k: sum(c["change"] == k for c in cases) for k in ("improved", "regressed", "same")}
    only = len(set(a) ^ set(b))
    summary = (f"{counts['improved']} improved, {counts['regressed']} regressed, "
               f"{counts['same']} unchanged" + (f", {only} in one run only" if only else ""))
    if other_skill:
        summary = "two different skills: their cases are not compared"
    runs = {m.run_id: {"label": m.label, "skill": m.skill_repo or m.skill_name,
                       "version": m.skill_version, "revision": m.skill_revision,
                       "runs": m.runs, "summaries": [s.to_dict() for s in summarize(rows, m)]}
            for m, rows in zip(manifests, (rows_a, rows_b), strict=True)}
    return {"run_a": run_a, "run_b": run_b, "differences": differences(*manifests),
            "summary": summary, "counts": counts, "runs": runs, "cases": cases,
            "note": noise_note([len(answers[key]) for key in set(a) & set(b)
                                for answers in (answers_a, answers_b)]
                               or [min(m.runs for m in manifests)])}


def differences(a: RunManifest, b: RunManifest) -> list[str]:
    """Every setting that differs from run A to run B, as `mode: inline (user) → tool`: a
    comparison says what changed before any number."""
    skill = [f"skill: {a.skill_name} → {b.skill_name}"] if a.skill_name != b.skill_name else []
    return skill + [f"{label}: {read(a)} → {read(b)}" for label, read in SETTINGS
                    if read(a) != read(b)]


def noise_note(repeats: list[int]) -> str:
    """Why one case's change is no evidence: its rate rests on `repeats` answers per run (the
    fewest to the most any compared case has: an adaptive run asks some cases less often than
    its cap, and a walk read "rests on 3 answers" beside a rate of 50%)."""
    fewest, most = min(repeats), max(repeats)
    count = f"{fewest}" if fewest == most else f"{fewest} to {most}"
    return (f"each case's rate rests on {count} answer{'s' if most != 1 else ''} per run, "
            "so single cases flip by chance: a change is evidence only when the lift "
            "intervals above do not overlap")
