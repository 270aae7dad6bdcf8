"""Running an evaluation for the Evaluate tab, and shaping its results (no Gradio here).

The skill comes from the store (fetched at its latest revision, so the run is filed under that
repo, revision and version) or from an upload (a zip of the skill folder, or its files). Uploads
are unpacked with the same path rules as a pull: nothing outside the staging folder, no links,
bounded size. A visitor's code checks (python, exec) run only in the bwrap sandbox; where it does
not work here, such a suite is refused with the command that runs it locally. On a Space, what
runs here and what goes to the signed-in visitor's Hugging Face Jobs is decided in
`evaluate_jobs`.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from registry import (
    Case,
    EvalConfig,
    EvalDependencies,
    EvalRun,
    HubskillsError,
    InvalidSkill,
    ModelSummary,
    ResultRow,
    RunManifest,
    SandboxUnavailable,
    Settings,
    SizeLimits,
    SkillVersionRef,
    Started,
    StopSignal,
    agent_suite_path,
    check_relpath,
    display,
    get_sandbox,
    has_code_checks,
    load_skill,
    load_suite,
    note_start_failure,
    per_case_table,
    run_evaluation,
    suite_path,
    summarize,
    write_file,
)

from .evaluate_jobs import Stages, evaluate_on_jobs, jobs_reason, planned_answers
from .evaluate_plan import check_cap, plan, plan_text
from .outbound import check_endpoints, status_line
from .state import SpaceState

MAX_UPLOAD_FILES = 200
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
UPLOAD_LIMITS = SizeLimits(max_file_bytes=MAX_UPLOAD_BYTES, max_total_bytes=MAX_UPLOAD_BYTES)
SUMMARY_COLUMNS = ("model", "baseline", "with skill", "lift [95% CI]", "verdict",
                   "p (exact)", "+tokens", "cost (skill arm)", "cases × runs", "errors")
# gr.Dataframe's column_widths (a list of str or int)
SUMMARY_WIDTHS: list[str | int] = ["18%", "8%", "8%", "12%", "13%", "9%", "8%", "10%", "8%", "6%"]
CASE_WIDTHS: list[str | int] = ["20%", "18%", "11%", "10%", "13%", "28%"]
FAILED = "failed: no sample graded"  # a model's verdict when it measured nothing
CASE_COLUMNS = ("model", "case", "baseline", "with skill", "status (skill)", "why it failed")


@dataclass(frozen=True)
class EvalRequest:
    """What the form asked for (`upload`: paths of uploaded files; it wins over `repo`), and
    the visitor's Hugging Face sign-in token (None: anonymous)."""

    repo: str | None
    upload: list[str]
    config: EvalConfig
    max_cases: int = 0
    token: str | None = field(default=None, repr=False)


def _unzip(archive: Path, dest: Path) -> None:
    budget = UPLOAD_LIMITS.budget()
    if not zipfile.is_zipfile(archive):
        raise InvalidSkill(f"{archive.name} is not a zip file",
                           hint="zip the skill folder (SKILL.md, evals/evals.json) and upload it")
    with zipfile.ZipFile(archive) as zipped:
        members = [m for m in zipped.infolist() if not m.is_dir()]
        if len(members) > MAX_UPLOAD_FILES:
            raise InvalidSkill(f"the zip holds {len(members)} files (max {MAX_UPLOAD_FILES})")
        for member in members:
            rel = check_relpath(member.filename)
            if rel.startswith("__MACOSX/") or rel.endswith(".DS_Store"):
                continue
            budget.take(rel, member.file_size)
            write_file(dest, rel, zipped.read(member))


def _skill_root(folder: Path) -> Path:
    """The folder holding SKILL.md: the upload itself or its single top-level folder."""
    if (folder / "SKILL.md").is_file():
        return folder
    found = sorted(p.parent for p in folder.rglob("SKILL.md"))
    if len(found) != 1:
        raise InvalidSkill("the upload must hold exactly one SKILL.md "
                           f"(found {len(found)})",
                           hint="upload a zip of one skill folder, or SKILL.md and evals.json")
    return found[0]


