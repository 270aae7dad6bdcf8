"""What a skill page shows, gathered from the store (no Gradio here).

A page is one skill at one version: its SKILL.md, files, versions, signature, latest results
per model, evaluation history over versions, security scan findings, the publisher's own claims
(skill-card.md, BENCHMARK.md, apart from the measured results) and the pull command.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from registry import (
    CLAIMS_LABEL,
    Board,
    Finding,
    HubskillsError,
    Skill,
    board_entries,
    check_repo_id,
    code_span,
    display,
    load_skill,
    revision_facts,
    safe_html,
    scan_folder,
    skill_requirements,
    tag_for,
)

from .leaderboard_view import display_table, trigger_table, verdict_kind
from .messages import counted
from .state import SpaceState

HISTORY_COLUMNS = ("point", "version", "model", "date", "lift_points", "lift_ci",
                   "baseline", "with_skill", "verdict")
_SEVERITY_MARK = {"high": "🔴 high", "medium": "🟠 medium", "low": "🟡 low"}


@dataclass(frozen=True)
class SkillPage:
    """One skill at one version, ready to display."""

    repo: str
    version: str | None
    versions: list[str]
    header: str
    body: str
    raw: str
    files: pd.DataFrame
    version_table: pd.DataFrame
    results: pd.DataFrame
    history: pd.DataFrame
    findings: str
    pull_command: str
    triggers: pd.DataFrame  # trigger evals per version and model; no rows when none
    claims: str = ""  # the publisher's skill-card.md / BENCHMARK.md, safe HTML; "" when none


def pull_command(repo: str, version: str | None) -> str:
    """`hubskills pull ns/name@vX.Y.Z` (unpinned when the skill has no version)."""
    return f"hubskills pull {repo}@{tag_for(version)}" if version else f"hubskills pull {repo}"


def _header(repo: str, version: str | None, description: str, license_: str | None,
            downloads: int, tags: list[str], signature: str = "",
            requires: Sequence[str] = ()) -> str:
    """The page's title block, as safe HTML: the description, tags, the signer's name and
    what the skill requires are the author's text."""
    badges = [code_span(version and tag_for(version) or "unversioned"),
              f"license: {code_span(license_ or 'unspecified')}", counted(downloads, "download")]
    badges += [code_span(f"#{t}") for t in tags if t != "agent-skill"]
    signed = f"\n\nSignature: {code_span(signature)}" if signature else ""
    needs = ("\n\nRequires: " + ", ".join(map(code_span, requires))
             + " (a pull installs them with it)") if requires else ""
    return safe_html(f"## {repo}\n\n{description}\n\n" + " · ".join(badges) + signed + needs)


def _requires(skill: Skill) -> list[str]:
    """The skills `skill` requires, as its `metadata.requires` names them (none when the list
    does not parse: validation says why, not this page)."""
    try:
        return [str(req) for req in skill_requirements(skill.frontmatter)]
    except HubskillsError:
        return []


def claims_markdown(claims: dict[str, str]) -> str:
    """The publisher's claim files under their label, each in a closed `<details>` (their
    headings stay out of the page's outline until opened); "" when the skill ships none."""
    if not claims:
        return ""
    parts = ["## Publisher's claims", "", f"*{CLAIMS_LABEL}*", ""]
    for name, text in claims.items():
        parts += [f"<details><summary>{name} (publisher's claim)</summary>", "",
                  _demoted(text), "", "</details>", ""]
    return "\n".join(parts)


_HEADING = re.compile(r"^(#{1,6})(?=\s)")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def _demoted(markdown: str) -> str:
    """Headings two levels down (at most h6), outside code fences: the claims sit under the
    page's h2, and a heading never skips a level back up."""
    lines, fence = [], None
    for line in markdown.splitlines():
        opened = _FENCE.match(line)
        if opened and (fence is None or opened.group(1).startswith(fence)):
            fence = None if fence else opened.group(1)[:3]
        elif fence is None:
            line = _HEADING.sub(lambda m: "#" * min(6, len(m.group(1)) + 2), line)
        lines.append(line)
    return "\n".join(lines)


