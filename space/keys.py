"""API keys typed into the UI: used for one request, never logged, stored or shown back.

The key textboxes are password fields. A handler passes their values to `request_settings`,
which returns a copy of the Space's `Settings` for that call only; nothing keeps it. Every
text the handler sends back goes through `scrub` with the same values.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from registry import Settings

_NO_AUTOFILL = gr.InputHTMLAttributes(autocomplete="off", spellcheck=False)
KEY_FIELDS = (
    ("anthropic_api_key", "Anthropic API key", "sk-ant-…  (for anthropic/… models)"),
    ("openai_api_key", "OpenAI API key", "sk-…  (for openai/… models)"),
    ("hf_token", "Hugging Face token", "hf_…  (for hf/… models)"),
)


@dataclass(frozen=True)
class KeyInputs:
    """The three password textboxes, in `KEY_FIELDS` order."""

    boxes: tuple[gr.Textbox, ...]


def key_inputs() -> KeyInputs:
    """Render an accordion of password fields for keys that are used for one request only."""
    with gr.Accordion("API keys (optional; used for this request only, never stored)",
                      open=False):
        gr.Markdown("Keys typed here are sent with this one request and discarded: they are "
                    "not logged, saved with results, or shown back. Without a key, the free "
                    "embedded model runs on this machine.", elem_classes="hs-note")
        with gr.Row():
            boxes = tuple(gr.Textbox(label=label, placeholder=placeholder, type="password",
                                     max_lines=1, html_attributes=_NO_AUTOFILL)
                          for _, label, placeholder in KEY_FIELDS)
    return KeyInputs(boxes)


def request_settings(base: Settings, *values: str | None) -> Settings:
    """`base` with the typed keys (in `KEY_FIELDS` order) replacing the configured ones."""
    changes = {name: value.strip() for (name, _, _), value in zip(KEY_FIELDS, values,
                                                                    strict=False)
               if value and value.strip()}
    return base.with_(**changes) if changes else base


def typed_secrets(*values: str | None) -> list[str]:
    """The non-empty typed keys, to mask in anything shown back."""
    return [v.strip() for v in values if v and v.strip()]


def scrub(text: str, secrets: list[str]) -> str:
    """`text` with every secret value replaced by `***`."""
    for secret in secrets:
        text = text.replace(secret, "***")
    return text
