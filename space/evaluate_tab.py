"""The Evaluate tab: A/B-test a skill on models in the browser, watch it run, push the results."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from registry import (
    EMBEDDED_REF,
)

from .evaluate_actions import estimate_ui, model_refs, push_results, run_evaluation_ui
from .evaluate_jobs import ANONYMOUS_MAX_ANSWERS, MAX_HERE_ANSWERS
from .evaluate_plan import DEFAULT_CASES, DEFAULT_RUNS
from .evaluate_run import (
    CASE_COLUMNS,
    CASE_WIDTHS,
    SUMMARY_COLUMNS,
    SUMMARY_WIDTHS,
)
from .keys import key_inputs
from .state import SpaceState, oauth_available
from .transcripts import NO_TRANSCRIPT, transcript_cases, transcript_views

STOPPING = "Stopping: the answers already made are kept."
NOTHING_TO_STOP = "No evaluation of yours is running here."
UPLOAD_TYPES = [".zip", ".md", ".json", ".py", ".txt", ".yaml", ".toml"]


@dataclass
class EvaluateTab:
    """The components and events other parts of the UI wire to."""

    skill: gr.Dropdown
    run_button: gr.Button
    push_event: gr.events.Dependency
    on_leave: Callable[[gr.Request], None]  # `demo.unload`: a closed tab stops its runs


def _form(state: SpaceState) -> list[gr.components.Component]:
    skills = state.skill_ids()
    with gr.Row():
        skill = gr.Dropdown(skills, value=skills[0] if skills else None, label="Skill",
                            info="From the registry, at its latest version", scale=2,
                            allow_custom_value=True, elem_id="eval-skill")
        upload = gr.File(label="…or upload a skill (a zip, or SKILL.md + evals.json)",
                         file_count="multiple", file_types=UPLOAD_TYPES, scale=2, height=120,
                         elem_id="eval-upload")
    with gr.Row():
        models = gr.Dropdown(model_refs(state), value=[EMBEDDED_REF], multiselect=True,
                             allow_custom_value=True, label="Models", scale=3,
                             info="Type any reference: anthropic/…, openai/…, hf/org/model, "
                                  "local/… (with a base URL)", elem_id="eval-models",
                             min_width=300)  # a model id whole on a phone: stacked there
        base_url = gr.Textbox(label="Base URL for local/… models", scale=2, max_lines=1,
                              placeholder="http://127.0.0.1:8080/v1", elem_id="eval-base-url",
                              min_width=240)
    with gr.Row():
        runs = gr.Slider(1, 5, value=DEFAULT_RUNS, step=1, label="Runs (repeats per case)",
                         elem_id="eval-runs")
        max_cases = gr.Number(DEFAULT_CASES, precision=0, minimum=0, label="Cases (0 = all)",
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


def _intro(state: SpaceState) -> str:
    jobs = (" Evaluations with code checks, in agent mode or with more than "
            f"{MAX_HERE_ANSWERS} answers run as Hugging Face Jobs on your own account, and "
            f"anonymous visitors may start at most {ANONYMOUS_MAX_ANSWERS} answers here: sign in "
            "for more." if state.on_space else "")
    return ("Evaluate a skill: every test case is answered with and without it, on each "
            "model, and graded by its checks. The free embedded model (SmolLM2-135M) runs "
            "right here; other models need a key. The estimate below the form says how long "
            "a run takes before you start it; *Stop* ends it and keeps the answers made, and "
            "closing the tab stops it too." + jobs)


def _results() -> tuple[gr.Dataframe, gr.BarPlot, gr.Dataframe]:
    summary = gr.Dataframe(pd.DataFrame(columns=list(SUMMARY_COLUMNS)), interactive=False,
                           label="Summary per model", wrap=True, elem_id="eval-summary",
                           column_widths=SUMMARY_WIDTHS,
                           elem_classes="hs-table")
    with gr.Row():
        chart = gr.BarPlot(x="bar", y="pass_rate", color="arm", y_lim=[0, 100],
                           x_title="model · arm", y_title="pass rate (%)", height=300,
                           title="Pass rate by arm",  # whole on a phone's width
                           color_map={"baseline": "#94a3b8", "with skill": "#4f46e5"},
                           tooltip=["model", "arm", "pass_rate"], scale=2, elem_id="eval-chart")
        cases = gr.Dataframe(pd.DataFrame(columns=list(CASE_COLUMNS)), interactive=False,
                             label="Per case (✓ pass · ✗ fail · E error, one mark per run)",
                             wrap=True, max_height=320, scale=3, elem_id="eval-cases-table",
                             column_widths=CASE_WIDTHS,
                             elem_classes="hs-table")
    return summary, chart, cases


def _estimate(state: SpaceState, inputs: list[gr.components.Component],
              opened: list[Any]) -> gr.Markdown:
    """The estimate under the form, computed when the tab is `opened` (its select, the
    workbench's load, where it is the first tab) and again when an input it
    reads changes (API: `/estimate_evaluation`); not on page load, where it cost every arriving
    visitor a second queued event for a line on a tab most never open (issue 38). One event
    for all of them, `always_last`: Gradio's default drops a change that arrives while an
    earlier estimate is still computing (an upload being read on a busy machine), which left
    the estimate of the form as it was."""
    skill, upload, models, _, runs, mode, _, max_cases, max_tokens = inputs[:9]
    read: list[Any] = [skill, upload, models, runs, mode, max_cases, max_tokens]  # .change

    def estimate_evaluation(repo, files, chosen, repeats, how, count, tokens,
                            oauth: gr.OAuthToken | None = None) -> str:
        return estimate_ui(state, repo, files, chosen, repeats, how, count, tokens, oauth)

    shown = gr.Markdown(elem_id="eval-estimate", elem_classes="hs-note")
    gr.on([*opened, *(box.change for box in read)], estimate_evaluation,
          inputs=read, outputs=shown,
          api_name="estimate_evaluation", trigger_mode="always_last", show_progress="hidden")
    return shown


@dataclass
class _Controls:
    run: gr.Button
    stop: gr.Button  # shown while a run of this tab's may be going
    keep: gr.Checkbox
    stopping: gr.Markdown


NO_RUN_YET = "No run yet: while one goes, its progress shows here, then its results below."


def _controls(state: SpaceState) -> _Controls:
    with gr.Row(equal_height=True):
        run = gr.Button("Run evaluation", variant="primary", elem_id="eval-run", scale=4)
        stop = gr.Button("Stop", variant="stop", visible=False, elem_id="eval-stop", scale=1)
        keep = gr.Checkbox(False, label="Keep it running if I close the tab" + (
            " (signed-in visitors)" if state.on_space else ""), elem_id="eval-keep", scale=2)
    return _Controls(run, stop, keep, gr.Markdown(elem_id="eval-stopping",
                                                  elem_classes="hs-note"))


def _wire_run(state: SpaceState, controls: _Controls, inputs: list[gr.components.Component],
              outputs: list[gr.components.Component], status: gr.Markdown,
              pushed: gr.Markdown) -> gr.events.Dependency:
    """Run, Stop and Keep: the run holds one of two slots (`model-work`) under the visitor's
    session, which Stop (API: `/stop_evaluation`) and a closed tab (`on_leave`) end. A new run
    clears what *Push* said (`pushed`) of the run before, and the status it is drawn over."""
    run_button, stop, keep, stopping = (controls.run, controls.stop, controls.keep,
                                        controls.stopping)

    def on_run(repo, upload, models, base_url, runs, mode, placement, max_cases, max_tokens,
               max_cost, anthropic_key, openai_key, hf_token, keep=False,
               oauth: gr.OAuthToken | None = None, request: gr.Request | None = None,
               progress=gr.Progress()):  # noqa: B008 - how Gradio injects a progress bar
        return run_evaluation_ui(state, repo, upload, models, base_url, runs,
                                 mode, placement, max_cases, max_tokens, max_cost,
                                 anthropic_key, openai_key, hf_token, progress=progress,
                                 oauth=oauth, session=_session(request), keep=bool(keep))

    def on_stop(request: gr.Request | None = None) -> tuple[gr.Button, str]:
        asked = state.evaluations.stop(_session(request))
        return (gr.Button("Stopping…" if asked else "Stop", interactive=not asked),
                STOPPING if asked else NOTHING_TO_STOP)

    run_button.click(lambda: (gr.Button("Stop", visible=True, interactive=True), "", "", ""),
                     None, [stop, stopping, pushed, status], queue=False,
                     api_visibility="private")  # the progress is drawn over an empty status
    stop.click(on_stop, None, [stop, stopping], api_name="stop_evaluation", queue=False)
    return run_button.click(on_run, [*inputs, keep], outputs, api_name="evaluate",
                            concurrency_limit=2, concurrency_id="model-work",
                            show_progress_on=[status]).then(
        lambda: gr.Button(visible=False), None, stop, queue=False, api_visibility="private")


def build(state: SpaceState, opened: list[Any]) -> EvaluateTab:
    """Render the tab's components and wire its events; `opened`: the triggers that mean the
    visitor sees the tab (they compute the estimate)."""
    gr.Markdown(_intro(state), elem_classes="hs-note")
    inputs = _form(state)
    _estimate(state, inputs, opened)
    controls = _controls(state)
    status = gr.Markdown(NO_RUN_YET, elem_id="eval-status", elem_classes="hs-status")
    summary, chart, cases = _results()
    run_id = gr.State(None)
    with gr.Row():
        if state.on_space and oauth_available():
            gr.LoginButton()
        push = gr.Button("Push results to the leaderboard", elem_id="eval-push")
        pushed = gr.Markdown(elem_id="eval-pushed")

    case_pick, baseline_md, skill_md = _transcripts()

    def on_push(run: str | None, oauth: gr.OAuthToken | None = None) -> str:
        return push_results(state, run, oauth)

    def on_cases(run: str | None):
        choices = transcript_cases(state.settings.runs_dir, run)
        return gr.Dropdown(choices=choices, value=choices[0] if choices else None)

    def on_case(run: str | None, case: str | None) -> tuple[str, str]:
        return transcript_views(state.settings.runs_dir, run, case)

    def on_leave(request: gr.Request) -> None:
        state.evaluations.left(_session(request))

    ran = _wire_run(state, controls, inputs, [status, summary, chart, cases, run_id], status,
                    pushed)
    ran.then(on_cases, run_id, case_pick, api_visibility="private")
    case_pick.change(on_case, [run_id, case_pick], [baseline_md, skill_md],
                     api_visibility="private")
    push_event = push.click(on_push, run_id, pushed, api_name="push_results",
                            concurrency_limit=4)
    skill = inputs[0]
    assert isinstance(skill, gr.Dropdown)  # `_form` puts the skill's dropdown first
    return EvaluateTab(skill, controls.run, push_event, on_leave)


def _session(request: gr.Request | None) -> str | None:
    """The visitor's session (one browser tab, or one `gradio_client.Client`)."""
    return getattr(request, "session_hash", None) if request is not None else None
