"""Blind review of a run's answers: the Space's *Review* tab, and the panel `hubskills
review-outputs` serves too (`review_local`).

Per case the prompt and the two arms' answers side by side, as "Answer A" and "Answer B": which
side is the skill's is drawn per case (`registry.review`) and said only once the reviewer has
answered (A, B, tie or both bad, with a comment). Keys: `a`, `b`, `t`, `x` answer, `n` opens
the next case (not while typing a comment). Everything shown was written by a model or a
suite's author, so it goes through the one sanitiser (`safe_html`).

In the Space the run is one of the registry's: a signed-in visitor reviews under their Hub name
(off a Space, the local user), one answer per case, at most `RATE` answers a minute; an
anonymous visitor sees the summary only. Answers are written to the results dataset with the
Space's own store (`registry.review`), never as results: no badge or ranking reads them.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import gradio as gr

from registry import (
    HubskillsError,
    Review,
    board_entries,
    code_block,
    code_span,
    open_registry_review,
    safe_html,
)

from .messages import counted, error_markdown, friendly
from .state import SpaceState, oauth_available

SECRET_ENV = "HUBSKILLS_REVIEW_SECRET"  # keeps the sides across the Space's restarts
RATE = 20  # answers per reviewer per minute
LABELS = {"A": "A is better", "B": "B is better", "tie": "Tie", "both_bad": "Both bad"}
KEYS = {"A": "a", "B": "b", "tie": "t", "both_bad": "x"}
ANONYMOUS = ("Sign in with Hugging Face to review this run's answers; until then you see "
             "what reviewers said so far.")
# Keyboard shortcuts: a letter clicks its button while the review is on screen and the focus
# is not in a text field.
KEYS_JS = """
document.addEventListener('keydown', (event) => {
  const target = event.target;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (target && (target.tagName === 'TEXTAREA' || target.tagName === 'INPUT')) return;
  const ids = {a: 'review-choose-A', b: 'review-choose-B', t: 'review-choose-tie',
               x: 'review-choose-both_bad', n: 'review-next'};
  const button = document.getElementById(ids[event.key]);
  if (button && button.offsetParent !== null && !button.disabled) {
    event.preventDefault();
    button.click();
  }
});
// A code block scrolls sideways in its column (theme.CSS): the keyboard reaches it to scroll.
const reachable = () => document.querySelectorAll(':is(#review-prompt, #review-a, #review-b) pre')
  .forEach(pre => Object.assign(pre, {tabIndex: 0, role: 'region', ariaLabel: 'code'}));
reachable();
new MutationObserver(reachable).observe(document.body, {childList: true, subtree: true});
"""


class RateLimit:
    """At most `limit` answers per reviewer in any `window` seconds."""

    def __init__(self, limit: int = RATE, window: float = 60.0) -> None:
        self.limit, self.window = limit, window
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def take(self, reviewer: str) -> None:
        """Count one answer of `reviewer`.

        Raises:
            HubskillsError: over the limit (nothing counted).
        """
        now = time.monotonic()
        with self._lock:
            seen = self._seen.setdefault(reviewer, deque())
            while seen and now - seen[0] > self.window:
                seen.popleft()
            if len(seen) >= self.limit:
                wait = int(self.window - (now - seen[0])) + 1
                raise HubskillsError(f"{reviewer} answered {self.limit} cases in the last "
                                     f"{self.window:.0f} s: wait {wait} s",
                                     hint="read the next case, then answer")
            seen.append(now)


@dataclass
class Panel:
    """The review's components."""

    run: gr.State | gr.Dropdown
    case: gr.State
    progress: gr.Markdown
    prompt: gr.HTML
    answers: tuple[gr.HTML, gr.HTML]
    comment: gr.Textbox
    choices: dict[str, gr.Button]
    next: gr.Button
    revealed: gr.Markdown
    summary: gr.Markdown
    pair: gr.Group


def shown(review: Review, case_id: str, side: Literal["A", "B"], reviewer: str) -> str:
    """One side's answer to `reviewer`, as sanitised HTML (agent mode: then its final files)."""
    answer = review.case(case_id, reviewer).side(side)
    parts = [answer.output or "_(no text answer)_"]
    for path, text in answer.files.items():
        parts.append(f"**{code_span(path)}**\n\n{code_block(text)}")
    return safe_html("\n\n".join(parts))


