"""What the Evaluate tab's controls do: run an evaluation for a visitor (with its progress and
the lines shown after it), estimate one before it starts, push a finished one. The tab's layout
and wiring are `evaluate_tab`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal, cast

import gradio as gr
import pandas as pd

from registry import (
    EMBEDDED_REF,
    EvalConfig,
    EvalRun,
    HubskillsError,
    RunManifest,
    TimeLeft,
    known_models,
    push_saved_run,
)

from .evaluate_plan import duration, seconds_per_answer
from .evaluate_run import (
    CASE_COLUMNS,
    FAILED,
    SUMMARY_COLUMNS,
    EvalRequest,
    estimate,
    evaluate,
    results,
)
from .keys import request_settings
from .messages import counted, describe, error_markdown, ok_markdown, warn
from .outbound import brief
from .state import SpaceState


def model_refs(state: SpaceState) -> list[str]:
    """The embedded model first, then every other known reference."""
    refs = [m.ref for m in known_models(state.settings) if "<" not in m.ref]
    return [EMBEDDED_REF, *[r for r in refs if r != EMBEDDED_REF]]


def _config(models: list[str] | None, base_url: str, runs: float, mode: str, placement: str,
            max_tokens: float, max_cost: float | None) -> EvalConfig:
    chosen = [m.strip() for m in models or [] if m and m.strip()] or [EMBEDDED_REF]
    # from the form's radios, and gr.Radio refuses a value that is not one of its choices
    return EvalConfig(models=chosen, runs=int(runs),
                      mode=cast(Literal["inline", "tool", "agent"], mode),
                      placement=cast(Literal["user", "system"], placement),
                      max_tokens=int(max_tokens), base_url=(base_url or "").strip() or None,
                      max_cost=float(max_cost) if max_cost else None)


def _empty(columns: tuple[str, ...]) -> pd.DataFrame:
    """A table with its headers and no row (a None shows Gradio's "1 2 3" instead)."""
    return pd.DataFrame(columns=list(columns))


class _Pace:
    """The run's progress line: planned answers and time before the first, then each answer
    and the time left at the run's own pace."""

    def __init__(self, state: SpaceState, config: EvalConfig, progress: gr.Progress | None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.state, self.config, self.progress, self.clock = state, config, progress, clock
        self.pace = TimeLeft(clock())

    def started(self, manifest: RunManifest, total: int, cached: int = 0) -> None:
        """The first line: the answers planned and the time to get those the response cache
        does not hold (a rerun's cached ones come back at once)."""
        self.pace = TimeLeft(self.clock())
        models = self.config.models
        seconds = sum((total - cached) / len(models)
                      * seconds_per_answer(self.state, m, self.config.max_tokens)[0]
                      for m in models)
        held = (": all of them cached, nothing to ask" if total and cached >= total else
                f" ({cached} of them cached), {duration(seconds)}" if cached else
                f", {duration(seconds)}")
        if self.progress is not None:
            self.progress((0, total), unit="answers", desc=f"{total} answers planned{held} · "
                          "Stop keeps the finished ones")

    def answered(self, done: int, total: int, row) -> None:
        mark = "error" if row.is_error else ("pass" if row.passed else "fail")
        now = self.clock()
        self.pace.answered(done, now)
        seconds = self.pace.left(total, now)  # the recent pace: cached answers do not skew it
        left = "" if seconds is None else f"{duration(seconds)} left"
        if self.progress is not None:
            self.progress((done, total), unit="answers",
                          desc=f"{row.case_id} [{row.arm}] {mark}" + (f" · {left}" if left else ""))


def run_evaluation_ui(state: SpaceState, repo: str | None,
                      upload: list[str] | None, models: list[str] | None, base_url: str,
                      runs: float, mode: str, placement: str, max_cases: float,
                      max_tokens: float, max_cost: float | None, *keys: str,
                      progress: gr.Progress | None = None,
                      oauth: gr.OAuthToken | None = None, session: str | None = None,
                      keep: bool = False) -> tuple:
    """Run one evaluation; returns status, summary, chart, cases and the run id (or None).

    On a Space, one that needs code or is large runs as the signed-in visitor's Hugging Face
    Jobs (`evaluate_jobs`). A run here is held under the visitor's `session`: the Stop button
    and a closed tab end it (finished answers kept), unless a signed-in visitor (or, off a
    Space, the owner) asked to `keep` it running. The Space scrubs what it returns
    (`keys.scrub_responses`), typed keys and the sign-in token included.
    """
    settings = request_settings(state.settings, state.lends_keys, *keys)

    def follow(done: int, total: int, stages: str) -> None:
        if progress is not None:
            progress((done, total), desc=f"Hugging Face Jobs on your account: {stages}",
                     unit="answers")

    if progress is not None:
        progress(0, desc="Preparing the skill and loading the models…")
    kept = keep and (bool(oauth) or not state.on_space)
    try:
        config = _config(models, base_url, runs, mode, placement, max_tokens, max_cost)
        request = EvalRequest(repo or None, list(upload or []), config, int(max_cases or 0),
                              token=oauth.token if oauth else None)
        pace = _Pace(state, config, progress)
        with state.evaluations.running(session, kept=kept) as stop:
            run = evaluate(state, request, settings, progress=pace.answered, stages=follow,
                           stop=stop, started=pace.started)
        summaries, summary, cases, chart = results(run, brief_errors=state.on_space)
    except Exception as err:  # noqa: BLE001 - shown as a readable message, never a traceback
        shown = brief(err) if state.on_space else err  # a model server's body stays unseen
        warn(shown)
        return error_markdown(shown), _empty(SUMMARY_COLUMNS), None, _empty(CASE_COLUMNS), None
    if run.manifest.status == "interrupted":
        return (_stopped(run, stop.reason), summary, chart, cases,
                run.manifest.run_id if run.rows else None)
    if summaries and all(s.failed for s in summaries):  # measured nothing: nothing to push
        failed = HubskillsError(f"run {run.manifest.run_id}: no model answered, so it measured "
                                "nothing", hint="see 'why it failed' per case below; check the "
                                "model, its key or the base URL, then run it again")
        return error_markdown(failed), summary, chart, cases, None
    return _finished(run, summaries), summary, chart, cases, run.manifest.run_id


def _finished(run: EvalRun, summaries) -> str:
    m = run.manifest
    verdicts = ", ".join(f"{s.model}: **{FAILED if s.failed else s.stats.verdict}**"
                         for s in summaries)
    where = " · ran as Hugging Face Jobs on your account" if m.produced_via == "job" else ""
    push = ("Some of the suite's cases only: *Push results* keeps it with the skill's results, "
            "but the leaderboard ranks runs of every case (Cases 0 = all)." if m.subset else
            "Press *Push results* to add it to the leaderboard.")
    return ok_markdown(f"Run `{m.run_id}` ({m.label}){where} · {m.skill_name} · "
                       f"{counted(len(m.case_ids), 'case')} × {counted(m.runs, 'run')} · "
                       f"{verdicts}. {push}")


def _stopped(run: EvalRun, reason: str | None) -> str:
    """A run stopped early (Stop, or its visitor left): what it kept."""
    m = run.manifest
    kept = (f"kept {len(run.rows)} of {m.samples_planned} answers, shown below" if run.rows
            else "stopped before its first answer: nothing was kept")
    return (f"⏹️ Run `{m.run_id}` {reason or 'stopped'}: {kept}. A stopped run is partial, so "
            f"it is not pushed or ranked; `hubskills eval SKILL --resume {m.run_id}` in this "
            "Space's home finishes it.")


def estimate_ui(state: SpaceState, repo: str | None, upload: list[str] | None,
                models: list[str] | None, runs: float, mode: str, max_cases: float,
                max_tokens: float, oauth: gr.OAuthToken | None = None) -> str:
    """The line under the form: what *Run evaluation* would start, how long it would take
    and what it would cost (`evaluate_run.estimate`), before anything runs."""
    try:
        config = _config(models, "", runs or 1, mode, "user", max_tokens or 512, None)
        request = EvalRequest(repo or None, list(upload or []), config, int(max_cases or 0),
                              token=oauth.token if oauth else None)
        if request.upload:  # a visitor's files: nothing to share with another visitor
            return "Estimate: " + estimate(state, request)
        key = (repo, tuple(config.models), config.runs, mode, request.max_cases,
               config.max_tokens, bool(oauth), state.answer_times.version)
        return "Estimate: " + state.view("estimate", key, lambda: estimate(state, request))
    except Exception as err:  # noqa: BLE001 - a form still being filled in: say what is missing
        message, hint = describe(err)
        return f"Estimate: none yet ({message}{'; ' + hint if hint else ''})."


def push_results(state: SpaceState, run_id: str | None,
                 oauth: gr.OAuthToken | None = None) -> str:
    """Append a finished run to the results dataset: on a Space as the signed-in visitor."""
    if not run_id:
        return "Run an evaluation first; then push its results."
    try:
        store = state.store_for_writes(oauth.token if oauth else None)
        pushed = push_saved_run(store, state.settings.runs_dir, run_id, via="space",
                                settings=state.settings)
    except Exception as err:  # noqa: BLE001 - shown as a readable message
        warn(err)
        return error_markdown(err)
    state.invalidate()
    if pushed.pr_url:  # the visitor may not write the dataset: it awaits its owner's review
        return ok_markdown(f"Proposed {pushed.rows} rows of run `{run_id}` for review as a pull "
                           f"request: {pushed.pr_url}. They show on the leaderboard as "
                           "*unreviewed* until the dataset's owner merges them.")
    note = f" The card was not updated: {pushed.card_note}" if pushed.card_note else ""
    return ok_markdown(f"Pushed {pushed.rows} rows of run `{run_id}` to `{pushed.path}`.{note}")
