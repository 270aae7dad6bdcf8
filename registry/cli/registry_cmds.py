"""`hubskills publish | search | info | versions | registry seed|path`: the registry commands."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._skill_ref import (
    SkillSource,
    looks_like_reference,
    no_such_folder,
    skill_folder,
    source_info,
)
from registry.config import Settings
from registry.errors import HubskillsError, SkillNotFound
from registry.publishing.publish import PublishResult, ValidationFailed, publish_skill
from registry.results import display
from registry.results.leaderboard import Entry, entries
from registry.scan import Finding, ScanFailed
from registry.stores import SkillInfo, SkillStore, get_store, local_store
from registry.stores.seed import default_seed_dir, seed_store
from registry.stores.summary import SUMMARY_COLUMNS, latest_summary, summary_rows

registry_option = click.option(
    "--registry", type=click.Choice(["local", "hub"]), default=None,
    help="The embedded local registry (default) or the Hugging Face Hub "
         "[env: HUBSKILLS_REGISTRY].")
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


def _open(registry: str | None) -> tuple[Settings, SkillStore]:
    settings = Settings.from_env()
    return settings, get_store(settings, registry)


@click.command("publish")
@click.argument("skill", type=SkillSource(), metavar="FOLDER|GIT-SOURCE")
@click.option("--repo", metavar="NS/NAME", help="Target repo (default: <namespace>/<name>).")
@click.option("--version", "version", metavar="X.Y.Z", help="Version to publish.")
@click.option("--bump", type=click.Choice(["major", "minor", "patch"]),
              help="Publish the next version after the latest published one.")
@click.option("--private", is_flag=True, help="Create the repo private (Hub).")
@click.option("--with-run", "with_runs", multiple=True, metavar="RUN_ID",
              help="Attach a local eval run of this exact folder (repeatable).")
@click.option("--dry-run", is_flag=True, help="Check everything, print the plan, write nothing.")
@click.option("--allow-risky", is_flag=True,
              help="Publish despite high-severity scan findings (never despite secrets).")
@registry_option
@click.option("--json", "as_json", is_flag=True,
              help="The plan and what was published (revision, results) as JSON.")
def publish_command(skill: Path, repo: str | None, version: str | None, bump: str | None,
                    private: bool, with_runs: tuple[str, ...], dry_run: bool,
                    allow_risky: bool, registry: str | None, as_json: bool) -> None:
    """Validate, scan and publish a skill folder as a new immutable version.

    \b
    Examples:
      hubskills publish skills/csv-cleaning --dry-run
      hubskills publish skills/csv-cleaning --bump patch --with-run 20261122-103000-a1b2c3
      hubskills publish skills/csv-cleaning --registry hub --repo me/csv-cleaning
      hubskills publish github:anthropics/skills/skills/pdf --repo me/pdf   # source in the card
    """
    settings, store = _open(registry)
    skill = click.get_current_context().with_resource(skill_folder(skill, command="publish",
                                                                   scan=False))
    try:
        result = publish_skill(store, skill, runs_dir=settings.runs_dir, repo=repo,
                               version=version, bump=bump, private=private,
                               with_runs=with_runs, dry_run=dry_run, allow_risky=allow_risky,
                               settings=settings)
    except ValidationFailed as err:
        out.table(["severity", "where", "code", "message"],
                  [(p.severity, p.location(), p.code, escape(p.message)) for p in err.problems])
        raise
    except ScanFailed as err:
        _print_findings(err.findings)
        raise
    if as_json:
        out.as_json({**asdict(result), "published": result.published is not None,
                     "results": [appended.path for appended in result.results],
                     "pull": result.pull_command})
    else:
        _print_publish(result)


def _print_findings(findings: list[Finding]) -> None:
    if findings:
        out.table(["severity", "code", "where", "message"],
                  [(f.severity, f.code, escape(f"{f.path}:{f.line}" if f.line else f.path),
                    escape(f.message)) for f in findings])


def _print_publish(result: PublishResult) -> None:
    plan = result.plan
    for problem in plan.problems:
        out.warn(f"{problem.location()}: {problem.code}: {escape(problem.message)}")
    _print_findings(plan.findings)
    if result.published is None:
        out.result(f"Dry run: would publish {plan.repo} {plan.tag} to the {plan.registry} "
                   f"registry ({len(plan.files)} files, {plan.content_hash[:19]})")
        for rel in plan.files:
            out.result(f"  {escape(rel)}")
        for run_id in plan.runs:
            out.result(f"  + results of run {run_id}")
        out.result(f"version {plan.version} from {plan.version_source}. Nothing was written.")
        return
    out.result(f"Published {plan.repo} {plan.tag} to the {plan.registry} registry")
    out.result(f"  revision  {result.published.sha}")
    out.result(f"  version   {plan.version} ({plan.version_source})")
    for appended in result.results:  # a pull request: someone else's dataset, awaiting review
        out.result(f"  results   {appended.path}" + (
            f" (unreviewed: proposed in {appended.pr_url})" if appended.pr_url else ""))
    out.result(f"Pull it:  {result.pull_command}")


@click.command("search")
@click.argument("query", required=False, default="")
@click.option("--sort", type=click.Choice(["downloads", "likes", "lift"]), default="downloads",
              show_default=True, help="Order of the results.")
@click.option("--limit", type=click.IntRange(min=0), default=50, show_default=True,
              help="Skills to show at most (0: all).")
@json_option
@registry_option
def search_command(query: str, sort: str, limit: int, as_json: bool,
                   registry: str | None) -> None:
    """Find skills by name or description.

    \b
    Examples:
      hubskills search cuda
      hubskills search --sort lift --json
    """
    _, store = _open(registry)
    best: dict[str, Entry] = {}
    infos = store.search(query, sort=sort, limit=limit or _ALL,
                         lift_key=(lambda frame: _best_entries(frame, best)) if sort == "lift"
                         else None)
    if as_json:
        out.as_json([{**_info_json(i, card=False), **_lift_json(best.get(i.repo))}
                     for i in infos] if sort == "lift" else
                    [_info_json(i, card=False) for i in infos])
    elif not infos:
        out.result(f"No skills match '{query}'." if query else "No skills yet.")
    elif sort == "lift":
        out.table(["skill", "version", "lift [95% CI]", "model", "downloads", "description"],
                  [(i.repo, i.version or "-", _lift_text(best.get(i.repo)),
                    best[i.repo].model if i.repo in best else "-", i.downloads,
                    escape(_clip(i.description))) for i in infos],
                  drop=["downloads", "model", "version"])
    else:
        out.table(["skill", "version", "downloads", "likes", "description"],
                  [(i.repo, i.version or "-", i.downloads, i.likes,
                    escape(_clip(i.description))) for i in infos],
                  drop=["likes", "downloads", "version"])


_ALL = 100_000  # `--limit 0`: every skill, as `leaderboard --limit 0` shows every entry


def _best_entries(frame: Any, best: dict[str, Entry]) -> dict[str, float]:
    """The lift key `search --sort lift` orders by (`summary.lift_key`), keeping each skill's
    best ranked entry in `best` so the table and the JSON show the lift it was sorted by."""
    for entry in entries(frame):
        if entry.rank is not None and entry.repo and entry.repo not in best:
            best[entry.repo] = entry  # entries come best first
    return {repo: entry.lift_lo for repo, entry in best.items()}


def _lift_text(entry: Entry | None) -> str:
    return display.lift_interval(entry.lift, entry.lift_lo, entry.lift_hi) if entry else "-"


def _lift_json(entry: Entry | None) -> dict[str, Any]:
    """The best ranked entry's lift (shares, as in the leaderboard's JSON), null when unranked."""
    return {"lift": entry.lift if entry else None, "lift_lo": entry.lift_lo if entry else None,
            "lift_hi": entry.lift_hi if entry else None,
            "lift_model": entry.model if entry else None}


@click.command("info")
@click.argument("target", metavar="NS/NAME[@VERSION]|PATH")
@json_option
@registry_option
def info_command(target: str, as_json: bool, registry: str | None) -> None:
    """Show a skill: description, versions, latest eval results, the pull command.

    A folder shows the published skill it is (a pulled folder, or one whose content was
    published).

    \b
    Examples:
      hubskills info hubskills/kernel-builder-cuda-kernels
      hubskills info .agents/skills/agent-skill-md
    """
    _, store = _open(registry)
    info = _info_of(target, store)
    from registry.results import trigger_board

    repo, frame = info.repo, store.results_frame()
    summary = latest_summary(frame, repo)
    triggers = [e for e in trigger_board.trigger_entries(frame, skill=repo) if e.repo == repo]
    if as_json:
        out.as_json({**_info_json(info, card=True), "results": summary,
                     "triggers": trigger_board.to_records(triggers),
                     "pull": f"hubskills pull {repo}"})
    else:
        _print_info(info, summary, triggers)


def _info_of(target: str, store: SkillStore) -> SkillInfo:
    """The registry skill `info` shows for a folder or an `ns/name[@version]` reference."""
    from registry.install import parse_spec
    from registry.install.identity import identify, unidentified_hint

    folder = Path(target).expanduser()
    if SkillSource.is_git(target) and not folder.exists():
        return source_info(target)
    if folder.is_dir():
        placed = identify(folder, store)
        if placed is None:
            raise HubskillsError(f"{target} is no published version of a skill in the "
                                 f"{store.kind} registry", hint=unidentified_hint(folder))
        return store.info(placed.repo)
    if not looks_like_reference(target):
        raise no_such_folder(target, "info")
    repo, ref = parse_spec(target)
    try:
        info = store.info(repo)
    except SkillNotFound as missing:
        raise no_such_folder(target, "info", missing) from None
    if ref is not None:
        store.resolve(repo, ref)  # an unknown version is an error, not the latest's info
    return info


def _print_info(info: SkillInfo, summary: list[dict[str, Any]], triggers: list[Any]) -> None:
    out.result(f"{info.repo}  {info.version or '(no version)'}  license: {info.license or '-'}")
    out.result(escape(info.description))
    out.result(f"downloads {info.downloads}, likes {info.likes}, updated {info.updated or '-'}")
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
        from registry.cli.leaderboard import render_triggers

        render_triggers(triggers)
    if not summary and not triggers:
        out.result("No evaluation results yet.")
    out.result(f"Pull it:  hubskills pull {info.repo}")


@click.command("versions")
@click.argument("repo", metavar="NS/NAME")
@json_option
@registry_option
def versions_command(repo: str, as_json: bool, registry: str | None) -> None:
    """List a skill's published versions, newest first.

    \b
    Example:
      hubskills versions hubskills/agent-skill-md
    """
    _, store = _open(registry)
    versions = store.versions(repo)
    if as_json:
        out.as_json([asdict(v) for v in versions])
    elif not versions:
        out.result(f"{repo} has no published versions.")
    else:
        out.table(["version", "tag", "sha", "date"],
                  [(v.version, v.tag, v.sha, v.date or "-") for v in versions])


@click.group("registry")
def registry_group() -> None:
    """Manage the embedded local registry."""


@registry_group.command("seed")
@click.option("--force", is_flag=True, help="Seed again, adding what is missing.")
@click.option("--from", "source", type=click.Path(path_type=Path, exists=True, file_okay=False),
              help="A folder of skills (default: the project's example skills).")
def registry_seed_command(force: bool, source: Path | None) -> None:
    """Publish example skills (and their recorded runs) into the local registry.

    \b
    Examples:
      hubskills registry seed
      hubskills registry seed --from ./my-skills --force
    """
    settings = Settings.from_env()
    report = seed_store(local_store(settings), source or default_seed_dir(), force=force,
                        settings=settings)
    if report.already_seeded:
        out.result("Already seeded (use --force to add what is missing).")
        return
    for line in report.published:
        out.result(f"published  {line}")
    for line in report.skipped:
        out.result(f"skipped    {escape(line)}")
    for run_id, status in report.verified.items():
        out.result(f"replayed   run {run_id}: {status}")
    out.result(f"{len(report.published)} skills, {len(report.runs)} runs seeded.")


@registry_group.command("path")
def registry_path_command() -> None:
    """Print the local registry's folder."""
    out.result(str(Settings.from_env().store_dir))


def _info_json(info: SkillInfo, *, card: bool) -> dict[str, Any]:
    data = asdict(info)
    if not card:
        data.pop("card")
        data.pop("versions")
    return data


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