def summary_markdown(review: Review) -> str:
    """The preference summary in words, with its interval (before any answer, that there is
    none: said once, not again as "no case with a preference")."""
    summary = review.summary()
    lines = ([f"**{summary.headline.capitalize()}** ({summary.apart}).", summary.interval]
             if summary.reviewed else [f"**{summary.headline.capitalize()}.**"])
    # Case ids come from the rows, which a results file writes: shown as code, never markup
    lines += [f"- {line}" for line in summary.lines(name=code_span)[2:]]
    lines.append("_People's preference, not a measured result: shown beside the lift, "
                 "never in it._")
    return "\n\n".join(lines)


def case_updates(review: Review | None, reviewer: str | None) -> tuple:
    """(case id, progress, prompt, answer A, answer B, comment, 4 choices, next, revealed,
    summary, pair group) for `reviewer`'s next case."""
    if review is None:
        return (None, "", "", "", "", gr.Textbox(value=""), *_buttons(False), gr.Button(
            visible=False), "", "", gr.Group(visible=False))
    summary = summary_markdown(review)
    if reviewer is None:
        return (None, ANONYMOUS, "", "", "", gr.Textbox(value=""), *_buttons(False),
                gr.Button(visible=False), "", summary, gr.Group(visible=False))
    done, total = review.progress(reviewer)
    case = review.next_case(reviewer)
    if case is None:
        return (None, f"**{done} of {total}** cases answered: the review is done, thank you.",
                "", "", "", gr.Textbox(value=""), *_buttons(False), gr.Button(visible=False),
                "", summary, gr.Group(visible=False))
    progress = (f"**Case {done + 1} of {total}** ({done} answered) · {code_span(case.case)}"
                f" · keys: a, b, t (tie), x (both bad), n (next)")
    prompt = safe_html(f"**Prompt**{' (the task)' if case.mode == 'agent' else ''}\n\n"
                       + case.prompt)
    return (case.case, progress, prompt, shown(review, case.case, "A", reviewer),
            shown(review, case.case, "B", reviewer), gr.Textbox(value=""), *_buttons(True),
            gr.Button(visible=False), "", summary, gr.Group(visible=True))


def _buttons(active: bool) -> list[gr.Button]:
    return [gr.Button(interactive=active) for _ in LABELS]


def reveal(review: Review, case_id: str, choice: str, reviewer: str) -> str:
    """What `reviewer` learns once they answered: which side was which, and the checks."""
    case = review.case(case_id, reviewer)
    other = "B" if case.skill_side == "A" else "A"
    picked = {"tie": "a tie", "both_bad": "both bad"}.get(
        choice, f"{choice}, the {'skill' if choice == case.skill_side else 'baseline'}'s")

    def verdict(passed: bool | None) -> str:
        return "passed" if passed else "failed" if passed is False else "not graded"

    return (f"Answer **{case.skill_side}** was the skill's, **{other}** the baseline's "
            f"(sample {code_span(case.sample)}). You chose {picked}. The checks: the skill's "
            f"answer {verdict(case.skill.passed)}, the baseline's "
            f"{verdict(case.baseline.passed)}.")


