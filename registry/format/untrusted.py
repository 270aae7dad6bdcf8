"""Untrusted Markdown (a SKILL.md, a transcript, a description, a file name) as safe HTML.

The one sanitiser for text that others wrote and a page shows. `safe_html` renders CommonMark
(tables and strikethrough added) with markdown-it-py, then keeps only what a skill page needs
through `nh3` (the Rust `ammonia` sanitiser; bidi controls, which would reorder what is
shown, are named instead, as `[U+202E]`): headings, paragraphs, lists, quotes, code, tables,
emphasis, rules, `<details>`, and links with `http`, `https` or `mailto` targets (a relative
link, `references/api.md`, keeps its text and loses its target: the page showing it is not
where the skill's files are, so it led to a missing page). Everything
else goes: forms, inputs, buttons, frames, images, `style` attributes and elements, classes and
ids (nothing can be positioned over the page or take another element's id), every event
handler; scripts and styles lose their content too.

The HTML comes back as one `<div>` on one line (newlines as `&#10;`, which inside `<pre>` still
break lines), so a Markdown viewer that is handed it, as Gradio's `gr.Markdown` is, reads it as
one raw HTML block and parses none of its text as Markdown again.

`code_span` and `code_block` build Markdown code that no content can close: the fence is
longer than any run of backticks in the content.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

TAGS = frozenset({
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "blockquote", "ul", "ol", "li",
    "pre", "code", "em", "strong", "del", "s", "a", "table", "thead", "tbody", "tr", "th",
    "td", "details", "summary", "kbd", "sub", "sup",
})
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
_BACKTICKS = re.compile(r"`+")
# Bidi embeddings, overrides and isolates: shown, they reorder the text around them ("\u202e"
# makes "gnitset" read "testing"), so a page names them instead.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
# ... in HTML: the character, or a numeric reference to it (decimal or hex)
_BIDI_SHOWN = re.compile("[\u202a-\u202e\u2066-\u2069]|&#(?:[xX]0*(?:202[a-eA-E]|206[6-9])"
                         "|0*(?:823[4-8]|829[4-7]));")


def named_bidi(text: str) -> str:
    """`text` (HTML or Markdown) with each bidi control, or a numeric reference to one, named
    instead (`[U+202E]`): shown, it would reorder the text around it (a review note: the
    renderer turned `&#x202E;` into one after the raw ones were named)."""
    return _BIDI_SHOWN.sub(_named, text)


def _named(match: re.Match[str]) -> str:
    """A bidi control, as `[U+202E]`."""
    text = match.group()
    if text.startswith("&#"):
        digits = text[2:-1]
        code = int(digits[1:], 16) if digits[:1] in "xX" else int(digits)
    else:
        code = ord(text)
    return f"[U+{code:04X}]"


def safe_html(markdown: str) -> str:
    """`markdown` rendered and sanitised (see the module docstring), as one line of HTML."""
    import nh3

    rendered = _parser().render(markdown)
    cleaned = nh3.clean(rendered, tags=set(TAGS), attributes=ATTRIBUTES,
                        url_schemes=set(URL_SCHEMES), link_rel="noopener noreferrer nofollow",
                        url_relative="deny", strip_comments=True)
    cleaned = named_bidi(cleaned)  # after the renderer decoded `&#x202E;` into one
    return "<div>" + cleaned.strip().replace("\r", "").replace("\n", "&#10;") + "</div>"


def code_span(text: object) -> str:
    """`text` as a Markdown code span that nothing in it can close."""
    body = " ".join(str(text).splitlines())
    fence = "`" * (_longest_run(body) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def code_block(text: str, info: str = "") -> str:
    """`text` as a fenced Markdown code block that nothing in it can close."""
    fence = "`" * max(4, _longest_run(text) + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{' '.join(info.split()).replace('`', '')}\n{body}{fence}"


def _longest_run(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


@functools.cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
