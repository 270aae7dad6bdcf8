"""One shard, inside its Job: run the shard's missing samples and append their rows.

The Job received the token and model keys as secrets (its environment), the endpoint in its
plain environment, and `repo RUN_ID SHARD` as arguments. It reads the plan, probes the sandbox
when the run executes code (`sandbox_check`: it stops before any model call when none works),
reads the skill from the results dataset repo, then for each model of the shard runs the one
engine (`run_evaluation`), told which samples the rows already in the repo answered, so a
retried or resumed shard asks only for samples that have no row yet. Rows go up every
`flush_every` answers (and at the end, and on SIGTERM), each batch one immutable file.
"""

from __future__ import annotations

import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from registry._version import __version__
from registry.config import Settings
from registry.errors import HubskillsError
from registry.evaluation.engine import run_evaluation
from registry.evaluation.run_manifest import check_resumable, published_of, resumed_config
from registry.evaluation.stopping import StopSignal
from registry.format.skill import load_skill
from registry.format.suite import load_suite, suite_path
from registry.hub import HubClient
from registry.jobs.plan import PROGRESS, JobPlan, RunFiles
from registry.jobs.sandbox_check import (
    EXIT_NO_SANDBOX,
    NO_SANDBOX_LINE,
    SANDBOX_LINE,
    probe,
    reason_of,
)
from registry.results.runs import (
    TRANSCRIPTS,
    ResultRow,
    latest_rows,
    rows_to_jsonl,
    run_dir,
    samples_planned,
)
from registry.secrets import scrub

FLUSH_SECONDS = 30.0


def say(line: str) -> None:
    """A log line (scrubbed, flushed: the client follows the log)."""
    print(scrub(line), flush=True)


class _Uploader:
    """Rows of this shard, sent to the repo in batches."""

    def __init__(self, files: RunFiles, plan: JobPlan, shard: int, seq: int) -> None:
        self.files, self.plan, self.shard, self.seq = files, plan, shard, seq
        self.pending: list[ResultRow] = []
        self.count = 0
        self.last = time.monotonic()

    def add(self, row: ResultRow) -> None:
        self.pending.append(row)
        self.count += 1
        if (len(self.pending) >= self.plan.flush_every
                or time.monotonic() - self.last > FLUSH_SECONDS):
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        parent = self.plan.manifest
        identity = {"run_id": parent.run_id, **parent.row_fields(), "produced_via": "job"}
        rows = [row.model_copy(update=identity) for row in self.pending]
        self.files.add_rows(self.shard, self.seq, rows, rows_to_jsonl(rows))
        say(f"shard {self.shard}: saved {len(rows)} rows")
        self.seq, self.pending, self.last = self.seq + 1, [], time.monotonic()


def run_shard(settings: Settings, repo: str, run_id: str, shard: int) -> int:
    """Run shard `shard` of `run_id`; the process's exit code (0: every sample has a row)."""
    say(f"hubskills {__version__} from {Path(__file__).resolve().parent.parent}")
    client = HubClient(settings.hf_endpoint, settings.hf_token, settings.home / "hub-cache")
    files = RunFiles(client, repo, run_id)
    plan = files.plan()
    if not _sandbox_ready(settings, plan, shard):
        return EXIT_NO_SANDBOX
    existing = files.rows()
    done = latest_rows([row for rows in existing.values() for row in rows])
    units = plan.shards[shard]
    uploader = _Uploader(files, plan, shard, 0)
    keys = {(m, c) for m, c in units}
    prior = sum(1 for r in done if (r.model, r.case_id) in keys and not r.is_error)
    total = samples_planned(1, len(units), plan.manifest.runs)  # (model, case) units

    def add(row: ResultRow) -> None:
        uploader.add(row)
        say(f"{PROGRESS} {shard} {prior + uploader.count} {total}")

    say(f"{PROGRESS} {shard} {prior} {total}")
    stop = StopSignal()
    signal.signal(signal.SIGTERM, lambda *_: stop.request("SIGTERM"))
    with tempfile.TemporaryDirectory() as tmp:
        skill_dir, suite = files.download_inputs(Path(tmp))
        _check_inputs(plan, skill_dir, suite)
        status = "complete"
        try:
            for model in dict.fromkeys(m for m, _ in units):
                cases = [c for m, c in units if m == model]
                status = _run_model(settings, files, plan, shard, model, cases, done, skill_dir,
                                    suite, add, stop)
                if status != "complete":
                    break
        finally:
            uploader.flush()
    say(f"shard {shard}: {status}")
    return 0 if status == "complete" else 1


def _sandbox_ready(settings: Settings, plan: JobPlan, shard: int) -> bool:
    """Probe the sandbox as a local run does, before any model call; say what was found."""
    config = plan.eval_config()
    try:
        status = probe(settings, has_code=plan.has_code, sandbox=config.sandbox,
                       code_checks=config.code_checks)
    except HubskillsError as err:
        say(f"{NO_SANDBOX_LINE} {shard} {reason_of(err)}")
        say(f"shard {shard}: stopped before any model call: the run executes code, which "
            "runs only in a sandbox")
        return False
    say(f"{SANDBOX_LINE} {shard} {status}")
    return True


def _check_inputs(plan: JobPlan, skill_dir: Path, suite: Path | None) -> None:
    """Refuse a skill or suite that is not the planned one (its files changed since), before
    any model call."""
    skill = load_skill(skill_dir)
    if plan.manifest.mode == "agent":
        from registry.evaluation.agent_mode import agent_suite_path

        default = agent_suite_path(skill.path)
    else:
        default = suite_path(skill.path)
    check_resumable(plan.manifest, skill, load_suite(suite or default, skill_dir=skill.path))


def _run_model(settings: Settings, files: RunFiles, plan: JobPlan, shard: int, model: str,
               cases: list[str], done: list[ResultRow], skill_dir: Path, suite: Path | None,
               add: Callable[[ResultRow], None], stop: StopSignal) -> str:
    """The shard's cases on one model, as a local run told which samples `done` already has;
    its agent transcripts (agent mode) go up beside the rows."""
    config = replace(resumed_config(plan.manifest, plan.eval_config()), models=[model],
                     case_ids=cases)  # the run's options, as its manifest keeps them
    result = run_evaluation(skill_dir, config, settings, tests=suite, done=done,
                            progress=lambda _done, _total, row: add(row), stop=stop,
                            published=published_of(plan.manifest),
                            warn=lambda text: say(f"warning: {text}"))
    saved = run_dir(settings.runs_dir, result.manifest.run_id) / TRANSCRIPTS
    if saved.is_file() and (text := saved.read_text(encoding="utf-8")).strip():
        files.add_transcripts(shard, plan.manifest.models.index(model), scrub(text))
    missing = result.manifest.samples_planned - result.manifest.samples_done
    if result.manifest.status != "complete" or missing:
        return result.manifest.status if result.manifest.status != "complete" else "partial"
    return "complete"


def main(argv: list[str] | None = None) -> None:
    """`python -m registry.jobs.shard REPO RUN_ID SHARD` (what a Job's command runs)."""
    repo, run_id, shard = (argv or sys.argv[1:])[:3]
    sys.exit(run_shard(Settings.from_env(), repo, run_id, int(shard)))


if __name__ == "__main__":
    main()