def unpack_upload(paths: list[str], dest: Path) -> Path:
    """Unpack uploaded files into `dest`; returns the skill folder.

    A zip is extracted as is. Loose files are placed by name: `evals.json` goes to `evals/`,
    everything else at the top of the skill folder.

    Raises:
        InvalidSkill / UnsafeSkill: no SKILL.md, an unsafe path, too many or too large files.
    """
    dest.mkdir(parents=True, exist_ok=True)
    zips = [Path(p) for p in paths if str(p).lower().endswith(".zip")]
    if zips:
        if len(paths) > 1:
            raise InvalidSkill("upload one zip, or the skill's files without a zip")
        _unzip(zips[0], dest)
        return _skill_root(dest)
    budget = UPLOAD_LIMITS.budget()
    for path in map(Path, paths):
        rel = f"evals/{path.name}" if path.name == "evals.json" else path.name
        budget.take(rel, path.stat().st_size)
        write_file(dest, check_relpath(rel), path.read_bytes())
    return _skill_root(dest)


def _suite_file(folder: Path, config: EvalConfig) -> Path:
    return agent_suite_path(folder) if config.mode == "agent" else suite_path(folder)


def _first_cases(folder: Path, count: int, config: EvalConfig) -> list[str]:
    suite = load_suite(_suite_file(folder, config), skill_dir=folder)
    return [case.id for case in suite.cases[:count]]


@dataclass(frozen=True)
class _Prepared:
    """A request made concrete: the skill's folder, the version it is, its cases, the config."""

    folder: Path
    published: SkillVersionRef | None
    config: EvalConfig
    cases: list[Case]


def _prepare(state: SpaceState, request: EvalRequest, staging: Path) -> _Prepared:
    """Fetch or unpack the skill, pick its cases (the first `max_cases`).

    Raises:
        HubskillsError: nothing to evaluate, a bad skill or suite.
    """
    published = None
    if request.upload:
        folder = unpack_upload(request.upload, staging / "upload")
    elif request.repo:
        resolved = state.store.resolve(request.repo)
        published = SkillVersionRef(request.repo, resolved.sha, resolved.version)
        folder = state.skill_folder(published.repo, published.revision)
    else:
        raise HubskillsError("choose a skill to evaluate, or upload one",
                             hint="pick a skill in the list above")
    config = replace(request.config, via="space")
    if request.max_cases > 0 and not config.case_ids:
        config = replace(config, case_ids=_first_cases(folder, request.max_cases, config))
    suite = load_suite(_suite_file(folder, config), skill_dir=folder)
    cases = suite.select(config.case_ids).cases if config.case_ids else suite.cases
    return _Prepared(folder, published, config, cases)


def estimate(state: SpaceState, request: EvalRequest) -> str:
    """What the request would run, as the line the form shows before it starts: answers, time
    and cost (`evaluate_plan`), where it runs, and what refuses it (the anonymous cap).

    Raises:
        HubskillsError: nothing to evaluate, a bad skill or suite.
    """
    with tempfile.TemporaryDirectory(prefix="estimate-", dir=_uploads_dir(state)) as staging:
        ready = _prepare(state, request, Path(staging))
        line = plan_text(plan(state, load_skill(ready.folder), ready.cases, ready.config))
    why = jobs_reason(ready.cases, ready.config) if state.on_space else None
    if why:
        return f"{line}. It runs as Hugging Face Jobs on your account because {why}."
    try:
        check_cap(planned_answers(ready.cases, ready.config), on_space=state.on_space,
                  signed_in=bool(request.token))
    except HubskillsError as err:
        return f"{line}. ⚠️ Too many to start: {err} ({err.hint})."
    return line + ". *Stop* keeps the answers already made."


