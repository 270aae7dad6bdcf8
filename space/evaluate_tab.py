"""The Evaluate tab: A/B-test a skill on models in the browser, watch it run, push the results."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr
import pandas as pd

from registry import (
    EMBEDDED_REF,
    EvalConfig,
    HubskillsError,
    known_models,
    push_saved_run,
)

from .evaluate_jobs import MAX_HERE_ANSWERS
from .evaluate_run import (
    CASE_COLUMNS,
    CASE_WIDTHS,
    FAILED,
    SUMMARY_COLUMNS,
    SUMMARY_WIDTHS,
    EvalRequest,
    evaluate,
    results,
)
from .keys import key_inputs, request_settings
from .messages import error_markdown, ok_markdown, warn
from .outbound import brief
from .state import SpaceState, oauth_available
from .transcripts import NO_TRANSCRIPT, transcript_cases, transcript_views

UPLOAD_TYPES = [".zip", ".md", ".json", ".py", ".txt", ".yaml", ".toml"]


@dataclass
class EvaluateTab:
    """The components and events other parts of the UI wire to."""

    skill: gr.Dropdown
    run_button: gr.Button
    push_event: gr.events.Dependency


def model_refs(state: SpaceState) -> list[str]:
    """The embedded model first, then every other known reference."""
    refs = [m.ref for m in known_models(state.settings) if "<" not in m.ref]
    return [EMBEDDED_REF, *[r for r in refs if r != EMBEDDED_REF]]


def _config(models: list[str] | None, base_url: str, runs: float, mode: str, placement: str,
            max_tokens: float, max_cost: float | None) -> EvalConfig:
    chosen = [m.strip() for m in models or [] if m and m.strip()] or [EMBEDDED_REF]
    return EvalConfig(models=chosen, runs=int(runs), mode=mode, placement=placement,
                      max_tokens=int(max_tokens), base_url=(base_url or "").strip() or None,
                      max_cost=float(max_cost) if max_cost else None)


def run_evaluation_ui(state: SpaceState, repo: str | None,
                      upload: list[str] | None, models: list[str] | None, base_url: str,
                      runs: float, mode: str, placement: str, max_cases: float,
                      max_tokens: float, max_cost: float | None, *keys: str,
                      progress: gr.Progress | None = None,
                      oauth: gr.OAuthToken | None = None) -> tuple:
    """Run one evaluation; returns status, summary, chart, cases and the run id (or None).

    On a Space, one that needs code or is large runs as the signed-in visitor's Hugging Face
    Jobs (`evaluate_jobs`). The Space scrubs what it returns (`keys.scrub_responses`), typed
    keys and the sign-in token included.
    """
    settings = request_settings(state.settings, state.lends_keys, *keys)

    def advance(done: int, total: int, row) -> None:
        mark = "error" if row.is_error else ("pass" if row.passed else "fail")
        if progress is not None:
            progress((done, total), desc=f"{row.case_id} [{row.arm}] {mark}", unit="answers")

    def follow(done: int, total: int, stages: str) -> None:
        if progress is not None:
            progress((done, total), desc=f"Hugging Face Jobs on your account: {stages}",
                     unit="answers")

    if progress is not None:
        progress(0, desc="Preparing the skill and loading the models…")
    try:
        config = _config(models, base_url, runs, mode, placement, max_tokens, max_cost)
        request = EvalRequest(repo or None, list(upload or []), config, int(max_cases or 0),
                              token=oauth.token if oauth else None)
        run = evaluate(state, request, settings, progress=advance, stages=follow)
        summaries, summary, cases, chart = results(run, brief_errors=state.on_space)
    except Exception as err:  # noqa: BLE001 - shown as a readable message, never a traceback
        err = brief(err) if state.on_space else err  # a model server's body stays unseen
        warn(err)
        return error_markdown(err), None, None, None, None
    m = run.manifest
    verdicts = ", ".join(f"{s.model}: **{FAILED if s.failed else s.stats.verdict}**"
                         for s in summaries)
    if summaries and all(s.failed for s in summaries):  # measured nothing: nothing to push
        failed = HubskillsError(f"run {run.manifest.run_id}: no model answered, so it measured "
                                "nothing", hint="see 'why it failed' per case below; check the "
                                "model, its key or the base URL, then run it again")
        return error_markdown(failed), summary, chart, cases, None
    where = " · ran as Hugging Face Jobs on your account" if m.produced_via == "job" else ""
    status = ok_markdown(f"Run `{m.run_id}` ({m.status}){where} · {m.skill_name} · "
                         f"{len(m.case_ids)} cases × {m.runs} runs · {verdicts}. "
                         "Press *Push results* to add it to the leaderboard.")
    return status, summary, chart, cases, m.run_id


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


def _form(state: SpaceState) -> list[gr.components.Component]:
    skills = state.skill_ids()
    with gr.Row():
        skill = gr.Dropdown(skills, value=skills[0] if skills else None, label="Skill",
                            info="From the registry, at its latest version", scale=2,
                            allow_custom_value=True, elem_id="eval-skill")
        upload = gr.File(label="…or upload a skill (a zip, or SKILL.md + evals.json)",
                         file_count="multiple", file_types=UPLOAD_TYPES, scale=2, height=120)
    with gr.Row():
        models = gr.Dropdown(model_refs(state), value=[EMBEDDED_REF], multiselect=True,
                             allow_custom_value=True, label="Models", scale=3,
                             info="Type any reference: anthropic/…, openai/…, hf/org/model, "
                                  "local/… (with a base URL)", elem_id="eval-models")
        base_url = gr.Textbox(label="Base URL for local/… models", scale=2, max_lines=1,
                              placeholder="http://127.0.0.1:8080/v1", elem_id="eval-base-url")
    with gr.Row():
        runs = gr.Slider(1, 5, value=3, step=1, label="Runs (repeats per case)",
                         elem_id="eval-runs")
        max_cases = gr.Number(0, precision=0, minimum=0, label="Cases (0 = all)",
                              elem_id="eval-cases")
        mode = gr.Radio(["inline", "tool", "agent"], value="inline", label="Mode",
                        info="inline: SKILL.md in context · tool: the model must load it · "
                             "agent: a coding agent with files and a sandboxed shell")
        placement = gr.Radio(["user", "system"], value="user", label="Inline placement")
    with gr.Accordion("Limits", open=False):
        with gr.Row():
            max_tokens = gr.Slider(16, 2048, value=512, step=16, label="Max tokens per answer",
                                   elem_id="eval-max-tokens")
            max_cost = gr.Number(1.0, minimum=0, label="Stop past this many USD (0 = no limit)")
    keys = key_inputs()
    return [skill, upload, models, base_url, runs, mode, placement, max_cases, max_tokens,
            max_cost, *keys.boxes]


def _transcripts() -> tuple[gr.Dropdown, gr.Markdown, gr.Markdown]:
    """Agent mode: a case's baseline and skill trajectories side by side."""
    with gr.Accordion("Agent transcripts (agent mode): baseline and skill side by side",
                      open=False):
        case_pick = gr.Dropdown([], label="Case", elem_id="eval-transcript-case")
        with gr.Row():
            with gr.Column():
                gr.Markdown("#### Baseline")
                baseline = gr.Markdown(NO_TRANSCRIPT, elem_id="eval-transcript-baseline")
            with gr.Column():
                gr.Markdown("#### With the skill")
                skill = gr.Markdown(NO_TRANSCRIPT, elem_id="eval-transcript-skill")
    return case_pick, baseline, skill


