"""`hubskills publish`: validate, scan and publish a skill folder as a new immutable version."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli import _store as shared
from registry.cli._path_arg import closest_sibling
from registry.cli._skill_ref import SkillSource, skill_folder
from registry.cli.validate import print_problems
from registry.errors import HubskillsError
from registry.publishing.checks import ValidationFailed
from registry.publishing.publish import PublishResult, SignWith, publish_skill
from registry.scan import Finding, ScanFailed


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
@click.option("--force", is_flag=True,
              help="Publish despite what `hubskills validate` warns about (a placeholder, a "
                   "thin suite); never despite a validation error in SKILL.md.")
@click.option("--sign", is_flag=True,
              help="Sign the published files into skill.oms.sig (OpenSSF Model Signing, as "
                   "`hubskills sign` does), written into the folder and the revision.")
@click.option("--key", type=click.Path(path_type=Path, dir_okay=False),
              help="With --sign: the private key (PEM; `hubskills keys new` makes one).")
@click.option("--certificate", type=click.Path(path_type=Path, dir_okay=False),
              help="With --sign: the signing certificate for --key (certificate mode).")
@click.option("--chain", multiple=True,
              type=click.Path(path_type=Path, dir_okay=False),
              help="With --sign --certificate: certificates up to the root (repeatable).")
@shared.registry_option
@click.option("--json", "as_json", is_flag=True,
              help="The plan and what was published (revision, results) as JSON.")
def publish_command(skill: Path, repo: str | None, version: str | None, bump: str | None,
                    private: bool, with_runs: tuple[str, ...], dry_run: bool,
                    allow_risky: bool, force: bool, sign: bool, key: Path | None,
                    certificate: Path | None, chain: tuple[Path, ...], registry: str | None,
                    as_json: bool) -> None:
    """Validate, scan and publish a skill folder as a new immutable version.

    What `hubskills validate` warns about (the scaffold's placeholders, a suite too small to
    rank) is refused too; on a terminal you are asked, and --force publishes anyway.

    \b
    Examples:
      hubskills publish skills/csv-cleaning --dry-run
      hubskills publish skills/csv-cleaning --with-run 20261122-103000-a1b2c3
      hubskills publish skills/csv-cleaning --registry hub --repo me/csv-cleaning
      hubskills publish github:anthropics/skills/skills/pdf --repo me/pdf
      hubskills publish skills/csv-cleaning --sign --key acme.key
    """
    signing = _sign_with(skill, sign, key, certificate, chain)
    settings, store = shared.open_store(registry)
    skill = click.get_current_context().with_resource(skill_folder(skill, command="publish",
                                                                   scan=False))
    publish = functools.partial(publish_skill, store, skill, runs_dir=settings.runs_dir,
                                repo=repo, version=version, bump=bump, private=private,
                                with_runs=with_runs, dry_run=dry_run, allow_risky=allow_risky,
                                settings=settings, sign=signing,
                                say=lambda note: out.warn(escape(note)))
    try:
        result = _checked(publish, force=force)
    except ScanFailed as err:
        _print_findings(err.findings)
        raise
    if as_json:
        out.as_json({**asdict(result), "published": result.published is not None,
                     "signature": result.signature.to_dict() if result.signature else None,
                     "results": [appended.path for appended in result.results],
                     "pull": result.pull_command})
    else:
        _print_publish(result)


def _sign_with(skill: Path, sign: bool, key: Path | None, certificate: Path | None,
               chain: tuple[Path, ...]) -> SignWith | None:
    """What `--sign` asks for, or None; the key options without `--sign` (or `--sign` without
    a key) are refused before anything is read."""
    if not sign:
        if key or certificate or chain:
            raise click.UsageError("--key, --certificate and --chain sign the publish: add "
                                   f"--sign (hubskills publish {skill} --sign --key KEY)")
        return None
    if key is None:
        raise click.UsageError("--sign needs --key KEY (hubskills keys new KEY makes one)")
    if chain and certificate is None:
        raise click.UsageError("--chain goes with --certificate (certificate mode)")
    for option, path in [("--key", key), ("--certificate", certificate),
                         *[("--chain", c) for c in chain]]:
        if path is not None and not path.is_file():  # said before anything is staged
            close = closest_sibling(path, "file")
            raise HubskillsError(f"{option} {path}: no such file", hint=(
                f"hubskills publish {skill} --sign {option} {close}  # the closest name there"
                if close else f"hubskills keys new {path}" if option == "--key"
                else "ls  # the certificate files you were given"))
    if key.read_bytes()[:200].lstrip().startswith(b"-----BEGIN PUBLIC KEY-----"):
        private = key.with_suffix("") if key.suffix == ".pub" else None
        raise HubskillsError(f"--key {key} is a public key; signing takes the private one",
                             hint=f"hubskills publish {skill} --sign --key {private}"
                             if private is not None and private.is_file()
                             else "hubskills keys new KEY  # a key pair: KEY signs, KEY.pub "
                                  "is shared")
    return SignWith(key, certificate, tuple(chain))


def _checked(publish: Callable[..., PublishResult], *, force: bool) -> PublishResult:
    """Publish strictly unless `force`: what validate warns about is listed, then refused, or
    (on a terminal) published once you say yes; either way an override is said."""
    how = "--force"
    try:
        result = publish(strict=not force)
    except ValidationFailed as err:
        print_problems(err.problems)  # whole: a table cut every reason at 80 columns (a walk)
        if not (err.overridable and _on_a_terminal()
                and click.confirm("Publish anyway?", default=False, err=True)):
            raise
        result, force, how = publish(strict=False), True, "your answer"
    if force and result.plan.problems:
        codes = ", ".join(dict.fromkeys(p.code for p in result.plan.problems))
        out.warn(f"{'published' if result.published else 'would publish'} despite what "
                 f"hubskills validate reports ({codes}): overridden by {how}")
    return result


def _on_a_terminal() -> bool:
    """Whether someone can answer: stdin and stderr are both a terminal (never in CI or a
    pipe, where a refusal stays a refusal)."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def _print_findings(findings: list[Finding]) -> None:
    if findings:
        out.table(["severity", "code", "where", "message"],
                  [(f.severity, f.code, escape(f"{f.path}:{f.line}" if f.line else f.path),
                    escape(f.message)) for f in findings], wrap=["message"])  # why refused


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
    if result.signature is not None:
        sig = result.signature
        out.result(f"  signature {sig.mode} mode, signer {escape(str(sig.signer))}, in "
                   f"{escape(str(plan.skill_dir / 'skill.oms.sig'))}")
    for appended in result.results:  # a pull request: someone else's dataset, awaiting review
        out.result(f"  results   {appended.path}" + (
            f" (unreviewed: proposed in {appended.pr_url})" if appended.pr_url else ""))
    out.command("Pull it:", result.pull_command)