def evaluate(state: SpaceState, request: EvalRequest, settings: Settings,
             progress: Callable[[int, int, ResultRow], None] | None = None,
             stages: Stages | None = None, *, stop: StopSignal | None = None,
             started: Started | None = None) -> EvalRun:
    """Run the requested evaluation with `settings` (which may carry per-request keys): here,
    or on a Space as the visitor's Jobs (`evaluate_jobs`; `stages` follows them). A run here
    ends early on `stop`, keeping its finished answers; `started` gets its manifest, the
    answers it plans and how many of them the response cache holds, before the first call.
    One that fails before its first answer keeps why (`note_start_failure`: listed as failed
    to start).

    Raises:
        HubskillsError: nothing to evaluate, a bad skill or suite, an unknown model, a key, an
            anonymous visitor asking for what needs sign-in or for more answers than they may
            start (`evaluate_plan.check_cap`), a model server a visitor may not make this
            Space call (`outbound.check_endpoints`).
    """
    if state.on_space:
        check_endpoints(request.config.models, request.config.base_url,
                        signed_in=bool(request.token))
    staging = Path(tempfile.mkdtemp(prefix="eval-", dir=_uploads_dir(state)))
    try:
        ready = _prepare(state, request, staging)
        folder, published, config = ready.folder, ready.published, ready.config
        repo = published.repo if published else None
        command = local_command(folder, repo, config)
        why = jobs_reason(ready.cases, config) if state.on_space else None
        if state.on_space and why:
            return evaluate_on_jobs(folder, config, settings, state.settings, request.token,
                                    why=why, command=command, stages=stages,
                                    published=published)
        check_cap(planned_answers(ready.cases, config), on_space=state.on_space,
                  signed_in=bool(request.token))
        config = _sandboxed(ready.cases, folder, repo, config, settings)
        return _run_here(state, folder, config, settings, progress=progress,
                         published=published, stop=stop, started=started)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _run_here(state: SpaceState, folder: Path, config: EvalConfig, settings: Settings, *,
              progress: Callable[[int, int, ResultRow], None] | None,
              published: SkillVersionRef | None, stop: StopSignal | None,
              started: Started | None) -> EvalRun:
    """`run_evaluation` on this machine; the pace it kept is folded into `state.answer_times`
    and a failure before the first answer is kept in its manifest."""
    begun: list[tuple[str, float]] = []

    def on_start(manifest: RunManifest, total: int, cached: int) -> None:
        begun.append((manifest.run_id, time.monotonic()))
        if started:
            started(manifest, total, cached)

    try:  # a skill that requires others gets them from this Space's registry, as eval does
        with EvalDependencies(lambda: state.store) as dependencies:
            run = run_evaluation(folder, replace(config, dependencies=dependencies), settings,
                                 progress=progress, published=published, stop=stop,
                                 started=on_start)
    except Exception as err:
        if begun:
            note_start_failure(settings.runs_dir, begun[0][0], status_line(str(err)))
        raise
    fresh = sum(1 for row in run.rows if not row.cached and not row.is_error)
    if begun and fresh:
        per_answer = (time.monotonic() - begun[0][1]) / fresh
        for model in config.models:
            state.answer_times.record(model, per_answer)
    return run


def _sandboxed(cases: list[Case], folder: Path, repo: str | None, config: EvalConfig,
               settings: Settings) -> EvalConfig:
    """The config with code checks bound to bwrap; refused when they would run unsandboxed.

    Raises:
        HubskillsError: the suite runs code and bwrap does not work here (hint: run it locally).
    """
    if has_code_checks(cases) or config.mode == "agent":  # an agent runs commands
        try:
            get_sandbox("bwrap", settings)
        except SandboxUnavailable as err:
            raise HubskillsError(
                "this suite has code-running checks (python, exec) or runs an agent, and this "
                "Space runs a visitor's code only in a sandbox, which does not work here "
                f"({err.reason})",
                hint="run it on your machine: " + local_command(folder, repo, config)) from err
    return replace(config, sandbox="bwrap", code_checks="require")


