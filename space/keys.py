"""Secrets in the Space: keys typed for one request, whose keys are lent, scrubbed responses.

The key textboxes are password fields. A handler passes their values to `request_settings`,
which holds them for the request (`registry.secrets`) and returns a copy of the Space's
`Settings` for that call only; nothing keeps it. `scrub_responses` wraps every event handler of
the app: each call runs in its own secret scope (a visitor's typed keys and sign-in token are
never known to another visitor's request), and everything it returns or raises is scrubbed of
every secret the process holds: the server's keys, its HF token file, that request's keys.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from registry import (
    SecretScope,
    Settings,
    current_scope,
    hold,
    scrub,
    scrub_data,
    scrubber,
)

_NO_AUTOFILL = gr.InputHTMLAttributes(autocomplete="off", spellcheck=False)
KEY_FIELDS = (
    ("anthropic_api_key", "Anthropic API key", "sk-ant-…  (for anthropic/… models)"),
    ("openai_api_key", "OpenAI API key", "sk-…  (for openai/… models)"),
    ("hf_token", "Hugging Face token", "hf_…  (for hf/… models)"),
)
_NO_KEYS = {name: None for name, _, _ in KEY_FIELDS}


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


def request_settings(base: Settings, lend_server_keys: bool, *values: str | None) -> Settings:
    """The settings for one request: the typed keys (in `KEY_FIELDS` order) over `base`'s.

    Unless `lend_server_keys`, the server's own keys are dropped first, so a visitor's request
    uses their typed key or none. The typed keys are held for the request (see the module
    docstring); call this inside a handler wrapped by `scrub_responses`.
    """
    typed = [value.strip() if value else "" for value in values]
    hold(*typed)
    settings = base if lend_server_keys else base.with_(**_NO_KEYS)
    changes = {name: value for (name, _, _), value in zip(KEY_FIELDS, typed, strict=False)
               if value}
    return settings.with_(**changes) if changes else settings


def scrub_output(value: Any, apply: Callable[[str], str] | None = None) -> Any:
    """A handler's output with every secret masked: text, tables, and containers of them."""
    apply = apply or scrubber()
    if isinstance(value, pd.DataFrame):
        return value.map(lambda cell: apply(cell) if isinstance(cell, str) else cell)
    if isinstance(value, list | tuple):
        return type(value)(scrub_output(item, apply) for item in value)
    return scrub_data(value, apply)


def _new_scope(args: tuple, kwargs: dict) -> SecretScope:
    """A fresh scope for one call, holding the visitor's sign-in token if the call has one."""
    scope = SecretScope(parent=current_scope())
    for arg in (*args, *kwargs.values()):
        if isinstance(arg, gr.OAuthToken):
            scope.add(arg.token)
    return scope


def _scrubbed_error(err: gr.Error) -> gr.Error:
    err.message = scrub(str(err.message))
    err.args = (err.message,)
    return err


def _scrubbed(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` run in its own secret scope, its results and `gr.Error` messages scrubbed."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def stream(*args: Any, **kwargs: Any) -> Iterator[Any]:
            scope = _new_scope(args, kwargs)
            inner = fn(*args, **kwargs)
            try:
                while True:
                    # Gradio may run each step in another thread: enter the scope per step.
                    with scope.active():
                        try:
                            item = scrub_output(next(inner))
                        except StopIteration:
                            return
                        except gr.Error as err:
                            raise _scrubbed_error(err) from None
                    yield item
            finally:
                inner.close()

        return stream
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(f"scrub_responses does not wrap async handlers ({fn.__name__})")

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        with _new_scope(args, kwargs).active():
            try:
                return scrub_output(fn(*args, **kwargs))
            except gr.Error as err:
                raise _scrubbed_error(err) from None

    return call


def scrub_responses(demo: gr.Blocks) -> None:
    """Wrap every event handler of `demo` (see the module docstring). Call once, after build."""
    for block_fn in demo.fns.values():
        if block_fn.fn is not None and not getattr(block_fn.fn, "hubskills_scrubbed", False):
            block_fn.fn = _scrubbed(block_fn.fn)
            block_fn.fn.hubskills_scrubbed = True  # type: ignore[attr-defined]  # a mark on it
