"""The Generate tab: a teacher model writes a skill and its test suite; preview; publish.

Progress streams line by line while the teacher drafts, writes cases, evaluates and refines.
Publishing goes to the configured store; on a Hugging Face Space the visitor signs in and the
skill is published with their own token (`SpaceState.store_for_writes`). The Space scrubs
everything streamed back (`keys.scrub_responses`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import gradio as gr

from registry import (
    HubskillsError,
    publish_skill,
)

from .generate_run import GenerateJob, output_dir, preview, report_markdown, stream
from .keys import key_inputs, request_settings
from .messages import error_markdown, ok_markdown, warn
from .outbound import check_endpoints
from .state import SpaceState, oauth_available

AUTO = "auto"
TRACE_TYPES = [".jsonl", ".json", ".md", ".txt"]


def generate_ui(state: SpaceState, task: str, traces: list[str] | None, teacher: str,
                students: list[str] | None, n_tests: float, rounds: float, no_eval: bool,
                base_url: str, *keys: str, signed_in: bool = False) -> Iterator[tuple]:
    """Stream (log, summary, skill preview, suite, skill folder) while generating; on a Space,
    only to model servers the visitor may make it call (`outbound.check_endpoints`)."""
    if state.on_space:
        try:
            check_endpoints([teacher or "", *(students or [])], (base_url or "").strip() or None,
                            signed_in=signed_in)
        except HubskillsError as err:
            warn(err)
            yield "", error_markdown(err), "", "", None
            return
    settings = request_settings(state.settings, state.lends_keys, *keys)
    options = {"sources": [Path(p) for p in traces or []], "n_tests": int(n_tests),
               "rounds": int(rounds), "no_eval": bool(no_eval),
               "teacher": None if not teacher or teacher == AUTO else teacher.strip(),
               "students": [s.strip() for s in students or [] if s and s.strip()],
               "out_dir": output_dir(state.settings.home)}
    job = GenerateJob(task or "", options, settings, (base_url or "").strip() or None)
    for lines in stream(job):
        yield "\n".join(lines), "", "", "", None
    log = "\n".join(job.lines)
    if job.error is not None:
        warn(job.error)
        yield log, error_markdown(job.error), "", "", None
        return
    report = job.report
    try:
        body, suite = preview(report.path)
    except Exception as err:  # noqa: BLE001 - shown as a readable message
        warn(err)
        yield log, error_markdown(err), "", "", None
        return
    yield log, report_markdown(report), body, suite, str(report.path)


def publish_ui(state: SpaceState, folder: str | None, oauth: gr.OAuthToken | None = None) -> str:
    """Publish the generated skill: the configured store, on a Space as the signed-in visitor."""
    if not folder:
        return "Generate a skill first."
    try:
        store = state.store_for_writes(oauth.token if oauth else None)
        result = publish_skill(store, Path(folder), runs_dir=state.settings.runs_dir,
                               settings=state.settings)
    except Exception as err:  # noqa: BLE001 - shown as a readable message
        warn(err)
        return error_markdown(err)
    state.invalidate()
    published = result.published
    sha = f" (revision `{published.sha[:12]}`)" if published else ""
    return ok_markdown(f"Published **{result.plan.repo}@{result.plan.tag}**{sha}. Install it "
                       f"with `{result.pull_command}`")


def _form(model_choices: list[str]) -> list[gr.components.Component]:
    task = gr.Textbox(label="What should the skill teach?", lines=3, elem_id="gen-task",
                      placeholder="e.g. Write build.toml files for kernel-builder CUDA kernels "
                                  "targeting H100")
    traces = gr.File(label="Optional: agent traces to learn from (Claude Code / Codex JSONL, "
                           "or a transcript)", file_count="multiple", file_types=TRACE_TYPES,
                     height=110)
    with gr.Row():
        teacher = gr.Dropdown([AUTO, *model_choices], value=AUTO, allow_custom_value=True,
                              label="Teacher", info="auto: Opus with an Anthropic key, else a "
                                                    "strong hf/ model, else the embedded one")
        students = gr.Dropdown(model_choices, value=[], multiselect=True,
                               allow_custom_value=True, label="Students",
                               info="empty: the teacher plus the embedded model")
    with gr.Row():
        n_tests = gr.Slider(2, 30, value=12, step=1, label="Test cases")
        rounds = gr.Slider(0, 5, value=3, step=1, label="Refinement rounds")
        no_eval = gr.Checkbox(False, label="Skip evaluation (draft only)")
        base_url = gr.Textbox(label="Base URL for local/… models", max_lines=1)
    keys = key_inputs()
    return [task, traces, teacher, students, n_tests, rounds, no_eval, base_url, *keys.boxes]


def build(state: SpaceState, model_choices: list[str]) -> gr.events.Dependency:
    """Render the tab's components and wire its events; returns the publish event."""
    gr.Markdown("A strong *teacher* model drafts a skill and a test suite that discriminates, "
                "then the skill is evaluated on *student* models and refined against its "
                "failures. The best round is kept.", elem_classes="hs-note")
    inputs = _form(model_choices)
    go = gr.Button("Generate skill", variant="primary", elem_id="gen-run")
    log = gr.Textbox(label="Progress", lines=10, max_lines=18, autoscroll=True,
                     interactive=False, elem_id="gen-log")
    summary = gr.Markdown(elem_id="gen-summary")
    gr.Markdown("## Preview: the skill and its test suite")
    with gr.Row():  # side by side; stacked where the two cannot have 320 px each (a phone)
        body = gr.Markdown("*The generated SKILL.md appears here.*", container=True,
                           padding=True, min_height=200, max_height=520, elem_id="gen-skill",
                           min_width=320)
        # long lines wrap: a box that scrolls sideways cannot be scrolled from the keyboard
        suite = gr.Code(language="json", label="evals/evals.json", interactive=False,
                        max_lines=30, wrap_lines=True, min_width=320, elem_id="gen-suite")
    folder = gr.State(None)
    with gr.Row():
        if state.on_space and oauth_available():
            gr.LoginButton()
        publish = gr.Button("Publish", elem_id="gen-publish")
    published = gr.Markdown()

    def on_generate(task, traces, teacher, students, n_tests, rounds, no_eval, base_url,
                    anthropic_key, openai_key, hf_token, oauth: gr.OAuthToken | None = None):
        yield from generate_ui(state, task, traces, teacher, students, n_tests, rounds, no_eval,
                               base_url, anthropic_key, openai_key, hf_token,
                               signed_in=oauth is not None)

    def on_publish(path: str | None, oauth: gr.OAuthToken | None = None) -> str:
        return publish_ui(state, path, oauth)

    go.click(on_generate, inputs, [log, summary, body, suite, folder], api_name="generate",
             concurrency_limit=2, concurrency_id="model-work", show_progress="minimal",
             show_progress_on=[log])
    return publish.click(on_publish, folder, published, api_name="publish", concurrency_limit=2)