def build(state: SpaceState) -> EvaluateTab:
    """Render the tab's components and wire its events."""
    gr.Markdown("Evaluate a skill: every test case is answered with and without it, on each "
                "model, and graded by its checks. The free embedded model (SmolLM2-135M) runs "
                "right here; other models need a key." + (
                    " Evaluations with code checks, in agent mode or with more than "
                    f"{MAX_HERE_ANSWERS} answers run "
                    "as Hugging Face Jobs on your own account: sign in for them."
                    if state.on_space else ""), elem_classes="hs-note")
    inputs = _form(state)
    run_button = gr.Button("Run evaluation", variant="primary", elem_id="eval-run")
    status = gr.Markdown(elem_id="eval-status", elem_classes="hs-status")
    summary = gr.Dataframe(pd.DataFrame(columns=list(SUMMARY_COLUMNS)), interactive=False,
                           label="Summary per model", wrap=True, elem_id="eval-summary",
                           column_widths=SUMMARY_WIDTHS,
                           elem_classes="hs-table")
    with gr.Row():
        chart = gr.BarPlot(x="bar", y="pass_rate", color="arm", y_lim=[0, 100],
                           x_title="model · arm", y_title="pass rate (%)", height=300,
                           title="Pass rate without and with the skill",
                           color_map={"baseline": "#94a3b8", "with skill": "#4f46e5"},
                           tooltip=["model", "arm", "pass_rate"], scale=2, elem_id="eval-chart")
        cases = gr.Dataframe(pd.DataFrame(columns=list(CASE_COLUMNS)), interactive=False,
                             label="Per case (✓ pass · ✗ fail · E error, one mark per run)",
                             wrap=True, max_height=320, scale=3, elem_id="eval-cases-table",
                             column_widths=CASE_WIDTHS,
                             elem_classes="hs-table")
    run_id = gr.State(None)
    with gr.Row():
        if state.on_space and oauth_available():
            gr.LoginButton()
        push = gr.Button("Push results to the leaderboard", elem_id="eval-push")
        pushed = gr.Markdown(elem_id="eval-pushed")

    case_pick, baseline_md, skill_md = _transcripts()

    def on_run(repo, upload, models, base_url, runs, mode, placement, max_cases, max_tokens,
               max_cost, anthropic_key, openai_key, hf_token, oauth: gr.OAuthToken | None = None,
               progress=gr.Progress()):  # noqa: B008 - how Gradio injects a progress bar
        return run_evaluation_ui(state, repo, upload, models, base_url, runs,
                                 mode, placement, max_cases, max_tokens, max_cost,
                                 anthropic_key, openai_key, hf_token, progress=progress,
                                 oauth=oauth)

    def on_push(run: str | None, oauth: gr.OAuthToken | None = None) -> str:
        return push_results(state, run, oauth)

    def on_cases(run: str | None):
        choices = transcript_cases(state.settings.runs_dir, run)
        return gr.Dropdown(choices=choices, value=choices[0] if choices else None)

    def on_case(run: str | None, case: str | None) -> tuple[str, str]:
        return transcript_views(state.settings.runs_dir, run, case)

    run_button.click(on_run, inputs, [status, summary, chart, cases, run_id],
                     api_name="evaluate", concurrency_limit=2, concurrency_id="model-work",
                     show_progress_on=[status]).then(on_cases, run_id, case_pick,
                                                     api_visibility="private")
    case_pick.change(on_case, [run_id, case_pick], [baseline_md, skill_md],
                     api_visibility="private")
    push_event = push.click(on_push, run_id, pushed, api_name="push_results",
                            concurrency_limit=4)
    return EvaluateTab(inputs[0], run_button, push_event)
