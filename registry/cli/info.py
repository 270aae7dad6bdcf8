"""`hubskills info`: a skill's description, versions, latest eval results and pull command."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli import _store as shared
from registry.cli._revision_facts import (
    claims_json,
    facts_of,
    print_claims,
    print_signature,
    signature_json,
)
from registry.cli._skill_ref import (
    SkillSource,
    folder_info,
    looks_like_reference,
    no_such_folder,
    skill_folder,
)
from registry.config import Settings
from registry.errors import SkillNotFound, hint_command
from registry.stores import SkillInfo, SkillStore
from registry.stores.revision_facts import RevisionFacts, folder_facts
from registry.stores.summary import SUMMARY_COLUMNS, latest_summary, summary_rows


@click.command("info")
@click.argument("target", metavar="NS/NAME[@VERSION]|PATH")
@shared.json_option
@shared.registry_option
def info_command(target: str, as_json: bool, registry: str | None) -> None:
    """Show a skill: description, versions, signature, latest eval results, the
    publisher's own claims (skill-card.md, BENCHMARK.md), the pull command.

    A folder shows the published skill it is (a pulled folder, or one whose content was
    published); any other folder or a git source shows itself, with its signature checked
    against the anchors you trust.

    \b
    Examples:
      hubskills info hubskills/kernel-builder-cuda-kernels
      hubskills info .agents/skills/agent-skill-md
    """
    settings, store = shared.open_store(registry)
    with ExitStack() as stack:
        info, facts, unpublished = _info_of(target, settings, store, stack)
    from registry.results import trigger_board
    from registry.stores.verifications import badges

    repo, frame = info.repo, store.results_frame()
    # ranked as the board ranks (replayed runs only), so its ranks are the board's
    summary = [] if unpublished else latest_summary(frame, repo, badges(store))
    triggers = [] if unpublished else [
        e for e in trigger_board.trigger_entries(frame, skill=repo) if e.repo == repo]
    if as_json:
        out.as_json({**shared.info_json(info, card=True), "published": not unpublished,
                     "signature": signature_json(facts), "results": summary,
                     "triggers": trigger_board.to_records(triggers),
                     "publisher_claims": claims_json(facts), "pull": f"hubskills pull {repo}"})
    else:
        _print_info(info, summary, triggers, facts)
        if unpublished:
            out.hint(unpublished)


def _info_of(target: str, settings: Settings, store: SkillStore,
             stack: ExitStack) -> tuple[SkillInfo, RevisionFacts | str, str | None]:
    """The skill `info` shows for a folder, a git source or an `ns/name[@version]` reference,
    its signature and claims (of that version, or of the folder itself), and, for a folder or
    source that is no published version, the hint to publish it (else None)."""
    from registry.install import parse_spec
    from registry.install.identity import identify, unidentified_hint

    folder = Path(target).expanduser()
    if SkillSource.is_git(target) and not folder.exists():
        from registry.install.mcp_source import shown

        fetched = stack.enter_context(skill_folder(target, command="info", scan=False))
        source = shown(target)  # an MCP URL's credential is kept for its server, never shown
        return (folder_info(source, fetched), folder_facts(fetched, home=settings.home),
                f"a git source, not a registry entry: {hint_command('pull', source)}")
    if folder.is_dir():
        placed = identify(folder, store)
        try:  # a folder or git source's marker names no registry entry
            if placed is not None and looks_like_reference(placed.repo):
                return (store.info(placed.repo), facts_of(settings, store, placed.repo,
                                                          placed.version), None)
        except SkillNotFound:
            pass
        return (folder_info(target, folder), folder_facts(folder, home=settings.home),
                f"{target} matches no published version of a skill in the {store.kind} "
                f"registry: {unidentified_hint(folder)}")
    if not looks_like_reference(target):
        raise no_such_folder(target, "info")
    repo, ref = parse_spec(target)
    try:
        info = store.info(repo)
    except SkillNotFound as missing:
        raise no_such_folder(target, "info", missing) from None
    version = store.resolve(repo, ref).version if ref is not None else info.version
    return info, facts_of(settings, store, repo, version) if info.versions else \
        "no published version", None


def _print_info(info: SkillInfo, summary: list[dict[str, Any]], triggers: list[Any],
                facts: RevisionFacts | str) -> None:
    out.result(f"{info.repo}  {info.version or '(no version)'}  license: {info.license or '-'}")
    out.result(escape(info.description))
    if info.versions:  # a folder that matches no published version has none of these
        out.result(f"downloads {info.downloads}, likes {info.likes}, "
                   f"updated {info.updated or '-'}")
    print_signature(facts)
    if info.versions:
        out.table(["version", "sha", "date"],
                  [(v.version, v.sha[:12], v.date or "-") for v in info.versions[:10]])
    if summary:
        rows, notes = summary_rows(summary)
        out.table(list(SUMMARY_COLUMNS), [[escape(c) for c in row] for row in rows],
                  title="Evaluation (leaderboard entries)")
        for note in notes:
            out.result(escape(note))
    if triggers:
        from registry.cli._trigger_table import render_triggers

        render_triggers(triggers)
    if not summary and not triggers:
        out.result("No evaluation results yet.")
    print_claims(facts)
    out.command("Pull it:", f"hubskills pull {info.repo}")
