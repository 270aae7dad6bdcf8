"""`hubskills ask`: one model, one question; the answer, then tokens, cost and latency."""

from __future__ import annotations

import shlex
from typing import Any

import click
from rich.markup import escape

from registry.cli import _output as out
from registry.config import Settings
from registry.errors import HubskillsError
from registry.providers import ALIASES, Completion, ask, default_model_ref, normalize_ref
from registry.results.display import usd

# Room for a full short answer from an API model; a small local model that rambles is cut in
# seconds instead of writing 512 tokens of drift.
ASK_MAX_TOKENS = 256


#: The question a hint asks a model named without one.
EXAMPLE_QUESTION = "What is 2 + 2?"
_PROVIDERS = frozenset({"anthropic", "openai", "hf", "local", "embedded"})


def _is_model_ref(text: str) -> bool:
    """`sonnet`, `embedded/smollm2-135m`: a model reference, not a question."""
    provider, _, model_id = normalize_ref(text).partition("/")
    return not any(c.isspace() for c in text) and (
        text.lower() in ALIASES or (provider in _PROVIDERS and bool(model_id)))


class _Prompt(click.Argument):
    """Required; `hubskills ask "a question"` (the question read as the model) is an error
    whose hint asks the default model that question, and `hubskills ask MODEL` one whose hint
    asks MODEL an example question, not click's "Missing argument"."""

    def process_value(self, ctx: click.Context, value: Any) -> Any:
        if self.value_is_missing(value) and ctx.params.get("model"):
            given = ctx.params["model"]
            model, question = ((given, EXAMPLE_QUESTION) if _is_model_ref(given)
                               else (default_model_ref(Settings.from_env()), given))
            url = ctx.params.get("base_url")  # typed before the missing question: kept
            raise HubskillsError("name the model, then the question: hubskills ask MODEL PROMPT",
                                 hint=f"hubskills ask {shlex.quote(model)} "
                                      f"{shlex.quote(question)}"
                                      + (f" --base-url {shlex.quote(url)}" if url else ""))
        return super().process_value(ctx, value)


@click.command("ask")
@click.argument("model")
@click.argument("prompt", cls=_Prompt)
@click.option("--base-url", default=None, help="Server for local/<model> (or another endpoint).")
@click.option("--system", default=None, help="System prompt.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=ASK_MAX_TOKENS,
              show_default=True, help="Longest answer; a cut answer says so.")
@click.option("--temperature", type=click.FloatRange(0, 2), default=0.0, show_default=True)
@click.option("--seed", type=int, default=None, help="Sampling seed (where the API has one).")
@click.option("--json", "as_json", is_flag=True, help="Answer, usage and cost as JSON.")
def ask_command(model: str, prompt: str, base_url: str | None, system: str | None,
                max_tokens: int, temperature: float, seed: int | None, as_json: bool) -> None:
    """Ask one model one question: the answer, then tokens, cost and latency.

    The embedded model (135M parameters) answers short, common questions; it gets facts
    wrong and rambles on long answers: use it to try hubskills offline, not as an oracle.

    \b
    Examples:
      hubskills ask embedded/smollm2-135m "What is 2 + 2?"
      hubskills ask embedded/smollm2-135m "Name three primary colors."
      hubskills ask sonnet "Name a CUDA memory space." --system "Be brief."
      hubskills ask local/qwen3 "Hi" --base-url http://127.0.0.1:8080/v1
    """
    ref, completion = ask(model, prompt, Settings.from_env(), base_url=base_url, system=system,
                          max_tokens=max_tokens, temperature=temperature, seed=seed)
    if as_json:
        out.as_json({"model": ref, **_completion_dict(completion)})
        return
    out.result(escape(completion.text))
    out.info(f"[dim]{escape(_summary_line(completion, ref))}[/dim]")
    if completion.finish_reason == "length":
        out.info(f"[dim](cut at --max-tokens {max_tokens}: raise it for a longer answer)[/dim]")


def _completion_dict(completion: Completion) -> dict[str, object]:
    """A JSON-ready view of a completion."""
    usage = completion.usage
    return {"text": completion.text, "server_model": completion.model,
            "finish_reason": completion.finish_reason, "latency_s": completion.latency_s,
            "cost_usd": completion.cost_usd, "usage": usage.__dict__,
            "tool_calls": [call.__dict__ for call in completion.tool_calls]}


def _summary_line(completion: Completion, ref: str) -> str:
    """`24 in / 16 out tokens · $0 (local) · 0.41 s`."""
    usage = completion.usage
    return (f"{usage.input_tokens} in / {usage.output_tokens} out tokens · "
            f"{usd(completion.cost_usd, ref)} · {completion.latency_s:.2f} s")
