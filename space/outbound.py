"""What a Space visitor may make this server call, and what of the answer they see.

On a Space, the server calls model servers for its visitors, so a visitor must not choose an
address only the server can reach (SSRF): `check_endpoints` refuses `local/` models and custom
base URLs to anonymous visitors, and lets a signed-in visitor's base URL through only when it
is `https` on a public host (`registry.check_public_url`: after DNS, every address public; the
providers follow no redirects). Off a Space the owner runs everything, as the CLI does.

A model server's error body is not echoed to visitors: `status_line` keeps an error up to its
HTTP status.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from registry import HubskillsError, check_public_url

from .state import SignInRequired

_LOCAL = "local/"
_STATUS = re.compile(r"^(.*?\bHTTP \d{3}\)?)")
HIDDEN = " (the server's answer is not shown on this Space)"


def check_endpoints(models: Sequence[str], base_url: str | None, *, signed_in: bool) -> None:
    """Refuse model servers a visitor chose that this Space must not call for them.

    Raises:
        SignInRequired: an anonymous visitor asked for a `local/` model or a base URL.
        HubskillsError: a signed-in visitor's base URL is not https on a public host.
    """
    chosen = [m for m in models if m.strip().lower().startswith(_LOCAL)]
    if not signed_in and (base_url or chosen):
        what = f"a model server URL ({base_url})" if base_url else f"{chosen[0]}"
        raise SignInRequired(
            f"{what} needs Hugging Face sign-in on this Space: an anonymous visitor may use the "
            "listed API models and the embedded one only",
            hint="sign in with Hugging Face (the button above), or run hubskills on your "
                 "machine with --base-url")
    if base_url:
        check_public_url(base_url)


def status_line(text: str) -> str:
    """`text` cut after its HTTP status, when it has one (the server's body goes)."""
    found = _STATUS.match(text)
    return found.group(1) + HIDDEN if found and len(found.group(1)) < len(text) else text


def brief(err: BaseException) -> BaseException:
    """`err` with its message cut by `status_line` (a copy: the same type, hint and fields)."""
    if not isinstance(err, HubskillsError) or status_line(err.message) == err.message:
        return err
    short = type(err).__new__(type(err))  # no __init__: some need keyword-only fields
    short.__dict__.update(vars(err))
    short.message = status_line(err.message)
    short.args = (short.message,)
    return short
