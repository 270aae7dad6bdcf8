"""`hubskills pull`: install a skill into your agents' folders, pinned in skills.lock."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

import click

from registry.cli import _pull_shared as shared
from registry.cli._skill_ref import closest_reference, no_such_folder, say_if_unpublishable
from registry.config import Settings
from registry.errors import SkillNotFound, hint_command
from registry.install import PullResult, pull
from registry.install.agents import agent_names
from registry.install.mcp_source import is_mcp, parse_mcp, shown, trust_command
from registry.install.pull import Plan, pull_source
from registry.install.sources import is_source
from registry.registries import get_store


@click.command("pull")
@click.argument("spec", metavar="NS/NAME[@VERSION|@SHA] | ./FOLDER | "
                "github:OWNER/REPO[/PATH][@REF] | GIT-URL[//PATH][@REF] | mcp+URL | "
                "'mcp+stdio:COMMAND'")
@click.option("--skill", "skills", multiple=True, metavar="NAME",
              help="The skill to take from a source holding several (repeatable); from an "
                   "MCP server, NS/NAME picks the repo when several serve that name.")
@click.option("--all-skills", is_flag=True, help="Take every skill a source holds.")
@click.option("--agent", "agent", metavar="NAME,...",
              help=f"Agents to serve, e.g. claude,cursor ({len(agent_names()) - 1} known: "
                   "`hubskills agents` lists them; default: the detected ones).")
@click.option("--all", "all_agents", is_flag=True, help="Serve every known agent.")
@shared.global_option
@click.option("--copy", is_flag=True, help="Copy into agent folders instead of linking.")
@click.option("--force", is_flag=True, help="Replace a folder hubskills did not install, "
                                            "or discard local changes.")
@click.option("--dry-run", is_flag=True, help="Fetch, verify and scan; write nothing.")
@click.option("--allow-risky", is_flag=True,
              help="Install despite high-severity findings (never despite secrets).")
@click.option("--require-signed", is_flag=True,
              help="Refuse a skill without a skill.oms.sig (a present one is always verified "
                   "against the anchors `hubskills trust add` stored).")
@shared.graph_options
@shared.registry_option
@shared.project_option
@shared.json_option
def pull_command(spec: str, skills: tuple[str, ...], all_skills: bool, agent: str | None,
                 all_agents: bool, global_: bool, copy: bool, force: bool, dry_run: bool,
                 allow_risky: bool, require_signed: bool, accept_new_signer: bool,
                 allow_namespace: tuple[str, ...], registry: str | None, project: Path,
                 as_json: bool) -> None:
    """Install a skill into .agents/skills and your agents' folders, pinned in skills.lock.

    SPEC is a registry skill, a folder, or a git source: a folder inside the repository after
    the repository (`//PATH` for a git URL), a branch, tag or commit after `@`; or an MCP
    server serving the Skills extension (SEP-2640): `mcp+` before its URL, or
    `mcp+stdio:COMMAND` for one run as a command (see
    https://huggingface.co/spaces/hubskills/hubskills/blob/main/docs/mcp.md).

    \b
    Examples:
      hubskills pull hubskills/kernel-builder-cuda-kernels
      hubskills pull acme/csv-cleaning@v1.2.0 --agent claude,cursor
      hubskills pull acme/csv-cleaning@3f2a9c1 --dry-run
      hubskills pull ./my-skill
      hubskills pull github:anthropics/skills/skills/pdf@main
      hubskills pull https://github.com/anthropics/skills --skill pdf --skill docx
      hubskills pull git@gitlab.com:team/skills.git//csv@v2 --global --copy
      hubskills pull acme/report --allow-namespace tools  # deps from tools/ too
      hubskills pull mcp+https://example.com/mcp --skill csv-cleaning
      hubskills pull 'mcp+stdio:hubskills mcp --registry hub' --skill csv-cleaning
    """
    options = _Options(copy=copy, force=force, dry_run=dry_run, allow_risky=allow_risky,
                       require_signed=require_signed, accept_new_signer=accept_new_signer,
                       allow_namespaces=_names(allow_namespace))
    if "/" not in spec.partition("@")[0] and not is_source(spec):  # a bare name: no ns/name
        if not Path(spec).is_dir():
            raise no_such_folder(spec, "pull")  # hints the registry skill of that name
        spec = f"./{spec}"  # `hubskills new my-skill && hubskills pull my-skill`
    if Path(spec).is_dir() and (Path(spec) / "SKILL.md").is_file():
        say_if_unpublishable(Path(spec), so="your agents will read a draft")
    def run() -> list[PullResult]:
        with shared.show_findings(shown(spec)):  # an MCP URL's credential never shown
            if is_source(spec):
                plan = Plan.of(project, agents=agent, all_agents=all_agents, global_=global_,
                               **options)
                if is_mcp(spec):  # a command typed here may run again from skills.lock
                    trust_command(parse_mcp(spec))
                return pull_source(spec, plan, skills=_names(skills), all_skills=all_skills)
            if skills or all_skills:
                raise click.UsageError("--skill and --all-skills pick skills from a folder or "
                                       "a git source; a registry skill is one skill")
            store = get_store(Settings.from_env(), registry, offline_fallback=True)
            try:
                return [pull(spec, project=project, store=store, agents=agent,
                             all_agents=all_agents, global_=global_, **options)]
            except SkillNotFound as missing:
                _hint_closest(missing, spec)
                raise

    results = shared.asking(run, options["allow_namespaces"], quiet=as_json)
    shared.print_results(results, project, as_json=as_json)


def _hint_closest(missing: SkillNotFound, spec: str) -> None:
    """Hint the pull of the registry's closest name when `spec` names no skill (a typo), with
    the options typed: a walk got `hubskills info hubskills/agent-skill-md`, not the pull."""
    repo, at, ref = spec.partition("@")
    if f"'{repo}'" not in missing.message:  # a dependency not found: its own hint stands
        return
    close = closest_reference(repo)
    if close is not None and close != repo:
        missing.hint = (hint_command("pull", close + at + ref,
                                     *shared.given_options(click.get_current_context()))
                        + "  # the closest name in the registry")


class _Options(TypedDict):
    """What a pull is asked beyond its scope: `pull`'s and `Plan.of`'s keywords."""

    copy: bool
    force: bool
    dry_run: bool
    allow_risky: bool
    require_signed: bool
    accept_new_signer: bool
    allow_namespaces: list[str]


def _names(skills: tuple[str, ...]) -> list[str]:
    """`--skill a --skill b,c` -> [a, b, c]."""
    return [name.strip() for each in skills for name in each.split(",") if name.strip()]
