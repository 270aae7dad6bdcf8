"""`hubskills validate`, `hubskills new`, `hubskills suite import|show`."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._skill_ref import SkillSource, skill_folder
from registry.format.scaffold import scaffold_skill
from registry.format.skill import SKILL_FILE
from registry.format.suite import load_suite, suite_path
from registry.format.suite_check import check_suite
from registry.format.suite_writer import import_suite
from registry.format.triggers import load_triggers, triggers_path
from registry.format.validate import has_errors, validate_skill


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable findings.")
def validate_command(paths: tuple[Path, ...], as_json: bool) -> None:
    """Check skill folders and their test suites; exit 1 on any error.

    The suite (evals/evals.json) is read as `hubskills eval` reads it, so every error eval
    would stop with is found here first; the scaffold's placeholders are warned about.

    \b
    Example:
      hubskills validate skills/*
    """
    report = {str(path): validate_skill(path) + check_suite(path) for path in paths}
    if as_json:
        out.as_json({p: [vars(f) for f in found] for p, found in report.items()})
    else:
        for path, found in report.items():
            _print_findings(path, found)
    if any(has_errors(found) for found in report.values()):
        raise SystemExit(1)


def _print_findings(path: str, found: list) -> None:
    errors = sum(f.severity == "error" for f in found)
    warnings = len(found) - errors
    status = "[red]invalid[/]" if errors else "[green]valid[/]"
    out.result(f"{escape(path)}: {status} ({errors} errors, {warnings} warnings)")
    folder = str(Path(path).parent) if Path(path).name == SKILL_FILE else path
    for f in found:
        colour = "red" if f.severity == "error" else "yellow"
        where = escape(f"{folder}/{f.location()}")
        out.result(f"  {where}: [{colour}]{f.severity}[/] {f.code}: {escape(f.message)}")


@click.command("new")
@click.argument("name")
@click.option("--dir", "parent", type=click.Path(path_type=Path), default=Path("."),
              show_default=True, help="Folder to create the skill in.")
@click.option("--description", default=None, help="What the skill does and when to use it.")
@click.option("--json", "as_json", is_flag=True, help="The files created, as JSON.")
def new_command(name: str, parent: Path, description: str | None, as_json: bool) -> None:
    """Scaffold a valid skill with an example test case in evals/evals.json.

    \b
    Example:
      hubskills new csv-cleaning --description "Clean CSV files with pandas. Use when ..."
    """
    folder = scaffold_skill(parent, name, description)
    if as_json:
        out.as_json({"name": name, "path": str(folder),
                     "files": [str(folder / SKILL_FILE), str(suite_path(folder))],
                     "next": f"hubskills validate {folder}"})
        return
    out.result(f"Created {folder}/SKILL.md and {folder}/evals/evals.json")
    out.result(f"Next: edit them, then run  hubskills validate {folder}")


@click.group("suite")
def suite_group() -> None:
    """A skill's test suite (evals/evals.json): show, import, generate."""


@suite_group.command("import")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--into", "skill", required=True, type=click.Path(path_type=Path),
              help="Skill folder whose evals/evals.json receives the cases.")
@click.option("--force", is_flag=True, help="Replace an existing suite (it keeps its shape).")
def suite_import_command(file: Path, skill: Path, force: bool) -> None:
    """Import an upskill or skill-creator suite into the skill's evals/evals.json.

    skill-creator's evals.json is kept in its own shape (both tools read it); upskill cases
    are converted, with a warning for each case whose grading does not map.

    \b
    Example:
      hubskills suite import upskill_tests.json --into skills/my-skill
    """
    done = import_suite(file, skill, force=force)
    for warning in done.suite.warnings:
        out.warn(escape(warning))
    count, digest = len(done.suite.cases), done.suite.suite_hash()[:19]
    if not done.written:
        out.result(f"{done.target} is already in {_SHAPES[done.shape]}; hubskills reads it as "
                   f"it is ({count} cases, {digest}): left unchanged")
        return
    copied = f", copied {len(done.files)} listed file(s)" if done.files else ""
    out.result(f"Imported {count} cases into {done.target} ({digest}) in "
               f"{_SHAPES[done.shape]}{copied}")


_SHAPES = {"hubskills": "hubskills' shape", "skill-creator": "skill-creator's shape",
           "upskill": "upskill's shape", "upskill-meta": "upskill's skill_meta.json shape"}


@suite_group.command("show")
@click.argument("skill", type=SkillSource(exists=False), metavar="PATH|NS/NAME[@VERSION]|GIT")
@click.option("--json", "as_json", is_flag=True, help="Print the suite as JSON.")
def suite_show_command(skill: Path, as_json: bool) -> None:
    """List a skill's test cases and their checks, and its trigger queries if it has any.

    \b
    Examples:
      hubskills suite show ./my-skill
      hubskills suite show hubskills/agent-skill-md --json
    """
    folder = click.get_current_context().with_resource(skill_folder(skill, command="suite show"))
    file = folder if folder.is_file() else suite_path(folder)
    shown = file if folder == skill else f"{skill}: {file.relative_to(folder)}"
    suite = load_suite(file)
    triggers = load_triggers(triggers_path(folder)) \
        if folder.is_dir() and triggers_path(folder).is_file() else None
    if as_json:
        out.as_json(suite.model_dump(mode="json", exclude_unset=True, by_alias=True)
                    | ({"triggers": triggers.to_data()} if triggers else {}))
        return
    rows = [(escape(c.id), escape(c.prompt[:60].replace("\n", " ")),
             escape(", ".join(ch.label() for ch in c.checks)) or "-", len(c.assertions))
            for c in suite.cases]
    out.table(["id", "prompt", "checks", "assertions"], rows,
              title=f"{escape(str(shown))} — {len(suite.cases)} cases, {suite.suite_hash()[:19]}"
                    + ("" if suite.shape == "hubskills" else f", {_SHAPES[suite.shape]}"))
    if triggers:
        _show_triggers(triggers)


def _show_triggers(triggers) -> None:
    counts = triggers.counts()
    out.table(["id", "split", "should trigger", "query"],
              [(escape(q.id), q.split, "yes" if q.should_trigger else "no",
                escape(q.query[:70].replace("\n", " "))) for q in triggers.queries],
              title=f"evals/triggers.json — {len(triggers.queries)} queries (train "
                    f"{sum(counts['train'].values())}, holdout "
                    f"{sum(counts['holdout'].values())}), {triggers.suite_hash()[:19]}")


def _suite_generate() -> click.Command:
    """`suite generate` is `tests generate` (the old spelling still works, unlisted)."""
    from registry.cli.generate import tests_generate_command

    return tests_generate_command


suite_group.add_command(_suite_generate(), "generate")