def _files_table(folder_files: list[tuple[str, int]]) -> pd.DataFrame:
    return pd.DataFrame([(path, f"{size / 1024:.1f} KB" if size >= 1024 else f"{size} B")
                         for path, size in folder_files], columns=["file", "size"])


def findings_markdown(findings: list[Finding]) -> str:
    """The scan findings as a markdown list, or a clean bill of health (file names and messages
    may quote the skill: they are code spans, and the page shows this through `safe_html`)."""
    if not findings:
        return "✅ **No findings**: no hidden text, risky commands, secrets or outside links."
    lines = [f"**{len(findings)} finding(s)** from `hubskills scan`:", ""]
    for f in findings[:50]:
        where = f"{f.path}:{f.line}" if f.line else f.path
        lines.append(f"- {_SEVERITY_MARK.get(f.severity, f.severity)} {code_span(f.code)} "
                     f"({code_span(where)}): {f.message}")
    if len(findings) > 50:
        lines.append(f"- … and {len(findings) - 50} more")
    return "\n".join(lines)


def history_frame(board: Board, repo: str) -> pd.DataFrame:
    """One bar per version × model × mode (its latest run): the lift in points, its interval,
    and its verdict's kind (the bar's colour: a tall bar whose interval reaches zero is not
    *helps*, and says so)."""
    points = board.skill_history(repo)
    latest: dict[tuple[str, str, str], dict] = {}
    for point in points:  # oldest first: later runs replace earlier ones
        latest[(point["version"] or "-", point["model"], point["mode"])] = point
    rows = []
    models = {model for _, model, _ in latest}
    for (version, model, mode), p in latest.items():
        interval = display.lift_interval(p["lift"], p["lift_lo"], p["lift_hi"])
        # the label shows the interval under the bar; the model only where there are several
        # (a single one is in the tooltip and the evaluations table above)
        rows.append((f"v{version} {interval}" + (f" · {model}" if len(models) > 1 else "")
                     + (f" · {mode}" if mode != "inline" else ""), version, model,
                     (p["date"] or "")[:10], round(p["lift"] * 100, 1), interval,
                     display.pct(p["baseline"]), display.pct(p["with_skill"]),
                     verdict_kind(p["verdict"])))
    return pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))


def results_table(board: Board, repo: str) -> pd.DataFrame:
    """This skill's leaderboard entries (version × model × mode × suite), in leaderboard order,
    each with its rank on the whole leaderboard (`Board.select` keeps it: the number
    `hubskills leaderboard --skill` shows too), not among this skill's own entries; none where
    the leaderboard leaves it unranked."""
    mine = board.select(skill=repo)
    return display_table(board_entries(mine[(mine["repo"] == repo).to_numpy()]))


def skill_page(state: SpaceState, repo: str, version: str | None = None) -> SkillPage:
    """Gather everything the page shows for `repo` at `version` (default: the latest).

    Raises:
        HubskillsError: no such skill or version, or the store failed.
    """
    check_repo_id(repo)
    store = state.store
    info = store.info(repo)
    resolved = store.resolve(repo, version or None)
    folder = state.skill_folder(repo, resolved.sha)
    skill = load_skill(folder)
    files = [(rel, (folder / rel).stat().st_size) for rel in skill.files()]
    versions = pd.DataFrame([(v.version, v.tag, v.sha[:12], (v.date or "")[:10])
                             for v in info.versions],
                            columns=["version", "tag", "revision", "date"])
    board = state.board()
    shown = resolved.version
    facts = revision_facts(store, repo, home=state.settings.home, sha=resolved.sha,
                           folder=folder)
    return SkillPage(
        repo=repo, version=shown, versions=[v.version for v in info.versions],
        header=_header(repo, shown, info.description, info.license, info.downloads, info.tags,
                       facts.signature.label(), _requires(skill)),
        body=safe_html(skill.body), raw=(folder / "SKILL.md").read_text(encoding="utf-8"),
        files=_files_table(files), version_table=versions,
        results=results_table(board, repo), history=history_frame(board, repo),
        findings=safe_html(findings_markdown(scan_folder(folder))),
        pull_command=pull_command(repo, shown),
        triggers=trigger_table([e for e in board.skill_triggers(repo) if e.repo == repo]),
        claims=safe_html(claims_markdown(facts.claims)) if facts.claims else "")
