"""`hubskills suite show|import|generate`: a skill's test suite (evals/evals.json)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.cli._path_arg import ExistingPath
from registry.cli._progress import StepProgress
from registry.cli._skill_ref import SkillSource, skill_folder
from registry.config import Settings
from registry.format.suite import Suite, load_suite, suite_path
from registry.format.suite_check import AGENT_SUITE_PATH
from registry.format.suite_writer import import_suite
from registry.format.triggers import load_skill_triggers, skill_triggers_path
from registry.results.display import count as counted


@click.group("suite")
def suite_group() -> None:
    """A skill's test suite (evals/evals.json): show, import, generate."""


@suite_group.command("import")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--into", "skill", required=True, type=click.Path(path_type=Path),
              help="Skill folder whose evals/evals.json receives the cases.")
@click.option("--force", is_flag=True, help="Replace an existing suite (it keeps its shape).")
def suite_import_command(file: Path, skill: Path, force: bool) -> None:
    """Import an upskill, skill-creator or NVIDIA suite into the skill's evals/evals.json.

    skill-creator's and NVIDIA's evals.json are kept in their own shape (hubskills reads them
    in place; NVIDIA's ground_truth and expected_behavior are judge rubrics, its expected_skill
    the trigger queries); upskill cases are converted, with a warning for each case whose
    grading does not map.

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
                   f"it is ({counted(count, 'case')}, {digest}): left unchanged")
        return
    copied = f", copied {counted(len(done.files), 'listed file')}" if done.files else ""
    out.result(f"Imported {counted(count, 'case')} into {done.target} ({digest}) in "
               f"{_SHAPES[done.shape]}{copied}")


_SHAPES = {"hubskills": "hubskills' shape", "skill-creator": "skill-creator's shape",
           "upskill": "upskill's shape", "upskill-meta": "upskill's skill_meta.json shape",
           "nvidia": "NVIDIA's shape"}


@suite_group.command("show")
@click.argument("skill", type=SkillSource(exists=False), metavar="PATH|NS/NAME[@VERSION]|GIT")
@click.option("--json", "as_json", is_flag=True, help="Print the suite as JSON.")
def suite_show_command(skill: Path, as_json: bool) -> None:
    """List a skill's test cases and their checks (agent mode's evals/agent.json too), and
    its trigger queries if it has any.

    \b
    Examples:
      hubskills suite show ./my-skill
      hubskills suite show hubskills/agent-skill-md --json
    """
    folder = click.get_current_context().with_resource(skill_folder(skill, command="suite show"))
    files = [folder] if folder.is_file() else _suite_files(folder)
    suites = {file: load_suite(file) for file in files}
    triggers = load_skill_triggers(folder) if folder.is_dir() else None
    if as_json:
        data: dict = {}
        for file, suite in suites.items():  # agent mode's suite under "agent", beside the main
            data |= {"agent": _as_data(suite)} if len(suites) > 1 and file.name == "agent.json" \
                else _as_data(suite)
        out.as_json(data | ({"triggers": triggers.to_data()} if triggers else {}))
        return
    for file, suite in suites.items():
        shown = file if folder == skill else f"{skill}: {file.relative_to(folder)}"
        _show_suite(suite, str(shown))
    if triggers:
        source = skill_triggers_path(folder)
        _show_triggers(triggers, "evals/triggers.json" if source and source.name ==
                       "triggers.json" else "evals/evals.json's expected_skill")


def _suite_files(folder: Path) -> list[Path]:
    """A skill's suites: evals/evals.json (required, unless only evals/agent.json is there),
    then agent mode's evals/agent.json when it has one."""
    agent = folder / AGENT_SUITE_PATH
    main = suite_path(folder)
    return [main] if not agent.is_file() else [agent] if not main.is_file() else [main, agent]


def _as_data(suite: Suite) -> dict:
    return suite.model_dump(mode="json", exclude_unset=True, by_alias=True)


def _show_suite(suite: Suite, shown: str) -> None:
    judged = any(c.assertions for c in suite.cases)  # a column of 0s told nothing (a walk)
    rows = [(escape(c.id), escape(c.prompt[:60].replace("\n", " ")),
             escape(", ".join(ch.label() for ch in c.checks)) or "-",
             *([len(c.assertions)] if judged else [])) for c in suite.cases]
    out.table(["id", "prompt", "checks", *(["assertions"] if judged else [])], rows,
              title=f"{escape(shown)} — {counted(len(suite.cases), 'case')}, "
                    f"{suite.suite_hash()[:19]}"
                    + ("" if suite.shape == "hubskills" else f", {_SHAPES[suite.shape]}"))


def _show_triggers(triggers, source: str) -> None:
    counts = triggers.counts()
    out.table(["id", "split", "should trigger", "query"],
              [(escape(q.id), q.split, "yes" if q.should_trigger else "no",
                escape(q.query[:70].replace("\n", " "))) for q in triggers.queries],
              title=f"{escape(source)} — {len(triggers.queries)} queries (train "
                    f"{sum(counts['train'].values())}, holdout "
                    f"{sum(counts['holdout'].values())}), {triggers.suite_hash()[:19]}")


@suite_group.command("generate")
@click.argument("skill", type=ExistingPath("folder", retry="hubskills suite generate {path}",
                                           otherwise="{new}  # a new skill folder there"))
@click.option("--count", "-n", "n", default=5, show_default=True, help="Cases to ask for.")
@click.option("--n", "n_old", type=int, default=None, hidden=True)  # the old spelling
@click.option("--teacher", default=None, help="Model that writes the cases.")
@click.option("--student", default=None, help="Model a case must defeat (default: teacher).")
@click.option("--base-url", default=None, help="Server for local/<model> references.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report on stdout.")
def suite_generate_command(skill: Path, n: int, n_old: int | None, teacher: str | None,
                           student: str | None, base_url: str | None, as_json: bool) -> None:
    """Add N verified cases to SKILL/evals/evals.json (ids kept unique).

    \b
    Example:
      hubskills suite generate ./skills/my-skill --count 5 --student haiku
    """
    n = n if n_old is None else n_old
    from registry.generate.cases import add_tests

    with StepProgress() as steps:
        report = add_tests(skill, n, teacher, student, Settings.from_env(), base_url=base_url,
                           progress=steps.say)
    if as_json:
        out.as_json(report.to_dict())
        return
    out.result(f"added {len(report.added)} case(s) to {escape(str(report.suite))} "
               f"({report.total} in all): {', '.join(report.added) or 'none'}")
    for case_id, reason in report.dropped:
        out.result(f"  dropped {escape(case_id)}: {escape(reason)}")
    for warning in report.warnings:
        if f"warning: {warning}" not in steps.said:
            out.warn(escape(warning))


@click.group("tests")
def tests_group() -> None:
    """Grow a skill's test suite with verified, discriminating cases."""


tests_group.add_command(suite_generate_command)  # `tests generate`: the old, unlisted spelling
