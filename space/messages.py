"""Readable messages for the UI: errors become a message and a hint, never a traceback.

Handlers catch `HubskillsError` and show it with `error_markdown` (in the page) and `warn` (a
toast). Anything else is logged on the server and shown as a short, generic message, because an
unexpected exception's text may hold paths or request details that do not belong on screen.
"""

from __future__ import annotations

import functools
import html
import logging
from collections.abc import Callable, Iterable
from typing import ParamSpec, TypeVar

import gradio as gr

from registry import (
    HubskillsError,
    MissingCredentials,
    scrub,
)

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")


def describe(err: BaseException, secrets: Iterable[str] = ()) -> tuple[str, str | None]:
    """(message, hint) for any exception; every known secret (and `secrets`) masked in both."""
    hint: str | None
    if isinstance(err, MissingCredentials):
        message = err.message
        hint = f"type a key under 'API keys' (used for this request only), or set {err.variable}"
    elif isinstance(err, HubskillsError):
        message, hint = err.message, err.hint
    else:
        message, hint = (f"Something went wrong ({type(err).__name__}).",
                         "Try again; if it keeps failing, check the Space's logs.")
    secrets = list(secrets)
    return scrub(message, secrets), scrub(hint, secrets) if hint else hint


def error_markdown(err: BaseException, secrets: Iterable[str] = ()) -> str:
    """Markdown for an error panel: **Error:** message, then the hint naming the next step."""
    message, hint = describe(err, secrets)
    text = f"**Error:** {message}"
    if hint:
        text += f"\n\n**Hint:** `{hint}`"
    return text


def warn(err: BaseException, secrets: Iterable[str] = ()) -> None:
    """Show the error as a toast (message and hint); unexpected errors are logged first."""
    if not isinstance(err, HubskillsError):
        log.error("unexpected error in a Space handler: %s", type(err).__name__, exc_info=err)
    message, hint = describe(err, secrets)
    gr.Warning(html.escape(f"{message} — hint: {hint}" if hint else message, quote=False))


def friendly(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn a handler's `HubskillsError` (or any error) into a readable `gr.Error`."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except gr.Error:
            raise
        except Exception as err:  # noqa: BLE001 - the boundary: nothing reaches the user raw
            if not isinstance(err, HubskillsError):
                log.error("unexpected error in %s", fn.__name__, exc_info=err)
            message, hint = describe(err)
            text = f"{message} Hint: {hint}" if hint else message
            raise gr.Error(html.escape(text, quote=False), print_exception=False) from None

    return wrapper


def counted(n: int, noun: str) -> str:
    """`n` and the noun, plural unless one: "1 run", "3 cases"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def ok_markdown(text: str) -> str:
    """A success line for a status panel."""
    return f"✅ {text}"
