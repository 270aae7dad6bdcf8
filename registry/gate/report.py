"""The CI gate's result as a Markdown summary (GitHub's step summary) and a JUnit XML report.

Both are written for a person as much as for a tool: the Markdown is one table row per skill ×
model with the verdict and the reason it failed; the JUnit has one testcase per skill × model
(`classname` the skill's folder, `name` the model) whose `failure` names why, and one skipped
testcase per unchanged skill, indented. A changed skill refused before any model call (it does
not load) is one row and one testcase (`name` "not evaluated") whose failure names each reason.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from registry.errors import hint_command
from registry.results.display import lift_interval, pct, points

if TYPE_CHECKING:
    from registry.gate.run import GateCheck, GateResult


NOT_EVALUATED = "not evaluated"  # a refused skill's model, verdict and JUnit name


def headline(result: GateResult) -> str:
    """One line: how many changed skills failed, or that nothing changed."""
    if not result.checks and not result.refused:
        removed = f" (removed: {', '.join(result.removed)})" if result.removed else ""
        return f"nothing to evaluate: no skill changed since {result.base}{removed}"
    refused = {r.folder for r in result.refused}
    skills = {c.folder for c in result.checks} | refused
    failed = {c.folder for c in result.failed()} | refused
    if failed:
        return f"{len(failed)} of {len(skills)} changed skills failed the gate"
    if len(skills) == 1:
        return "the changed skill passed the gate"
    return f"all {len(skills)} changed skills passed the gate"


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell (a folder name may hold `|`)."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def versus_text(check: GateCheck, *, whole: bool = False) -> str:
    """The comparison with the published version, in words; when there is none, a table's
    short word for why ("none found", "not guessed"; "-"), or ``whole``, the sentence that says
    where it was looked for."""
    if check.published is None and check.lookup is not None:
        return (check.lookup.said if whole else None) or check.lookup.short
    if check.published is None or check.versus is None:
        return "-"
    v = check.versus
    text = f"{check.published.label}: {lift_interval(v.lift, v.lo, v.hi)} {v.verdict}"
    return text + (f" ({check.case_changes})" if check.case_changes else "")


def markdown(result: GateResult) -> str:
    """The Markdown summary (see the module docstring)."""
    lines = [f"## hubskills ci: {headline(result)}", ""]
    lines.append(f"Compared with `{result.base}`"
                 + (f"; --min-lift {points(result.min_lift)} points"
                    if result.min_lift is not None else "")
                 + (f"; {len(result.unchanged)} unchanged skill"
                    f"{'s' if len(result.unchanged) != 1 else ''} not evaluated (no model calls)"
                    if result.unchanged else "") + ".")
    if result.checks or result.refused:
        lines += ["", "| skill | model | baseline | with skill | lift [95% CI] | verdict "
                      "| vs published | gate |",
                  "|---|---|---|---|---|---|---|---|"]
        lines += [f"| {_cell(r.folder)} | - | - | - | - | {NOT_EVALUATED} | - | **FAIL** |"
                  for r in result.refused]
        for c in result.checks:
            s = c.lift
            lines.append("| " + " | ".join(_cell(x) for x in (
                c.folder, c.model, pct(s.baseline.pass_rate), pct(s.skill.pass_rate),
                lift_interval(s.lift, s.lo, s.hi), s.verdict, versus_text(c),
                "pass" if c.passed else "**FAIL**")) + " |")
    noted = [(c.folder, note) for c in result.checks for note in c.notes]
    if noted:  # once a skill, whatever its models
        lines += ["", "### For the reviewer", ""]
        lines += [f"- `{_cell(folder)}`: {_cell(note)}" for folder, note in dict.fromkeys(noted)]
    if result.failed() or result.refused:
        lines += ["", "### Why it failed", ""]
        lines += [f"- `{_cell(r.folder)}`: {_cell(why)}" for r in result.refused
                  for why in r.reasons]
        lines += [f"- `{_cell(c.folder)}` on `{_cell(c.model)}`: {_cell(why)}"
                  for c in result.failed() for why in c.failures]
        lines += [""]
        if result.refused:
            lines += [f"Not evaluated (no model call): `{_cell(result.refused[0].hint)}` says "
                      "why, locally."]
        if result.failed():
            first = result.failed()[0]
            again = hint_command("eval", first.folder, "-m", first.model, "-v")
            lines += [f"Rerun one locally: `{_cell(again)}` (per-case table)."]
    return "\n".join(lines) + "\n"


def junit(result: GateResult) -> str:
    """The JUnit XML report (see the module docstring)."""
    failed = result.failed()
    tests = len(result.refused) + len(result.checks) + len(result.unchanged)
    suite_attrs = {"name": "hubskills ci", "tests": str(tests),
                   "failures": str(len(result.refused) + len(failed)), "errors": "0",
                   "skipped": str(len(result.unchanged))}
    root = ET.Element("testsuites", {k: suite_attrs[k] for k in ("name", "tests", "failures")})
    suite = ET.SubElement(root, "testsuite", suite_attrs)
    for r in result.refused:
        case = ET.SubElement(suite, "testcase", {"classname": r.folder, "name": NOT_EVALUATED,
                                                 "time": "0"})
        failure = ET.SubElement(case, "failure", {"message": "; ".join(r.reasons),
                                                  "type": "hubskills.gate"})
        failure.text = (f"{r.folder} was not evaluated (no model call): "
                        + "; ".join(r.reasons) + f". Locally: {r.hint}")
    for c in result.checks:
        case = ET.SubElement(suite, "testcase", {"classname": c.folder, "name": c.model,
                                                 "time": "0"})
        s = c.lift
        detail = (f"{c.skill} ({c.folder}) on {c.model}, run {c.run_id}: baseline "
                  f"{pct(s.baseline.pass_rate)}, with skill {pct(s.skill.pass_rate)}, lift "
                  f"{lift_interval(s.lift, s.lo, s.hi)}, {s.verdict}; vs published: "
                  f"{versus_text(c, whole=True)}")
        if c.failures:
            failure = ET.SubElement(case, "failure", {"message": "; ".join(c.failures),
                                                      "type": "hubskills.gate"})
            failure.text = detail
        ET.SubElement(case, "system-out").text = detail
    for folder in result.unchanged:
        case = ET.SubElement(suite, "testcase", {"classname": folder, "name": "unchanged",
                                                 "time": "0"})
        ET.SubElement(case, "skipped", {"message": f"unchanged since {result.base}"})
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"
