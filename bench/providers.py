"""Provider overhead benchmarks; prints ratios (run: `python bench/providers.py`).

1. Per-call overhead: `Model.complete` (hubskills' OpenAI-compatible provider: request mapping,
   the retry loop, usage mapping, pricing) vs a raw `openai.AsyncOpenAI` call to the same local
   fake server. Median wall time over N interleaved calls; goal: ratio <= 1.05.
2. Embedded throughput: tokens/s of `embedded/smollm2-135m` through the provider vs raw
   `llama_cpp.Llama.create_chat_completion` on the same loaded model and prompt; goal >= 0.95.

Calls alternate between the two sides (and which goes first) so load from other processes
hits both alike; the ratio printed is the median of the per-pair ratios, which shrugs off
bursts of load on a shared machine. Pass `--calls N` and `--generations N` to change the sample
sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fakes.openai_server import FakeOpenAIServer  # noqa: E402

from registry.config import Settings  # noqa: E402
from registry.providers import EMBEDDED_REF, Message, embedded_availability, resolve  # noqa: E402

PROMPT = [Message("system", "You are a concise assistant."),
          Message("user", "Name three CUDA memory spaces and say one thing about each.")]


def _settings() -> Settings:
    return Settings.from_env({"HUBSKILLS_HOME": tempfile.mkdtemp(prefix="hubskills-bench-")})


def _paired(mine: list[float], base: list[float]) -> tuple[float, float, float]:
    """Medians of both sides and the median of the per-pair ratios."""
    ratios = [a / b for a, b in zip(mine, base, strict=True)]
    return statistics.median(mine), statistics.median(base), statistics.median(ratios)


async def _overhead(calls: int) -> tuple[float, float, float]:
    import openai

    with FakeOpenAIServer() as server:
        model = resolve("local/fake-model", _settings(), base_url=server.url)
        raw = openai.AsyncOpenAI(base_url=server.url, api_key="sk-no-key", max_retries=0)
        wire = [{"role": m.role, "content": m.content} for m in PROMPT]

        async def ours() -> None:
            await model.complete(PROMPT, max_tokens=64, temperature=0.0)

        async def theirs() -> None:
            await raw.chat.completions.create(model="fake-model", messages=wire, max_tokens=64,
                                              temperature=0.0)

        for _ in range(20):  # warm both connection pools
            await ours()
            await theirs()
        mine, base = [], []
        for i in range(calls):
            pair = [(ours, mine), (theirs, base)]
            for call, sink in pair if i % 2 else reversed(pair):
                started = time.perf_counter()
                await call()
                sink.append(time.perf_counter() - started)
        await raw.close()
    return _paired(mine, base)


async def _throughput(generations: int) -> tuple[float, float, float]:
    from registry.providers import embedded

    model = resolve(EMBEDDED_REF, _settings())
    llama = await asyncio.to_thread(embedded.load)
    chat = [{"role": m.role, "content": m.content} for m in PROMPT]
    options = {"temperature": 0.0, "max_tokens": 64, "seed": 1}

    async def ours() -> tuple[int, float]:
        started = time.perf_counter()
        completion = await model.complete(PROMPT, **options)
        return completion.usage.output_tokens, time.perf_counter() - started

    async def theirs() -> tuple[int, float]:
        started = time.perf_counter()
        response = llama.create_chat_completion(chat, **options)
        return response["usage"]["completion_tokens"], time.perf_counter() - started

    await ours()
    await theirs()
    mine, base = [], []
    for i in range(generations):
        pair = [(ours, mine), (theirs, base)]
        for call, sink in pair if i % 2 else reversed(pair):
            tokens, seconds = await call()
            sink.append(tokens / seconds)
    return _paired(mine, base)


def main() -> None:
    """Run both benchmarks and print their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--generations", type=int, default=8)
    args = parser.parse_args()

    mine, base, ratio = asyncio.run(_overhead(args.calls))
    print(f"per-call latency, local fake server (median of {args.calls}): "
          f"hubskills {mine * 1000:.2f} ms, raw openai {base * 1000:.2f} ms")
    print(f"  overhead ratio hubskills/raw = {ratio:.3f}  (goal <= 1.05)")

    ok, why = embedded_availability()
    if not ok:
        print(f"embedded throughput: skipped ({why})")
        return
    mine, base, ratio = asyncio.run(_throughput(args.generations))
    print(f"embedded tokens/s (median of {args.generations}): hubskills {mine:.1f}, "
          f"raw llama-cpp-python {base:.1f}")
    print(f"  throughput ratio hubskills/raw = {ratio:.3f}  (goal >= 0.95)")


if __name__ == "__main__":
    main()