def wire(panel: Panel, resolve: Callable[..., tuple[Review | None, str | None]],
         limit: RateLimit) -> None:
    """The events: open (the run), answer, next. `resolve(run, profile)` gives the review
    and who is reviewing (None: anonymous)."""
    case_outputs = [panel.case, panel.progress, panel.prompt, *panel.answers, panel.comment,
                    *panel.choices.values(), panel.next, panel.revealed, panel.summary,
                    panel.pair]

    @friendly
    def open_case(run: str | None, profile: gr.OAuthProfile | None = None) -> tuple:
        review, reviewer = resolve(run, profile)
        return case_updates(review, reviewer)

    def answer_with(choice: str) -> Callable[..., tuple]:
        @friendly
        def answer(run: str | None, case_id: str | None, comment: str,
                   profile: gr.OAuthProfile | None = None) -> tuple:
            review, reviewer = resolve(run, profile)
            if review is None or reviewer is None:
                raise HubskillsError("sign in to review", hint="the Sign in button above")
            if not case_id:  # the page was reloaded on the summary: no case is open
                raise HubskillsError("no case is open to answer",
                                     hint="press Next (or n) to open the next case")
            limit.take(reviewer)
            review.answer(reviewer, case_id, choice, comment or "")
            done, total = review.progress(reviewer)
            more = done < total
            said = "press n for the next case" if more else "every case answered: the " \
                "summary is below"
            return (f"**{done} of {total}** cases answered · {said}",
                    *_buttons(False), gr.Button(visible=more),
                    reveal(review, case_id, choice, reviewer), summary_markdown(review))
        return answer

    after = [panel.progress, *panel.choices.values(), panel.next, panel.revealed,
             panel.summary]
    for choice, button in panel.choices.items():
        button.click(answer_with(choice), [panel.run, panel.case, panel.comment], after,
                     api_name=f"review_{choice.lower()}", concurrency_limit=4,
                     concurrency_id="review_answer")
    panel.next.click(open_case, panel.run, case_outputs, api_name="review_next",
                     concurrency_limit=8, concurrency_id="review_open")
    if isinstance(panel.run, gr.Dropdown):
        panel.run.change(open_case, panel.run, case_outputs, api_name="review_open",
                         concurrency_limit=8, concurrency_id="review_open")


def panel(run: gr.State | gr.Dropdown) -> Panel:
    """The review's components, under `run` (a picker in the Space, a fixed run locally)."""
    summary = gr.Markdown(elem_id="review-summary", elem_classes="hs-note")
    progress = gr.Markdown(elem_id="review-progress")
    case = gr.State(None)
    with gr.Group(visible=False, elem_id="review-pair") as pair:
        prompt = gr.HTML(elem_id="review-prompt", padding=True)
        with gr.Row(equal_height=False):
            with gr.Column():
                gr.Markdown("## Answer A")
                left = gr.HTML(elem_id="review-a", padding=True)
            with gr.Column():
                gr.Markdown("## Answer B")
                right = gr.HTML(elem_id="review-b", padding=True)
        comment = gr.Textbox(label="Comment (optional): what made one better?", lines=2,
                             max_length=4000, elem_id="review-comment")
        with gr.Row():
            choices = {c: gr.Button(f"{label} ({KEYS[c]})", elem_id=f"review-choose-{c}",
                                    variant="primary" if c in "AB" else "secondary",
                                    interactive=False)
                       for c, label in LABELS.items()}
        revealed = gr.Markdown(elem_id="review-revealed")
        # a button as large as the choices it follows (a small grey one went unseen)
        nxt = gr.Button("Next case (n)", visible=False, elem_id="review-next",
                        variant="primary")
    gr.HTML("", js_on_load=KEYS_JS, elem_id="review-keys", visible="hidden")
    return Panel(run, case, progress, prompt, (left, right), comment, choices, nxt, revealed,
                 summary, pair)


# -- the Space's tab ---------------------------------------------------------------------------


REVIEWS_KEPT = 32  # runs' reviews kept open in memory (`Reviews`)


class Reviews:
    """The runs' reviews, each opened once and kept in memory while among the `kept` most
    recently opened: any visitor can open any run (`review_open` is an API too), so the memory
    they hold is bounded by this, not by the runs in the registry. A review let go loses
    nothing: every answer is saved as it is given, and the review opens again with them.

    One run has one review while anyone holds it: a review let go while a request still
    answers on it is the one the next request gets (`_held`), never a second one read from
    the dataset before that answer was written, whose next save (a reviewer's whole file)
    would have dropped it."""

    def __init__(self, state: SpaceState, kept: int = REVIEWS_KEPT) -> None:
        self.state = state
        self.secret = os.environ.get(SECRET_ENV) or secrets.token_hex(32)
        self.kept = kept
        self._open: OrderedDict[str, Review] = OrderedDict()
        self._held: weakref.WeakValueDictionary[str, Review] = weakref.WeakValueDictionary()
        self._lock = threading.Lock()

    def get(self, run_id: str) -> Review:
        with self._lock:
            if run_id not in self._open:
                held = self._held.get(run_id)  # let go, but a request still holds it
                self._open[run_id] = held if held is not None else open_registry_review(
                    self.state.store, run_id, self.secret, skill_folder=self._folder)
                self._held[run_id] = self._open[run_id]
                while len(self._open) > self.kept:
                    self._open.popitem(last=False)
            self._open.move_to_end(run_id)
            return self._open[run_id]

    def _folder(self, repo: str, sha: str) -> Any:
        return self.state.skill_folder(repo, sha)

    def reviewer(self, profile: gr.OAuthProfile | None) -> str | None:
        """Who is reviewing: the signed-in visitor; off a Space, the local user."""
        if profile is not None and getattr(profile, "username", None):
            return str(profile.username)
        if self.state.on_space:
            return None
        try:
            return self.state.store.results.producer()
        except HubskillsError:
            return None