def local_command(folder: Path, repo: str | None, config: EvalConfig) -> str:
    """The `hubskills` command line that runs the same evaluation locally."""
    name = load_skill(folder).name
    models = " ".join(f"-m {m}" for m in config.models)
    pull = f"hubskills pull {repo} && " if repo else ""
    target = f".agents/skills/{name}" if repo else f"./{name}"
    mode = f" --mode {config.mode}" if config.mode != "inline" else ""
    return f"{pull}hubskills eval {target} {models} --runs {config.runs}{mode}"


def _uploads_dir(state: SpaceState) -> Path:
    folder = state.settings.home / "space" / "uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def summary_table(summaries: list[ModelSummary], runs: int) -> pd.DataFrame:
    """One row per model: rates, lift with its interval and verdict, tokens, cost."""
    rows = []
    for s in summaries:
        st, errors = s.stats, str(s.baseline.errors + s.skill.errors)
        if s.failed:  # nothing was measured: no rate, least of all 0%
            rows.append((s.model, "-", "-", "-", FAILED, "-", "-",
                         display.usd(s.skill.cost_usd, s.model), f"{st.n_cases}×{runs}",
                         errors))
            continue
        rows.append((
            s.model, display.pct(st.baseline.pass_rate), display.pct(st.skill.pass_rate),
            display.lift_interval(st.lift, st.lo, st.hi), st.verdict,
            display.p_value(st.p_value), f"{s.skill_overhead_tokens:+,.0f}",
            display.usd(s.skill.cost_usd, s.model), f"{st.n_cases}×{runs}", errors))
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def _marks(values: list[bool | None]) -> str:
    return "".join("✓" if v else ("E" if v is None else "✗") for v in values)


def case_table(rows: list[ResultRow], models: list[str], *,
               brief_errors: bool = False) -> pd.DataFrame:
    """Per model and case: each repeat's verdict per arm, the status, why it failed (with
    `brief_errors`, an error only up to its HTTP status: `outbound.status_line`)."""
    cut = status_line if brief_errors else str
    table = [(model, e["case"], _marks(e["baseline"]), _marks(e["skill"]), e["skill_status"],
              cut(e["why"])[:160]) for model in models for e in per_case_table(rows, model)]
    return pd.DataFrame(table, columns=list(CASE_COLUMNS))


def chart_frame(summaries: list[ModelSummary]) -> pd.DataFrame:
    """Pass rate per model and arm, for a bar chart (one bar per model × arm); a model that
    failed has no rate, so no bars."""
    summaries = [s for s in summaries if not s.failed]
    shorts = [s.model.rsplit("/", 1)[-1] for s in summaries]
    points = []
    for s, short in zip(summaries, shorts, strict=True):
        label = short if shorts.count(short) == 1 else s.model
        for arm, rate in (("baseline", s.stats.baseline.pass_rate),
                          ("with skill", s.stats.skill.pass_rate)):
            # one model: the arm alone (the summary names the model; a phone's axis had the
            # two long labels drawn over each other)
            bar = arm if len(summaries) == 1 else f"{label} · {arm}"
            points.append((bar, s.model, arm, round(rate * 100, 1)))
    return pd.DataFrame(points, columns=["bar", "model", "arm", "pass_rate"])


def results(run: EvalRun, *, brief_errors: bool = False) -> tuple[
        list[ModelSummary], pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The summaries and the three frames the tab shows (`brief_errors`: see `case_table`)."""
    summaries = summarize(run.rows, run.manifest)  # an adaptive run at its own level, as the CLI
    models = [s.model for s in summaries]
    return (summaries, summary_table(summaries, run.manifest.runs),
            case_table(run.rows, models, brief_errors=brief_errors), chart_frame(summaries))