def run_choices(state: SpaceState) -> list[tuple[str, str]]:
    """The registry's runs to pick from, newest first: "skill · model · run id"."""
    found: dict[str, str] = {}
    for entry in board_entries(state.board().select(include_unverified=True)):
        if entry.run_id and entry.run_id not in found:
            found[entry.run_id] = f"{entry.skill} · {entry.model} · run {entry.run_id}"
    return sorted(((label, run) for run, label in found.items()), key=lambda p: p[1],
                  reverse=True)


def build(state: SpaceState, also: Sequence[Any] = ()) -> Panel:
    """The *Review* tab; `also`: triggers besides the tab's own select that mean the visitor
    sees it (the workbench opened at `?tab=review`), which fill the run picker."""
    reviews, limit = Reviews(state), RateLimit()
    tab = gr.context.Context.block  # the tab this is built in (`ui.build_demo`)
    gr.Markdown("Which answer is better? Each case shows a run's two answers, with and "
                "without the skill, on random sides; the sides are named once you answer. "
                "Signed-in users answer once per case; everyone sees the summary.",
                elem_classes="hs-note")
    with gr.Row():
        # In the Space the tab's opening fills the picker (`runs_now`): a list in the page
        # would be in every visitor's page and session (10,000 runs: 1 MB), opened or not.
        run = gr.Dropdown([] if isinstance(tab, gr.Tab) else run_choices(state), value=None,
                          label="Run", scale=4, allow_custom_value=True, elem_id="review-run")
        if state.on_space and oauth_available():
            gr.LoginButton()
    listed = gr.Markdown(elem_id="review-runs", elem_classes="hs-note")
    built = panel(run)

    @friendly
    def runs_now() -> tuple[gr.Dropdown, str]:
        """The runs as the registry lists them now (the picker is empty in the page)."""
        choices = run_choices(state)
        return gr.Dropdown(choices=choices), (f"{counted(len(choices), 'run')} in the "
                                              "registry: pick one, or type a run id.")

    if isinstance(tab, gr.Tab):
        gr.on([tab.select, *also], runs_now, None, [run, listed], api_visibility="private",
              concurrency_limit=8, concurrency_id="review_open", show_progress="hidden")

    def resolve(run_id: str | None, profile: gr.OAuthProfile | None
                ) -> tuple[Review | None, str | None]:
        run_id = (run_id or "").strip()
        if not run_id:
            return None, None
        return reviews.get(run_id), reviews.reviewer(profile)

    wire(built, resolve, limit)
    return built


def people_line(state: SpaceState, repo: str | None) -> str:
    """A skill page's line: people's preference on its runs, apart from the measured lift."""
    from registry import review_summary

    repo = (repo or "").strip()
    if not repo:
        return ""
    runs = {e.run_id for e in board_entries(state.board().select(include_unverified=True))
            if e.repo == repo and e.run_id}
    try:
        summary = review_summary(state.store, runs)  # not memoised: answers are not results
    except HubskillsError as err:
        return error_markdown(err)
    if not summary.reviewed:
        return ("_People's review: no case reviewed yet (the [Review](work/?tab=review) tab)._")
    return (f"**People's review** (not part of the lift): {summary.headline} "
            f"({summary.apart}); {summary.interval}.")
